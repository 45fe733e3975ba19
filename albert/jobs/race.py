"""A door: this module moved to `albert.tasks.race.job`; `albert.jobs.race.run(settings, runtime)` keeps working, the
same module under its old name."""

import sys

from albert.tasks.race import job

sys.modules[__name__] = job
