"""The settings every runner shares, typed, and the checks of a run's model files: no TensorFlow here, so a command
line reports a mistake in a second, before TensorFlow starts.

`Runtime` is declared once, its fields with their flags' help texts; the runners' flags are generated from it and
build it (albert.ground.settings_flags); the library takes it, never the flags. `LoopConfig`: the training loop's own
settings (albert.train.loop), made from a Runtime by albert.train.setup.loop_config.
"""

import dataclasses
import os

from albert.ground.settings_flags import SHARED, Settings, at_least, setting
from albert.ground.validators import check_output_path
from albert.config import AlbertConfig
from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote
from albert.model.sizing import check_weights_fit
from albert.text.tokenization import load_sentencepiece
from albert.text.wordpiece import load_vocab
from albert.weights.formats import check_checkpoint_path

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

    strategy: str | None = setting(None, "Distribution (default: tpu with --use_tpu, mirrored with several GPUs, else "
                                   "one_device).", choices=STRATEGIES, module=SHARED)
    use_tpu: bool = setting(False, "Use a TPU (same as --strategy=tpu).", module=SHARED)
    tpu_name: str | None = setting(None, "Cloud TPU name.", module=SHARED)
    tpu_zone: str | None = setting(None, "Cloud TPU zone.", module=SHARED)
    gcp_project: str | None = setting(None, "Cloud project of the TPU.", module=SHARED)
    master: str | None = setting(None, "TPU master address.", module=SHARED)
    mixed_precision: str = setting("fp32", "Compute precision.", choices=PRECISIONS, module=SHARED)
    jit_compile: bool = setting(False, "XLA-compile the forward and backward pass.", module=SHARED)
    recompute: bool = setting(False, "Keep only each block application's input for the backward pass and recompute "
                              "its activations there: several times less activation memory for about 1/3 more "
                              "compute, the same numbers (python -m albert.info shows the memory). Under "
                              "--jit_compile on a CPU it saves nothing (XLA's buffers measured the same).",
                              module=SHARED)
    deterministic: bool = setting(False, "Deterministic ops (tf.config.experimental.enable_op_determinism): a rerun "
                                  "gives the same losses, bit for bit, on the same machine; somewhat slower.",
                                  module=SHARED)
    random_seed: int = setting(12345, "Seed of initialisation and input shuffling.", module=SHARED)
    log_every_steps: int = setting(0, "A progress line (loss, metrics, examples/s, tokens/s, MFU, ETA) every this "
                                   "many steps; 0: about every 30 s.", module=SHARED, check=_log_every)
    iterations_per_loop: int = setting(1000, "Steps per compiled loop call.", check=at_least(1))
    save_checkpoints_steps: int = setting(1000, "Checkpoint (and evaluate) every this many steps.",
                                          check=at_least(1))
    keep_checkpoint_max: int = setting(5, "Checkpoints kept.", check=at_least(1))
    gradient_accumulation_steps: int = setting(1, "Micro-batches per update (global batch = their sum).",
                                               check=at_least(1))


def check_model_files(albert_config_file: str, max_seq_length: int, spm_model_file: str | None = None,
                      vocab_file: str | None = None, init_checkpoint: str | None = None) -> AlbertConfig:
    """A runner's model files, before any work: the config parses and fits `max_seq_length`, the tokenizer file
    exists, loads and fits the config's vocab_size, and `init_checkpoint` exists and is whole. Returns the config."""
    for name, path in (("albert_config_file", albert_config_file), ("spm_model_file", spm_model_file),
                       ("vocab_file", vocab_file)):
        if path and not is_remote(path) and not os.path.isfile(path):
            raise AlbertError(f"{path}: --{name} " + ("is a directory; pass the file" if os.path.isdir(path) else
                                                      "not found"))
    config = AlbertConfig.from_json_file(albert_config_file)
    check_weights_fit(config, albert_config_file)
    if max_seq_length > config.max_position_embeddings:
        raise AlbertError(f"--max_seq_length {max_seq_length} exceeds max_position_embeddings "
                          f"({config.max_position_embeddings}) of {albert_config_file}")
    if spm_model_file and not is_remote(spm_model_file):
        pieces, path, name = load_sentencepiece(spm_model_file).get_piece_size(), spm_model_file, "spm_model_file"
    elif vocab_file and not is_remote(vocab_file):
        pieces, path, name = len(load_vocab(vocab_file)), vocab_file, "vocab_file"
    else:
        pieces = None
    if pieces is not None and pieces > config.vocab_size:
        raise AlbertError(f"{path}: --{name} has {pieces} pieces but vocab_size is {config.vocab_size} in "
                          f"{albert_config_file}; pass the tokenizer of this model")
    if init_checkpoint:
        check_checkpoint_path(init_checkpoint, "--init_checkpoint")
    return config


def check_export_dir(export_dir: str | None, inputs: tuple):
    """--export_dir is replaced whole: it must not be, or hold, an input of the run (its output_dir included)."""
    if export_dir:
        check_output_path("export_dir", export_dir.rstrip("/"), inputs, directory=True)
