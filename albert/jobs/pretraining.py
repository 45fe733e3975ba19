"""A door: this module moved to `albert.tasks.pretraining.job`; `albert.jobs.pretraining.run(settings, runtime)` keeps
working, the same module under its old name."""

import sys

from albert.tasks.pretraining import job

sys.modules[__name__] = job
