"""What the runners' settings share: the help texts of the model flags, the step and warm-up arithmetic, the export and
length options of every fine-tuning runner. Each runner's own settings class is its task's
(albert.tasks.<task>.settings); flags are generated from their fields (albert.ground.settings_flags), with the
original's names, defaults and help texts. No TensorFlow here: a command line checks its values before TensorFlow
starts."""

import dataclasses
from typing import ClassVar

from albert.export.options import OnnxOption, TfliteOptions
from albert.ground.errors import AlbertError
from albert.ground.settings_flags import SHARED, Settings, setting

INIT_CHECKPOINT_HELP = ("Warm start from any model reference: a checkpoint (original TF1 or ours), a model directory "
                        "(release layout, Hugging Face, keras-hub, TF1 Hub module, Model Garden SavedModel), an "
                        "archive, a model name (albert_base_v2), a Hugging Face id, a TF Hub handle or a URL "
                        "(downloaded once into the cache: docs/weights.md); a model directory also supplies "
                        "--albert_config_file and --spm_model_file when they are not passed.")
CONFIG_HELP = ("Model config JSON, unless --init_checkpoint has one: a model directory holds its config "
               "(albert_config.json, or config.json).")
CONFIG_WHY = ("pass it, or --init_checkpoint naming a model directory, or an --output_dir of a finished run (its "
              "albert_config.json)")
# The flags of a user's own train / dev / test files (run_classifier.py's, run_ner.py's).
SPLIT_FLAGS = {"train": "--train_file", "dev": "--dev_file", "test": "--test_file"}
OPTIMIZERS = ("adamw", "lamb")
TRAIN_STEP = 1000  # --train_step of run_classifier.py and run_ner.py when neither it nor --num_train_epochs is given
EPOCHS_HELP = ("Epochs over your --train_file, instead of --train_step. The steps are its {what} x epochs / "
               "--train_batch_size, printed when training starts.")
TRAIN_STEP_HELP = (f"Training steps (default {TRAIN_STEP}, or from --num_train_epochs). The learning rate decays to "
                   "0 over them.")


def steps_unless_epochs(settings):
    """--train_step's derived default: TRAIN_STEP, or none yet when --num_train_epochs gives the length (the steps
    are counted from the train file: epoch_steps)."""
    return None if settings.num_train_epochs is not None else TRAIN_STEP


def check_one_length(settings):
    """A training length is given as steps or as epochs, not both (before the derived default fills --train_step);
    epochs are counted over a user's own train file (a GLUE task's examples are read once TensorFlow runs)."""
    if settings.train_step is not None and settings.num_train_epochs is not None:
        raise AlbertError(f"--train_step {settings.train_step} and --num_train_epochs {settings.num_train_epochs:g} "
                          "both set the training length: pass one")
    if settings.num_train_epochs is not None and getattr(settings, "task_name", None):
        raise AlbertError("--num_train_epochs counts the rows of your own --train_file; for a GLUE task pass "
                          "--train_step")


def with_epoch_steps(settings, count, what: str) -> tuple:
    """(settings, line): with --num_train_epochs and --do_train, the settings with --train_step counted from the
    train file (`count()`: its examples, or windows) and the line that says so; else the settings as they are (no
    training: --train_step's default) and no line."""
    if settings.num_train_epochs is None:
        return settings, None
    if not settings.do_train:
        return dataclasses.replace(settings, train_step=TRAIN_STEP, num_train_epochs=None), None
    steps, line = epoch_steps(settings.num_train_epochs, count(), settings.train_batch_size, what)
    return dataclasses.replace(settings, train_step=steps, num_train_epochs=None), line


def epoch_steps(epochs: float, examples: int, batch_size: int, what: str = "examples") -> tuple:
    """(steps, the line that says so) of `epochs` over `examples` (features, windows) in batches of `batch_size`:
    int(examples / batch_size * epochs), as the original's run_squad.py counts them."""
    steps = int(examples / batch_size * epochs)
    if steps < 1:
        raise AlbertError(f"--num_train_epochs {epochs:g} over {examples:,} {what} at --train_batch_size {batch_size} "
                          "is less than one step: train more epochs, or pass a smaller --train_batch_size")
    return steps, f"training {epochs:g} epochs of {examples:,} {what}: {steps:,} steps of {batch_size}"


def warmup_steps(settings, train_steps: int) -> int:
    """The linear warmup of a run of `train_steps` steps: --num_warmup_steps (run_pretraining.py) or --warmup_step
    as given, else --warmup_proportion of the steps, rounded down (run_squad.py, as the original; run_ner.py unless
    --warmup_step is given)."""
    given = getattr(settings, "num_warmup_steps", getattr(settings, "warmup_step", None))
    return given if given is not None else int(train_steps * settings.warmup_proportion)


def long_warmup(settings, train_steps: int) -> str | None:
    """The line that says a run's warmup is longer than half of its `train_steps` training steps (the learning rate
    stays below --learning_rate for most of the run, or all of it), naming the flag that set it and the fix; None
    for a shorter warmup. The original's defaults stay (RACE's --warmup_step 1000 is right for its 12000 steps):
    a run shorter than its warmup is said, not changed."""
    warmup = warmup_steps(settings, train_steps) + getattr(settings, "start_warmup_step", 0)
    if 2 * warmup <= train_steps:
        return None
    if hasattr(settings, "num_warmup_steps") or getattr(settings, "warmup_step", None) is not None:
        flag = "--num_warmup_steps" if hasattr(settings, "num_warmup_steps") else "--warmup_step"
        value, fix = warmup_steps(settings, train_steps), f"{train_steps // 10:,}"
    else:
        flag, value, fix = "--warmup_proportion", f"{settings.warmup_proportion:g}", "0.1"
    during = "the whole run" if warmup >= train_steps else "most of the run"
    return (f"warning: {flag} {value} warms the learning rate up over {warmup:,} steps, more than half of this run's "
            f"{train_steps:,} training steps: it stays below --learning_rate {settings.learning_rate:g} for {during}; "
            f"pass {flag} {fix} (a tenth of the steps) or train more steps")


def say_long_warmup(settings, train_steps: int):
    """long_warmup's line, when the run has one: once, as training starts, on stdout with the progress lines (stderr
    is a refusal's one line)."""
    line = long_warmup(settings, train_steps)
    if line:
        print(line)


@dataclasses.dataclass(frozen=True, kw_only=True)
class LengthOptions(Settings):
    """How batches are cut to length (albert.data.buckets)."""

    length_buckets: str = setting(
        "default", "Lengths a batch is cut to, so padding is not computed. Each batch is cut to the smallest of these "
        "that holds its longest example: default (four per doubling: 8, 12, 16, 20, 24, 28, 32, 40, 48, ..., 384, "
        "448, 512, up to --max_seq_length), none (pad every example to --max_seq_length; model.tflite then has that "
        "fixed length instead of any length), or comma-separated lengths. Training batches hold the same examples in "
        "the same order as with none; under default, a step not compiled by XLA (no --jit_compile) cuts each "
        "batch to its own longest example instead of its bucket; evaluation and prediction group examples by length "
        "and give results in the order of the input.", module=SHARED, group="inputs")
    group_by_length: bool = setting(
        False, "Training batches of examples of neighbouring lengths (windows of 50 batches sorted by length, as "
        "Hugging Face's group_by_length, the batches in random order): less padding than --length_buckets alone, but "
        "other batches than without it.", module=SHARED, group="training")


@dataclasses.dataclass(frozen=True, kw_only=True)
class FineTuningExport(TfliteOptions, OnnxOption, LengthOptions):
    """What every fine-tuning runner shares: its export's files and its batches' lengths."""

    COMMAND: ClassVar[str] = ""  # the runner's script, as its outputs' markers name it (albert.ground.outputs)

    @property
    def export_command(self) -> str:
        """What --export_dir's marker names: an export of this runner replaces only an earlier one of its own."""
        return f"{self.COMMAND} --export_dir"


def parse_seeds(name: str, text: str) -> tuple:
    try:
        return tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        raise AlbertError(f"--{name} must be comma-separated integers, got {text!r}") from None
