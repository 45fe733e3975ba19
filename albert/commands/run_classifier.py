r"""Fine-tune ALBERT on a GLUE task or on your own files: train, evaluate every checkpoint (keeping the best),
predict the test set.

    python run_classifier.py --task_name=MNLI --data_dir=glue --output_dir=out/mnli \
        --albert_config_file=albert_config.json --spm_model_file=30k-clean.model \
        --init_checkpoint=albert_base/model.ckpt-best --do_train --do_eval --do_predict \
        --max_seq_length=128 --train_batch_size=128 --learning_rate=3e-5 --train_step=10000 --warmup_step=1000

    python run_classifier.py --train_file=reviews_train.csv --dev_file=reviews_dev.csv --text_a_column=review \
        --label_column=stars --output_dir=out/reviews --init_checkpoint=albert_base_v2 --do_train --do_eval
"""

import dataclasses
import os

from albert.ground import cli
from albert.ground.errors import AlbertError
from albert.ground.settings_flags import define
from albert.ground.validators import check_output_path
from albert.runner.preflight import (check_fine_tuning, check_tokenizer_given, given_settings,
                                     settings_with_model_files, split_files)
from albert.runner.settings import with_epoch_steps
from albert.tasks.classification.settings import GlueRun
from albert.tasks.classification import own_data
from albert.tasks.classification.glue import get_task
from albert.train.settings import Runtime

GLUE = define(GlueRun, helps={  # what this command's model.tflite is for
    "tflite_metadata": "TFLite metadata in the model.tflite: tokenizer (input roles, the tokenizer -- a "
    "SentencePiece model that does the original's preprocessing itself -- and the label names, so that "
    "MediaPipe Tasks' TextClassifier and the TFLite Task Library run it on raw text) or none."})
RUNTIME = define(Runtime, skip=("gradient_accumulation_steps",))  # whole batches
OWN_FILE_FLAGS = ("train_file", "dev_file", "test_file", "file_format", "text_a_column", "text_b_column",
                  "label_column", "header", "labels", "regression", "encoding")
COMMAND_LINE = define(cli.CommandLineOnly, only=("albert_hub_module_handle", "progress", "num_tpu_cores"))


def validate() -> tuple:
    """Every check that needs no TensorFlow: the job's settings and the shared runtime settings; what needs no model
    (nothing to do, the data's files) before a model reference is resolved, which may download."""
    hub_module = COMMAND_LINE.build().albert_hub_module_handle
    given = given_settings(GLUE, hub_module)
    if not (given.do_train or given.do_eval or given.do_predict or given.export_dir):
        raise AlbertError("nothing to do: pass at least one of --do_train, --do_eval, --do_predict, --export_dir")
    if given.seeds and not given.do_eval:
        raise AlbertError("--seeds compares dev results: pass --do_eval")
    task = glue_task(given) if given.task_name else own_files_task(given)
    s = settings_with_model_files(GLUE, hub_module)
    check_tokenizer_given(s)
    if s.export_dir and not s.spm_model_file:
        raise AlbertError("--export_dir tokenizes in the graph with SentencePiece: pass --spm_model_file")
    if s.export_dir and s.seeds:
        raise AlbertError("--export_dir exports one model: run without --seeds")
    if s.cached_dir:
        check_output_path("cached_dir", s.cached_dir.rstrip("/"), directory=True)
    runtime = RUNTIME.build()
    check_fine_tuning(s, *([s.data_dir] if s.task_name else task.files.values()))
    s, line = with_epoch_steps(s, lambda: len(task.examples("train")), "rows")  # --num_train_epochs: the steps
    if line:
        print(line)
    return s, runtime, task


def glue_task(s):
    """The GLUE task of --task_name, its --data_dir there."""
    defaults = {field.name: field.default for field in dataclasses.fields(GlueRun)}
    own = [f"--{name}" for name in OWN_FILE_FLAGS if getattr(s, name) not in (defaults[name], "")]
    if own:
        raise AlbertError(f"{', '.join(own)}: for your own files; leave out --task_name and --data_dir with them")
    if not s.data_dir and (s.do_train or s.do_eval or s.do_predict):
        raise AlbertError(f"--task_name {s.task_name} reads the GLUE layout: pass --data_dir")
    if s.data_dir and not os.path.isdir(s.data_dir):
        raise AlbertError(f"{s.data_dir}: --data_dir not found")
    task = get_task(s.task_name)
    if task.name == "ax" and (s.do_train or s.do_eval):
        raise AlbertError("task ax is predict-only: use --do_predict with a model fine-tuned on MNLI")
    return task


def own_files_task(s):
    """The task of --train_file / --dev_file / --test_file, every file read and checked now."""
    if s.data_dir:
        raise AlbertError("--data_dir goes with --task_name; for your own files pass --train_file / --dev_file / "
                          "--test_file")
    recorded = own_data.recorded_labels(s.output_dir)
    if not (s.train_file or s.dev_file or s.test_file) and recorded is None:
        raise AlbertError("pass --task_name and --data_dir for a GLUE task, or your own --train_file / --dev_file / "
                          "--test_file")
    given, files = split_files(s)
    if not s.do_train and not s.labels and not s.regression and recorded is None:
        files["train"] = given["train"]  # no training run's labels to read: the train file's
    if any(files.values()) and not s.text_a_column:
        raise AlbertError("--text_a_column: name the text column of your files (a header name, or a 0-based index "
                          "with --noheader)")
    columns = own_data.Columns(s.text_a_column, s.text_b_column or None, s.label_column)
    return own_data.own_task(files, columns, s.header, s.encoding, s.file_format, s.labels or None,
                             s.regression, recorded)


def main(argv):
    del argv
    settings, runtime, task = validate()
    from albert.tasks.classification import job as glue  # TensorFlow loads here, once the flags are checked

    glue.run(settings, runtime, task)


def command():
    """The command line: `python run_classifier.py` and the console script albert-run-classifier."""
    cli.run(main, output_dir_flag="output_dir")
