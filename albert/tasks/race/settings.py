"""run_race.py's settings (`RaceRun`): its flags are generated from these fields.
No TensorFlow here: the command line checks its values before TensorFlow starts."""

import dataclasses
from typing import ClassVar

from albert.ground.settings_flags import at_least, finite, setting
from albert.runner.settings import CONFIG_HELP, CONFIG_WHY, FineTuningExport, INIT_CHECKPOINT_HELP
from albert.tasks.race.rows import default_max_qa_length


@dataclasses.dataclass(frozen=True, kw_only=True)  # keyword-only: --data_dir, optional, comes first
class RaceRun(FineTuningExport):
    """run_race.py's settings."""

    COMMAND: ClassVar[str] = "run_race.py"
    model_class: ClassVar[str] = "AlbertMultipleChoice"  # the task model its checkpoints hold

    data_dir: str | None = setting(None, "Parent of RACE/{train,dev,test}/{middle,high}/ (official files or "
                                   "all.txt); required to train, evaluate or predict (not to export a run).",
                                   group="inputs")
    output_dir: str = setting(help="Checkpoints, eval results and predictions.", group="inputs")
    albert_config_file: str = setting(help=CONFIG_HELP, group="model", why=CONFIG_WHY)
    spm_model_file: str | None = setting(None, "SentencePiece model.", group="model")
    vocab_file: str | None = setting(None, "WordPiece vocabulary (when --spm_model_file is empty).", group="model")
    train_file: str | None = setting(None, "Train feature TFRecord (default output_dir/train.tf_record; built once).",
                                     group="inputs")
    eval_file: str | None = setting(None, "Eval feature TFRecord (default output_dir/eval.tf_record; built once).",
                                    group="inputs")
    predict_file: str | None = setting(None, "Predict feature TFRecord (default output_dir/predict.tf_record).",
                                       group="inputs")
    init_checkpoint: str | None = setting(None, INIT_CHECKPOINT_HELP, group="model")
    do_lower_case: bool = setting(True, "Lower-case the text.", group="model")
    dropout_prob: float = setting(0.1, "Dropout on the pooled output before the scoring layer.", group="training")
    max_seq_length: int = setting(512, "Tokens per (article, question+option) row.", check=at_least(1), group="inputs")
    max_qa_length: int | None = setting(None, "Question+option tokens (default 128 or half the length). The last "
                                        "ones are kept: by default 128, or --max_seq_length / 2 below 256.",
                                        check=at_least(1), group="inputs",
                                        derived=lambda s: default_max_qa_length(s.max_seq_length))
    high_only: bool = setting(False, "RACE-H only.", group="inputs")
    middle_only: bool = setting(False, "RACE-M only.", group="inputs")
    do_train: bool = setting(True, "Train.", group="training")
    do_eval: bool = setting(True, "Evaluate every checkpoint on dev; keep model.ckpt-best by accuracy.",
                            group="evaluation")
    do_predict: bool = setting(False, "Evaluate model.ckpt-best on test and write predictions.json.",
                               group="evaluation")
    train_batch_size: int = setting(32, "Global training batch.", check=at_least(1), group="training")
    eval_batch_size: int = setting(8, "Eval batch.", check=at_least(1), group="evaluation")
    predict_batch_size: int = setting(8, "Predict batch.", check=at_least(1), group="evaluation")
    learning_rate: float = setting(1e-5, "Peak learning rate.", check=finite, group="training")
    train_step: int = setting(12000, "Training steps.", check=at_least(1), group="training")
    warmup_step: int = setting(1000, "Warmup steps.", group="training")
    export_dir: str | None = setting(None, "Export model.ckpt-best here for serving: a SavedModel over packed inputs "
                                     "([batch, 4, max_seq_length] input_ids, input_mask, segment_ids -> logits "
                                     "[batch, 4]) with its LiteRT model.tflite.", group="export")
