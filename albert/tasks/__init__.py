"""Per-task examples, features, losses and metrics: pretraining, GLUE, a user's own classification files, token
classification (CoNLL / JSON Lines, entity scores), SQuAD, RACE."""
