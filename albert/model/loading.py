"""A door: this module moved to `albert.tasks.loading`; `import albert.model.loading` (before `keras.models.load_model`)
keeps working, the same module under its old name."""

import sys

from albert.tasks import loading

sys.modules[__name__] = loading
