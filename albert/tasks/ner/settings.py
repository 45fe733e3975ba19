"""run_ner.py's settings (`NerRun`): its flags are generated from these fields.
No TensorFlow here: the command line checks its values before TensorFlow starts."""

import dataclasses
from typing import ClassVar

from albert.ground.settings_flags import at_least, finite, probability, setting
from albert.runner.settings import (EPOCHS_HELP, Evaluation, FineTuningExport, OPTIMIZERS, TRAIN_STEP_HELP,
                                    WordPieceOption, check_one_length, runner_settings, steps_unless_epochs)


@dataclasses.dataclass(frozen=True)
@runner_settings
class NerRun(Evaluation, WordPieceOption, FineTuningExport):
    """run_ner.py's settings."""

    COMMAND: ClassVar[str] = "run_ner.py"
    model_class: ClassVar[str] = "AlbertTokenClassifier"  # the task model its checkpoints hold

    train_file: str | None = setting(None, "Training sentences: CoNLL columns (the word first, the tag last; blank "
                                     "lines between sentences, -DOCSTART- lines between documents) or JSON Lines "
                                     "({\"tokens\": [...], \"tags\": [...]}); the tag set is its distinct tags.",
                                     group="inputs")
    dev_file: str | None = setting(None, "Dev sentences (same format), evaluated at every checkpoint.", group="inputs")
    test_file: str | None = setting(None, "Test sentences (tags optional), predicted into test_predictions.txt.",
                                    group="inputs")
    file_format: str | None = setting(None, "conll or jsonl, when the extension does not say it (.jsonl / .json: "
                                      "JSON Lines; anything else CoNLL).", choices=("conll", "jsonl"), group="inputs")
    tag_scheme: str = setting("IOB2", "The tags' scheme, used as given: IOB1, IOB2 or IOBES.",
                              choices=("IOB1", "IOB2", "IOBES"), group="inputs")
    strict: bool = setting(False, "Seqeval's strict mode instead of conlleval's rules: only the entities the "
                           "scheme allows are scored.", group="evaluation")
    label_all_tokens: bool = setting(False, "Label every piece of a word (B-X's later pieces as I-X), not only "
                                     "its first.", group="training")
    encoding: str = setting("utf-8", "The text encoding of the files (e.g. latin-1).", group="inputs")
    doc_stride: int | None = setting(None, "Window stride in pieces (default: --max_seq_length / 2). The pieces "
                                     "between the starts of a long sentence's windows, at most --max_seq_length - "
                                     "2: 64 at the default length 128.",
                                     check=at_least(1), group="inputs", derived=lambda s: s.max_seq_length // 2)
    train_step: int | None = setting(None, TRAIN_STEP_HELP, check=at_least(1), group="training",
                                     derived=steps_unless_epochs)
    num_train_epochs: float | None = setting(None, EPOCHS_HELP.format(what="windows (a long sentence makes "
                                                                      "several)"), check=finite, group="training")
    warmup_proportion: float = setting(0.1, "Fraction of the training steps spent warming up (as run_squad.py's), "
                                       "unless --warmup_step is given: that wins.", check=probability,
                                       group="training")
    warmup_step: int | None = setting(None, "Warmup steps, when given: this wins over --warmup_proportion (default: "
                                      "none, --warmup_proportion of the steps).", check=at_least(0), group="training")
    optimizer: str = setting("adamw", "Optimizer.", choices=OPTIMIZERS, group="training")
    dropout_prob: float = setting(0.1, "Dropout before the token head.", check=probability, group="training")

    def __post_init__(self):
        check_one_length(self)
        super().__post_init__()
