"""A door: this module moved to `albert.tasks.classification.glue`; `from albert.tasks.glue import ...` keeps working,
the same module under its old name."""

import sys

from albert.tasks.classification import glue

sys.modules[__name__] = glue
