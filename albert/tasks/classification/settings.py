"""run_classifier.py's settings (`GlueRun`): its flags are generated from these fields.
No TensorFlow here: the command line checks its values before TensorFlow starts."""

import dataclasses
from typing import ClassVar

from albert.ground.settings_flags import at_least, finite, setting
from albert.runner.settings import (EPOCHS_HELP, Evaluation, FineTuningExport, OPTIMIZERS, TRAIN_STEP_HELP,
                                    WordPieceOption, check_one_length, parse_seeds, runner_settings,
                                    steps_unless_epochs)
from albert.tasks.classification.own_data import parse_labels


@dataclasses.dataclass(frozen=True)
@runner_settings
class GlueRun(Evaluation, WordPieceOption, FineTuningExport):
    """run_classifier.py's settings."""

    COMMAND: ClassVar[str] = "run_classifier.py"
    model_class: ClassVar[str] = "AlbertClassifier"  # the task model its checkpoints hold

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
    cached_dir: str | None = setting(None, "Where feature TFRecords are cached (default --output_dir).", group="inputs")
    train_step: int | None = setting(None, TRAIN_STEP_HELP, check=at_least(1), group="training",
                                     derived=steps_unless_epochs)
    num_train_epochs: float | None = setting(None, EPOCHS_HELP.format(what="rows"), check=finite, group="own_files")
    warmup_step: int = setting(0, "Warmup steps.", group="training")
    optimizer: str = setting("adamw", "Optimizer.", choices=OPTIMIZERS, group="training")
    # fine-tune once per seed and compare (empty: once, with the runtime's seed)
    seeds: tuple = setting((), "Comma-separated seeds: fine-tune once per seed (in output_dir/seed_<s>) and report "
                           "the mean, median and best dev metric (small GLUE tasks are seed-sensitive).",
                           parse=parse_seeds, group="training")

    def __post_init__(self):
        check_one_length(self)
        super().__post_init__()
