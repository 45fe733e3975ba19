"""A door: this module moved to `albert.tasks.squad.job`; `albert.jobs.squad.run(settings, runtime)` keeps working, the
same module under its old name."""

import sys

from albert.tasks.squad import job

sys.modules[__name__] = job
