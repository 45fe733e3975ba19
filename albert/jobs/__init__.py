"""What each command line runs, as library calls a test can make without a subprocess: pretraining, GLUE, SQuAD and
RACE fine-tuning (train, evaluate every checkpoint, keep the best, predict, export). Each job takes its settings
(a dataclass, built from the command line's flags by `albert.ground.cli.settings`) and the shared `Runtime`."""
