"""A door: this module moved to `albert.tasks.classification.job`; `albert.jobs.glue.run(settings, runtime)` keeps
working, the same module under its old name."""

import sys

from albert.tasks.classification import job

sys.modules[__name__] = job
