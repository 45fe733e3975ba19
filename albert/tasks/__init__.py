"""Per-task examples, features, losses and metrics: pretraining, GLUE, SQuAD, RACE."""
