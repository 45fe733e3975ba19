"""What each command line runs, as library calls a test can make without a subprocess: pretraining, and GLUE /
own-file classification, NER, SQuAD and RACE fine-tuning (train, evaluate every checkpoint, keep the best, predict,
export). Each job takes its settings (a dataclass of albert.jobs.settings, whose fields the command line's flags are
generated from and build: albert.ground.settings_flags) and the shared `Runtime`."""
