"""What the runners' settings share: the help texts of the model flags, the step and warm-up arithmetic, the export and
length options of every fine-tuning runner. Each runner's own settings class is its task's
(albert.tasks.<task>.settings); flags are generated from their fields (albert.ground.settings_flags), with the
original's names, defaults and help texts. No TensorFlow here: a command line checks its values before TensorFlow
starts."""

import dataclasses
from typing import ClassVar

from albert.export.options import OnnxOption, TfliteOptions
from albert.ground.errors import AlbertError
from albert.ground.settings_flags import (REQUIRED, SHARED, Settings, at_least, finite, own, setting,
                                         specialise)

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
class RunnerSettings(Settings):
    """What every runner has (run_pretraining.py and the fine-tuning runners), each field declared once here; what a
    runner says differently (its default, help or check) is its row of RUNNERS, applied by `runner_settings`."""

    LISTED_AS_OWN: ClassVar[bool] = True  # --help lists its fields with the runner's own (albert.ground.help)
    COMMAND: ClassVar[str] = ""  # the runner's script, as its outputs' markers name it (albert.ground.outputs)

    output_dir: str = setting(help="Checkpoints, eval results and predictions.", group="inputs")
    albert_config_file: str = setting(help=CONFIG_HELP, group="model", why=CONFIG_WHY)
    init_checkpoint: str | None = setting(None, INIT_CHECKPOINT_HELP, group="model")
    max_seq_length: int = setting(512, "Tokens per example (at most max_position_embeddings).", check=at_least(1),
                                  group="inputs")
    do_train: bool = setting(False, "Train.", group="training")
    train_batch_size: int = setting(32, "Global training batch.", check=at_least(1), group="training")
    learning_rate: float = setting(5e-5, "Peak learning rate.", check=finite, group="training")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Evaluation(Settings):
    """Evaluating every checkpoint and keeping the best (every runner but run_squad.py, which scores predictions)."""

    LISTED_AS_OWN: ClassVar[bool] = True  # --help lists its fields with the runner's own (albert.ground.help)

    do_eval: bool = setting(False, "Evaluate every checkpoint on dev; keep model.ckpt-best.", group="evaluation")
    eval_batch_size: int = setting(8, "Eval batch.", check=at_least(1), group="evaluation")


@dataclasses.dataclass(frozen=True, kw_only=True)
class WordPieceOption(Settings):
    """A WordPiece vocabulary instead of SentencePiece (the Chinese models), for the runners that read plain text."""

    LISTED_AS_OWN: ClassVar[bool] = True  # --help lists its fields with the runner's own (albert.ground.help)

    vocab_file: str | None = setting(None, "WordPiece vocabulary (when --spm_model_file is empty).", group="model")


@dataclasses.dataclass(frozen=True, kw_only=True)
class FineTuningExport(RunnerSettings, TfliteOptions, OnnxOption, LengthOptions):
    """What every fine-tuning runner shares besides: its tokenizer, its prediction, its export's files and its
    batches' lengths."""

    LISTED_AS_OWN: ClassVar[bool] = True  # --help lists its fields with the runner's own (albert.ground.help)

    spm_model_file: str | None = setting(None, "SentencePiece model.", group="model")
    do_lower_case: bool = setting(True, "Lower-case the text.", group="model")
    do_predict: bool = setting(False, "Predict the test set with model.ckpt-best.", group="evaluation")
    predict_batch_size: int = setting(8, "Predict batch.", check=at_least(1), group="evaluation")
    export_dir: str | None = setting(None, "Export model.ckpt-best here for serving.", group="export")

    @property
    def export_command(self) -> str:
        """What --export_dir's marker names: an export of this runner replaces only an earlier one of its own."""
        return f"{self.COMMAND} --export_dir"


# What each runner says differently of the fields it shares (RunnerSettings, Evaluation, FineTuningExport): its
# default (the original's), its help, its check; the rest of each field is as declared above. One table, read by
# `runner_settings` when the runner's settings class is made.
RUNNERS = {
    "run_pretraining.py": {
        "output_dir": own(help="Checkpoints, summaries and eval results."),
        "max_seq_length": own(512, "Must match the data."),
        "do_train": own(True),
        "do_eval": own(help="Evaluate every checkpoint; keep model.ckpt-best by masked-LM accuracy."),
        "train_batch_size": own(4096, "Global batch size (over all replicas and accumulation steps)."),
        "eval_batch_size": own(64, "Global eval batch size."),
        "learning_rate": own(0.00176),
    },
    "run_classifier.py": {
        "export_dir": own(help="Export model.ckpt-best here for serving: a SavedModel that takes raw strings (text_a, "
                          "and text_b for pair tasks) and returns probabilities and predictions, and in it "
                          "model.tflite (LiteRT: packed ids -> logits)."),
    },
    "run_ner.py": {
        "do_lower_case": own(help="Lower-case the text (the released SentencePiece models do)."),
        "max_seq_length": own(128, "Pieces per window, [CLS] and [SEP] included (at most max_position_embeddings).",
                              check=at_least(3)),
        "do_eval": own(help="Evaluate every checkpoint on --dev_file; keep model.ckpt-best by entity F1."),
        "do_predict": own(help="Tag --test_file with model.ckpt-best."),
        "train_batch_size": own(help="Global training batch (windows)."),
        "export_dir": own(help="Export model.ckpt-best here for serving: a SavedModel on raw text (a batch of "
                          "strings, words split on whitespace -> one tag per word), with model.tflite (LiteRT: packed "
                          "ids -> logits) and, with --onnx_export, model.onnx."),
    },
    "run_squad.py": {
        "output_dir": own(help="Checkpoints, predictions and eval results."),
        "spm_model_file": own(REQUIRED, why="SQuAD features align SentencePiece pieces with the text"),
        "max_seq_length": own(384, "Tokens per feature."),
        "do_predict": own(help="Predict --predict_file (scored at every checkpoint when it has answers)."),
        "predict_batch_size": own(help="Prediction batch."),
        "learning_rate": own(help="Peak learning rate (AdamW)."),
        "export_dir": own(help="Export model.ckpt-best here for serving: a SavedModel over packed inputs (the head's "
                          "logits; see the README), with its LiteRT model.tflite."),
    },
    "run_race.py": {
        "max_seq_length": own(help="Tokens per (article, question+option) row."),
        "do_train": own(True),
        "do_eval": own(True, "Evaluate every checkpoint on dev; keep model.ckpt-best by accuracy."),
        "do_predict": own(help="Evaluate model.ckpt-best on test and write predictions.json."),
        "learning_rate": own(1e-5),
        "export_dir": own(help="Export model.ckpt-best here for serving: a SavedModel over packed inputs ([batch, 4, "
                          "max_seq_length] input_ids, input_mask, segment_ids -> logits [batch, 4]) with its LiteRT "
                          "model.tflite."),
    },
}


def runner_settings(cls):
    """A runner's settings class (under @dataclasses.dataclass): the shared fields it inherits, as its row of RUNNERS
    says (albert.ground.settings_flags.specialise)."""
    return specialise(cls, RUNNERS[cls.COMMAND])


def parse_seeds(name: str, text: str) -> tuple:
    try:
        return tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        raise AlbertError(f"--{name} must be comma-separated integers, got {text!r}") from None
