"""run_race.py's settings (`RaceRun`): its flags are generated from these fields.
No TensorFlow here: the command line checks its values before TensorFlow starts."""

import dataclasses
from typing import ClassVar

from albert.ground.settings_flags import at_least, setting
from albert.runner.settings import Evaluation, FineTuningExport, WordPieceOption, runner_settings
from albert.tasks.race.rows import default_max_qa_length


@dataclasses.dataclass(frozen=True, kw_only=True)  # keyword-only: --data_dir, optional, comes first
@runner_settings
class RaceRun(Evaluation, WordPieceOption, FineTuningExport):
    """run_race.py's settings."""

    COMMAND: ClassVar[str] = "run_race.py"
    model_class: ClassVar[str] = "AlbertMultipleChoice"  # the task model its checkpoints hold

    data_dir: str | None = setting(None, "Parent of RACE/{train,dev,test}/{middle,high}/ (official files or "
                                   "all.txt); required to train, evaluate or predict (not to export a run).",
                                   group="inputs")
    train_file: str | None = setting(None, "Train feature TFRecord (default output_dir/train.tf_record; built once).",
                                     group="inputs")
    eval_file: str | None = setting(None, "Eval feature TFRecord (default output_dir/eval.tf_record; built once).",
                                    group="inputs")
    predict_file: str | None = setting(None, "Predict feature TFRecord (default output_dir/predict.tf_record).",
                                       group="inputs")
    dropout_prob: float = setting(0.1, "Dropout on the pooled output before the scoring layer.", group="training")
    max_qa_length: int | None = setting(None, "Question+option tokens (default 128 or half the length). The last "
                                        "ones are kept: by default 128, or --max_seq_length / 2 below 256.",
                                        check=at_least(1), group="inputs",
                                        derived=lambda s: default_max_qa_length(s.max_seq_length))
    high_only: bool = setting(False, "RACE-H only.", group="inputs")
    middle_only: bool = setting(False, "RACE-M only.", group="inputs")
    train_step: int = setting(12000, "Training steps.", check=at_least(1), group="training")
    warmup_step: int = setting(1000, "Warmup steps.", group="training")
