"""run_pretraining.py's settings (`PretrainingRun`): its flags are generated from these fields.
No TensorFlow here: the command line checks its values before TensorFlow starts."""

import dataclasses
from typing import ClassVar

from albert.ground.settings_flags import at_least, setting
from albert.runner.settings import Evaluation, OPTIMIZERS, RunnerSettings, runner_settings


@dataclasses.dataclass(frozen=True)
@runner_settings
class PretrainingRun(Evaluation, RunnerSettings):
    """run_pretraining.py's settings."""

    COMMAND: ClassVar[str] = "run_pretraining.py"

    input_file: str = setting(help="Pretraining TFRecords (create_pretraining_data.py's), comma-separated globs.",
                              group="inputs")
    eval_file: str | None = setting(None, "TFRecords to evaluate on (default: --input_file, as the original).",
                                    group="inputs")
    max_predictions_per_seq: int = setting(20, "Must match the data (doubled for --do_permutation data).",
                                           check=at_least(1), group="inputs")
    optimizer: str = setting("lamb", "Optimizer.", choices=OPTIMIZERS, group="training")
    poly_power: float = setting(1.0, "Power of the polynomial decay.", group="training")
    num_train_steps: int = setting(125000, "Training steps.", check=at_least(1), group="training")
    num_warmup_steps: int = setting(3125, "Linear warmup steps.", check=at_least(0), group="training")
    start_warmup_step: int = setting(0, "Step at which the warmup starts.", group="training")
    max_eval_steps: int = setting(100, "Eval batches per evaluation.", check=at_least(1), group="evaluation")
    init_from_group0: bool = setting(False, "Initialise all layer groups from the checkpoint's group 0.",
                                     group="model")
