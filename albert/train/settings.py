"""The settings every runner shares, typed: no TensorFlow here, so a command line reports a mistake in a second,
before TensorFlow starts (the runners' checks of their model files: albert.runner.preflight).

`Runtime` is declared once, its fields with their flags' help texts; the runners' flags are generated from it and
build it (albert.ground.settings_flags); the library takes it, never the flags. `LoopConfig`: the training loop's own
settings (albert.train.loop), made from a Runtime by albert.train.setup.loop_config.
"""

import dataclasses

from albert.ground.settings_flags import SHARED, Settings, at_least, setting
from albert.ground.errors import AlbertError

PRECISIONS = ("fp32", "bf16", "fp16")
STRATEGIES = ("one_device", "mirrored", "multi_worker", "tpu")


def _log_every(name: str, value: int):
    if value < 0:
        raise AlbertError(f"--{name} must be at least 0 (0: about every 30 s), got {value}")


@dataclasses.dataclass
class LoopConfig:
    """The training loop's settings (albert.train.loop.Trainer)."""

    output_dir: str
    num_train_steps: int
    global_batch_size: int
    steps_per_loop: int = 1000
    save_checkpoints_steps: int = 1000
    keep_checkpoint_max: int = 5
    gradient_accumulation_steps: int = 1
    jit_compile: bool = False
    recompute: bool = False  # activation recomputation in every encoder of the model (albert.model.recompute)
    # Progress (albert.train.progress): a line every `log_every_steps` steps; 0 = about every 30 s (in one process; a
    # multi-worker run, whose workers must call the loop alike, logs every `steps_per_loop`). Tokens/s and MFU need
    # these two.
    log_every_steps: int = 0
    seq_length: int = 0
    flops_per_example: float = 0.0  # model FLOPs of one training example (forward + backward), albert.model.sizing
    # Batches cut to the smallest of these lengths that holds their longest example (albert.data.buckets); None:
    # as the data gives them (padded to max_seq_length, or grouped by length already).
    length_boundaries: tuple | None = None


@dataclasses.dataclass(frozen=True)
class Runtime(Settings):
    """How a run uses the machine and paces itself: the same for pretraining, GLUE, SQuAD and RACE. The cadence
    fields (loop, checkpoints, accumulation) are listed with each runner's own flags, with its defaults."""

    strategy: str | None = setting(None, "The tf.distribute strategy (default: tpu with --use_tpu, mirrored with "
                                   "several GPUs, else one_device).", choices=STRATEGIES, module=SHARED, group="hardware")
    use_tpu: bool = setting(False, "Use a TPU (same as --strategy=tpu).", module=SHARED, group="hardware")
    tpu_name: str | None = setting(None, "Cloud TPU name.", module=SHARED, group="hardware")
    tpu_zone: str | None = setting(None, "Cloud TPU zone.", module=SHARED, group="hardware")
    gcp_project: str | None = setting(None, "Cloud project of the TPU.", module=SHARED, group="hardware")
    master: str | None = setting(None, "TPU master address.", module=SHARED, group="hardware")
    mixed_precision: str = setting("fp32", "Compute precision.", choices=PRECISIONS, module=SHARED, group="hardware")
    jit_compile: bool = setting(False, "XLA-compile the forward and backward pass.", module=SHARED, group="hardware")
    recompute: bool = setting(False, "Recompute activations in the backward pass. Keep only each block "
                              "application's input for the backward pass and recompute its activations there: "
                              "several times less activation memory for about 1/3 more compute, the same numbers "
                              "(python -m albert.info shows the memory). Under --jit_compile on a CPU it saves "
                              "nothing (XLA's buffers measured the same).",
                              module=SHARED, group="hardware")
    deterministic: bool = setting(False, "Deterministic ops (tf.config.experimental.enable_op_determinism): a rerun "
                                  "gives the same losses, bit for bit, on the same machine; somewhat slower.",
                                  module=SHARED, group="hardware")
    random_seed: int = setting(12345, "Seed of initialisation and input shuffling.", module=SHARED, group="training")
    log_every_steps: int = setting(0, "A progress line (loss, metrics, examples/s, tokens/s, MFU, ETA) every this "
                                   "many steps; 0: about every 30 s.", module=SHARED, check=_log_every,
                                   group="training")
    iterations_per_loop: int = setting(1000, "Steps per compiled loop call.", check=at_least(1), group="hardware")
    save_checkpoints_steps: int = setting(1000, "Checkpoint (and evaluate) every this many steps.",
                                          check=at_least(1), group="training")
    keep_checkpoint_max: int = setting(5, "Checkpoints kept.", check=at_least(1), group="training")
    gradient_accumulation_steps: int = setting(1, "Micro-batches per update (global batch = their sum).",
                                               check=at_least(1), group="training")
