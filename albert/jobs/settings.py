"""Each job's settings, declared once: run_pretraining.py's, run_classifier.py's, run_squad.py's and run_race.py's
flags are generated from these fields (albert.ground.settings_flags), with the original's names, defaults and help
texts. No TensorFlow here: a command line checks its values before TensorFlow starts."""

import dataclasses
from typing import ClassVar

from albert.data.race_rows import default_max_qa_length
from albert.data.squad_windows import default_doc_stride, default_max_query_length
from albert.export.options import OnnxOption, TfliteOptions
from albert.ground.errors import AlbertError
from albert.ground.settings_flags import SHARED, Settings, at_least, finite, probability, setting
from albert.tasks import squad
from albert.tasks.own_data import parse_labels

INIT_CHECKPOINT_HELP = ("Warm start from any model reference: a checkpoint (original TF1 or ours), a model directory "
                        "(release layout, Hugging Face, keras-hub, TF1 Hub module, Model Garden SavedModel), an "
                        "archive, a model name (albert_base_v2), a Hugging Face id, a TF Hub handle or a URL "
                        "(downloaded once into the cache: docs/weights.md); a model directory also supplies "
                        "--albert_config_file and --spm_model_file when they are not passed.")
CONFIG_HELP = ("Model config JSON, unless --init_checkpoint has one: a model directory holds its config "
               "(albert_config.json, or config.json).")
CONFIG_WHY = ("pass it, or --init_checkpoint naming a model directory, or an --output_dir of a finished run (its "
              "albert_config.json)")
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


@dataclasses.dataclass(frozen=True)
class GlueRun(FineTuningExport):
    """run_classifier.py's settings."""

    COMMAND: ClassVar[str] = "run_classifier.py"
    model_class: ClassVar[str] = "AlbertClassifier"  # the task model its checkpoints hold

    output_dir: str = setting(help="Checkpoints, eval results and predictions.", group="inputs")
    albert_config_file: str = setting(help=CONFIG_HELP, group="model", why=CONFIG_WHY)
    task_name: str | None = setting(None, "The GLUE task (cola, mnli, mismnli, mrpc, rte, sst-2, sts-b, qqp, qnli, "
                                    "wnli or ax) with --data_dir; or leave it out and pass your own --train_file / "
                                    "--dev_file / --test_file.", group="inputs")
    data_dir: str | None = setting(None, "Directory holding the task's folder (e.g. MNLI/, CoLA/) in the GLUE "
                                   "layout.", group="inputs")
    train_file: str | None = setting(None, "Your own training file instead of --task_name: .csv (RFC 4180 quoting), "
                                     ".tsv (tab-separated, a quote is text), .jsonl (one object per line) or .json "
                                     "(one array of objects); the label set is its distinct labels.", group="own_files")
    dev_file: str | None = setting(None, "Your own dev file (same columns), evaluated at every checkpoint.",
                                   group="own_files")
    test_file: str | None = setting(None, "Your own test file (same columns; the label column may be missing), "
                                    "predicted into test_results.tsv.", group="own_files")
    file_format: str | None = setting(None, "Your files' format, when their extension does not say it.",
                                      choices=("csv", "tsv", "jsonl", "json"), group="own_files")
    text_a_column: str | None = setting(None, "The text column of your files: a header name, or a 0-based index "
                                        "with --noheader.", group="own_files")
    text_b_column: str | None = setting(None, "The second text of a pair task (optional).", group="own_files")
    label_column: str = setting("label", "The label column (a header name, or a 0-based index with --noheader).",
                                group="own_files")
    header: bool = setting(True, "CSV / TSV files start with a header line; --noheader: they do not, and columns "
                           "are 0-based indexes.", group="own_files")
    labels: tuple = setting((), "The label names, comma-separated (default: the train file's distinct labels, sorted "
                            "as strings, or by value when all are numbers; a run without --do_train reads them from "
                            "--output_dir/albert_run.json).", parse=parse_labels, group="own_files")
    regression: bool = setting(False, "The label is a number: one output, mean squared error, STS-B's metrics.",
                               group="own_files")
    encoding: str = setting("utf-8", "The text encoding of your files (e.g. latin-1, cp1252).", group="own_files")
    spm_model_file: str | None = setting(None, "SentencePiece model.", group="model")
    vocab_file: str | None = setting(None, "WordPiece vocabulary (when --spm_model_file is empty).", group="model")
    cached_dir: str | None = setting(None, "Where feature TFRecords are cached (default --output_dir).", group="inputs")
    init_checkpoint: str | None = setting(None, INIT_CHECKPOINT_HELP, group="model")
    do_lower_case: bool = setting(True, "Lower-case the text.", group="model")
    max_seq_length: int = setting(512, "Tokens per example (at most max_position_embeddings).", check=at_least(1),
                                  group="inputs")
    do_train: bool = setting(False, "Train.", group="training")
    do_eval: bool = setting(False, "Evaluate every checkpoint on dev; keep model.ckpt-best.", group="evaluation")
    do_predict: bool = setting(False, "Predict the test set with model.ckpt-best.", group="evaluation")
    train_batch_size: int = setting(32, "Global training batch.", check=at_least(1), group="training")
    eval_batch_size: int = setting(8, "Eval batch.", check=at_least(1), group="evaluation")
    predict_batch_size: int = setting(8, "Predict batch.", check=at_least(1), group="evaluation")
    learning_rate: float = setting(5e-5, "Peak learning rate.", check=finite, group="training")
    train_step: int | None = setting(None, TRAIN_STEP_HELP, check=at_least(1), group="training",
                                     derived=steps_unless_epochs)
    num_train_epochs: float | None = setting(None, EPOCHS_HELP.format(what="rows"), check=finite, group="own_files")
    warmup_step: int = setting(0, "Warmup steps.", group="training")
    optimizer: str = setting("adamw", "Optimizer.", choices=OPTIMIZERS, group="training")
    export_dir: str | None = setting(None, "Export model.ckpt-best here for serving: a SavedModel that takes raw "
                                     "strings (text_a, and text_b for pair tasks) and returns probabilities and "
                                     "predictions, and in it model.tflite (LiteRT: packed ids -> logits).",
                                     group="export")
    # fine-tune once per seed and compare (empty: once, with the runtime's seed)
    seeds: tuple = setting((), "Comma-separated seeds: fine-tune once per seed (in output_dir/seed_<s>) and report "
                           "the mean, median and best dev metric (small GLUE tasks are seed-sensitive).",
                           parse=parse_seeds, group="training")

    def __post_init__(self):
        check_one_length(self)
        super().__post_init__()


@dataclasses.dataclass(frozen=True)
class SquadRun(FineTuningExport):
    """run_squad.py's settings."""

    COMMAND: ClassVar[str] = "run_squad.py"

    @property
    def model_class(self) -> str:
        """The task model its checkpoints hold."""
        return "AlbertSquadV2" if self.version_2_with_negative else "AlbertSquadV1"

    albert_config_file: str = setting(help=CONFIG_HELP, group="model", why=CONFIG_WHY)
    spm_model_file: str = setting(help="SentencePiece model.",
                                  why="SQuAD features align SentencePiece pieces with the text", group="model")
    output_dir: str = setting(help="Checkpoints, predictions and eval results.", group="inputs")
    train_file: str | None = setting(None, "SQuAD JSON for training (train-v1.1.json, train-v2.0.json).",
                                     group="inputs")
    predict_file: str | None = setting(None, "SQuAD JSON to predict (and score, when it has answers).", group="inputs")
    train_feature_file: str | None = setting(None, "Train feature TFRecord (default output_dir/train.tf_record); "
                                             "built once, reused while its settings and questions match.",
                                             group="inputs")
    predict_feature_file: str | None = setting(None, "Predict feature TFRecord (default "
                                               "output_dir/predict.tf_record).", group="inputs")
    predict_feature_left_file: str | None = setting(None, "The decoder's metadata of the predict features, JSON "
                                                    "(default: the predict feature file + .json).", group="inputs")
    init_checkpoint: str | None = setting(None, INIT_CHECKPOINT_HELP, group="model")
    do_lower_case: bool = setting(True, "Lower-case the text.", group="model")
    max_seq_length: int = setting(384, "Tokens per feature.", check=at_least(1), group="inputs")
    doc_stride: int | None = setting(None, "Span stride (default: --max_seq_length / 3). The pieces between the "
                                     "starts of consecutive document spans of a long paragraph: 128 at the default "
                                     "length 384.", check=at_least(1), group="inputs",
                                     derived=lambda s: default_doc_stride(s.max_seq_length))
    max_query_length: int | None = setting(None, "Question pieces (default 64, at most --max_seq_length / 2). A "
                                           "question's first pieces are kept: 64 from --max_seq_length 128 up.",
                                           check=at_least(1), group="inputs",
                                           derived=lambda s: default_max_query_length(s.max_seq_length))
    do_train: bool = setting(False, "Train.", group="training")
    do_predict: bool = setting(False, "Predict --predict_file (scored at every checkpoint when it has answers).",
                               group="evaluation")
    train_batch_size: int = setting(32, "Global training batch.", check=at_least(1), group="training")
    predict_batch_size: int = setting(8, "Prediction batch.", check=at_least(1), group="evaluation")
    learning_rate: float = setting(5e-5, "Peak learning rate (AdamW).", check=finite, group="training")
    num_train_epochs: float = setting(3.0, "Epochs over the training questions.", check=finite, group="training")
    warmup_proportion: float = setting(0.1, "Fraction of the steps spent warming up.", check=probability,
                                       group="training")
    n_best_size: int = setting(20, "Candidates kept per question in nbest_predictions.json.", check=at_least(1),
                               group="evaluation")
    max_answer_length: int = setting(30, "Longest answer, in pieces.", check=at_least(1), group="evaluation")
    export_dir: str | None = setting(None, "Export model.ckpt-best here for serving: a SavedModel over packed "
                                     "inputs (the head's logits; see the README), with its LiteRT model.tflite.",
                                     group="export")
    version_2_with_negative: bool = setting(False, "SQuAD 2.0: questions may have no answer.", group="inputs")
    start_n_top: int = setting(5, "2.0: beam size over start positions.", check=at_least(1), group="evaluation")
    end_n_top: int = setting(5, "2.0: beam size over end positions per start.", check=at_least(1), group="evaluation")
    dropout_prob: float = setting(0.1, "2.0: dropout in the answer-class head.", check=probability, group="training")
    null_score_diff_threshold: float | None = setting(None, "2.0: predict no answer where the no-answer score "
                                                      "exceeds this (default: the best-F1 threshold on the predict "
                                                      "file's own answers).", group="evaluation")

    def __post_init__(self):
        super().__post_init__()
        self.features.check()

    @property
    def features(self) -> squad.Windows:
        return squad.Windows(self.max_seq_length, self.doc_stride, self.max_query_length, self.do_lower_case)


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

