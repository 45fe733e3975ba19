"""What every runner shares: the settings fields and arithmetic of every runner (`settings`), the checks before
TensorFlow starts (`preflight`) and the files a run writes beside its checkpoints (`outputs`). Each task's job
(albert.tasks.<task>.job) is built on them."""
