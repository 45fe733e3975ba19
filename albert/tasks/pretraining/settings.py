"""run_pretraining.py's settings (`PretrainingRun`): its flags are generated from these fields.
No TensorFlow here: the command line checks its values before TensorFlow starts."""

import dataclasses

from albert.ground.settings_flags import Settings, at_least, finite, setting
from albert.runner.settings import CONFIG_HELP, CONFIG_WHY, INIT_CHECKPOINT_HELP, OPTIMIZERS


@dataclasses.dataclass(frozen=True)
class PretrainingRun(Settings):
    """run_pretraining.py's settings."""

    albert_config_file: str = setting(help=CONFIG_HELP, group="model", why=CONFIG_WHY)
    input_file: str = setting(help="Pretraining TFRecords (create_pretraining_data.py's), comma-separated globs.",
                              group="inputs")
    output_dir: str = setting(help="Checkpoints, summaries and eval results.", group="inputs")
    eval_file: str | None = setting(None, "TFRecords to evaluate on (default: --input_file, as the original).",
                                    group="inputs")
    init_checkpoint: str | None = setting(None, INIT_CHECKPOINT_HELP, group="model")
    max_seq_length: int = setting(512, "Must match the data.", check=at_least(1), group="inputs")
    max_predictions_per_seq: int = setting(20, "Must match the data (doubled for --do_permutation data).",
                                           check=at_least(1), group="inputs")
    do_train: bool = setting(True, "Train.", group="training")
    do_eval: bool = setting(False, "Evaluate every checkpoint; keep model.ckpt-best by masked-LM accuracy.",
                            group="evaluation")
    train_batch_size: int = setting(4096, "Global batch size (over all replicas and accumulation steps).",
                                    check=at_least(1), group="training")
    eval_batch_size: int = setting(64, "Global eval batch size.", check=at_least(1), group="evaluation")
    optimizer: str = setting("lamb", "Optimizer.", choices=OPTIMIZERS, group="training")
    learning_rate: float = setting(0.00176, "Peak learning rate.", check=finite, group="training")
    poly_power: float = setting(1.0, "Power of the polynomial decay.", group="training")
    num_train_steps: int = setting(125000, "Training steps.", check=at_least(1), group="training")
    num_warmup_steps: int = setting(3125, "Linear warmup steps.", check=at_least(0), group="training")
    start_warmup_step: int = setting(0, "Step at which the warmup starts.", group="training")
    max_eval_steps: int = setting(100, "Eval batches per evaluation.", check=at_least(1), group="evaluation")
    init_from_group0: bool = setting(False, "Initialise all layer groups from the checkpoint's group 0.",
                                     group="model")
