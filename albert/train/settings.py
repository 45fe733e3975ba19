"""The settings every runner shares, typed, and the checks of a run's model files: no TensorFlow here, so a command
line reports a mistake in a second, before TensorFlow starts.

`Runtime` is built once from the flags (`albert.ground.cli.settings(Runtime, FLAGS)`); the library takes it, never the
flags. `LoopConfig`: the training loop's own settings (albert.train.loop), made from a Runtime by
albert.train.setup.loop_config.
"""

import dataclasses
import os

from albert.ground.cli import check_at_least, check_output_path
from albert.config import AlbertConfig
from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote
from albert.model.sizing import check_weights_fit
from albert.text.tokenization import load_sentencepiece
from albert.text.wordpiece import load_vocab
from albert.weights.formats import check_checkpoint_path

PRECISIONS = ("fp32", "bf16", "fp16")


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
class Runtime:
    """How a run uses the machine and paces itself: the same for pretraining, GLUE, SQuAD and RACE."""

    strategy: str | None = None  # one_device | mirrored | multi_worker | tpu; None: picked (albert.train.distribute)
    use_tpu: bool = False
    tpu_name: str | None = None
    tpu_zone: str | None = None
    gcp_project: str | None = None
    master: str | None = None
    mixed_precision: str = "fp32"  # fp32 | bf16 | fp16 (dynamic loss scaling)
    jit_compile: bool = False  # XLA for the forward and backward pass
    recompute: bool = False  # activations recomputed in the backward pass (albert.model.recompute)
    deterministic: bool = False  # tf.config.experimental.enable_op_determinism
    random_seed: int = 12345  # initialisation and input shuffling
    log_every_steps: int = 0  # a progress line every this many steps; 0: about every 30 s
    iterations_per_loop: int = 1000  # steps per call of the compiled training loop
    # a checkpoint (and an evaluation) every this many steps; each runner's flag has the original's default
    save_checkpoints_steps: int = dataclasses.field(default=1000, metadata={"runner_default": True})
    keep_checkpoint_max: int = 5
    gradient_accumulation_steps: int = 1  # micro-batches per update

    def __post_init__(self):
        if self.mixed_precision not in PRECISIONS:
            raise AlbertError(f"--mixed_precision {self.mixed_precision!r} is unknown; use fp32, bf16 or fp16")
        if self.log_every_steps < 0:
            raise AlbertError(f"--log_every_steps must be at least 0 (0: about every 30 s), got "
                              f"{self.log_every_steps}")
        for name in ("iterations_per_loop", "save_checkpoints_steps", "keep_checkpoint_max",
                     "gradient_accumulation_steps"):
            check_at_least(name, getattr(self, name), 1)


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
