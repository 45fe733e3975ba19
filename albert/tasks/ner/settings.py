"""run_ner.py's settings (`NerRun`): its flags are generated from these fields.
No TensorFlow here: the command line checks its values before TensorFlow starts."""

import dataclasses
from typing import ClassVar

from albert.ground.settings_flags import at_least, finite, probability, setting
from albert.runner.settings import (CONFIG_HELP, CONFIG_WHY, EPOCHS_HELP, FineTuningExport, INIT_CHECKPOINT_HELP,
                                    OPTIMIZERS, TRAIN_STEP_HELP, check_one_length, steps_unless_epochs)


@dataclasses.dataclass(frozen=True)
class NerRun(FineTuningExport):
    """run_ner.py's settings."""

    COMMAND: ClassVar[str] = "run_ner.py"
    model_class: ClassVar[str] = "AlbertTokenClassifier"  # the task model its checkpoints hold

    output_dir: str = setting(help="Checkpoints, eval results and predictions.", group="inputs")
    albert_config_file: str = setting(help=CONFIG_HELP, group="model", why=CONFIG_WHY)
    spm_model_file: str | None = setting(None, "SentencePiece model.", group="model")
    vocab_file: str | None = setting(None, "WordPiece vocabulary (when --spm_model_file is empty).", group="model")
    init_checkpoint: str | None = setting(None, INIT_CHECKPOINT_HELP, group="model")
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
    do_lower_case: bool = setting(True, "Lower-case the text (the released SentencePiece models do).", group="model")
    max_seq_length: int = setting(128, "Pieces per window, [CLS] and [SEP] included (at most "
                                  "max_position_embeddings).", check=at_least(3), group="inputs")
    doc_stride: int | None = setting(None, "Window stride in pieces (default: --max_seq_length / 2). The pieces "
                                     "between the starts of a long sentence's windows, at most --max_seq_length - "
                                     "2: 64 at the default length 128.",
                                     check=at_least(1), group="inputs", derived=lambda s: s.max_seq_length // 2)
    do_train: bool = setting(False, "Train.", group="training")
    do_eval: bool = setting(False, "Evaluate every checkpoint on --dev_file; keep model.ckpt-best by entity F1.",
                            group="evaluation")
    do_predict: bool = setting(False, "Tag --test_file with model.ckpt-best.", group="evaluation")
    train_batch_size: int = setting(32, "Global training batch (windows).", check=at_least(1), group="training")
    eval_batch_size: int = setting(8, "Eval batch.", check=at_least(1), group="evaluation")
    predict_batch_size: int = setting(8, "Predict batch.", check=at_least(1), group="evaluation")
    learning_rate: float = setting(5e-5, "Peak learning rate.", check=finite, group="training")
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
    export_dir: str | None = setting(None, "Export model.ckpt-best here for serving: a SavedModel on raw text (a "
                                     "batch of strings, words split on whitespace -> one tag per word), with "
                                     "model.tflite "
                                     "(LiteRT: packed ids -> logits) and, with --onnx_export, model.onnx.",
                                     group="export")

    def __post_init__(self):
        check_one_length(self)
        super().__post_init__()
