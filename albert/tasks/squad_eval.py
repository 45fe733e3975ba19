"""A door: the official SQuAD scoring moved to `albert.tasks.squad.evaluate`; `python -m albert.tasks.squad_eval`
keeps working, with the same arguments."""

import sys

from albert.tasks.squad import evaluate

if __name__ == "__main__":
    sys.exit(evaluate.main())
else:
    sys.modules[__name__] = evaluate
