r"""Fine-tune ALBERT on SQuAD 1.1 (span head) or 2.0 (`--version_2_with_negative`: the original XLNet-style head
with an answer-class logit): train, evaluate every checkpoint on the predict file, keep the best by F1, predict.

    python run_squad.py --albert_config_file=albert_config.json --spm_model_file=30k-clean.model \
        --init_checkpoint=albert_base/model.ckpt-best --train_file=train-v1.1.json --predict_file=dev-v1.1.json \
        --output_dir=out/squad --do_train --do_predict --max_seq_length=384 --doc_stride=128 \
        --train_batch_size=48 --learning_rate=5e-5 --num_train_epochs=2.0

Outputs in --output_dir: predictions.json, nbest_predictions.json, null_odds.json (2.0), eval_results.txt (one
block per evaluated checkpoint), best_trial.txt and model.ckpt-best.
"""

import os

from albert.ground import cli
from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote
from albert.ground.settings_flags import define
from albert.runner.preflight import check_fine_tuning, given_settings, settings_with_model_files
from albert.tasks.squad.settings import SquadRun
from albert.train.settings import Runtime

SQUAD = define(SquadRun, helps={  # what this command's model.tflite is for
    "tflite_metadata": "TFLite metadata in the model.tflite: tokenizer (input roles, the tokenizer -- a "
    "SentencePiece model that does the original's preprocessing itself -- and the label names, so that "
    "the TFLite Task Library's BertQuestionAnswerer runs it on raw text) or none.",
    "tflite_length": "The model.tflite's sequence axis: fixed (--max_seq_length), dynamic (any length up to it: a "
    "caller feeds each batch cut to its longest example) or default: fixed for SQuAD 1.1 (as the TFLite Task "
    "Library's BertQuestionAnswerer needs) and with --length_buckets=none, dynamic otherwise."})
RUNTIME = define(Runtime, skip=("gradient_accumulation_steps",))  # whole batches
COMMAND_LINE = define(cli.CommandLineOnly, only=("albert_hub_module_handle", "progress", "num_tpu_cores",
                                                 "use_einsum", "vocab_file"))


def validate() -> tuple:
    """Every check that needs no TensorFlow: the job's settings and the shared runtime settings."""
    hub_module = COMMAND_LINE.build().albert_hub_module_handle
    s = given_settings(SQUAD, hub_module)  # first what needs no model: a model reference may download
    if not (s.do_train or s.do_predict or s.export_dir):
        raise AlbertError("nothing to do: pass --do_train, --do_predict and/or --export_dir")
    if s.group_by_length and not s.version_2_with_negative:
        raise AlbertError("--group_by_length: SQuAD 1.1's loss runs over every position, padding included, so its "
                          "training batches are not cut to a length; use it with --version_2_with_negative")
    if s.do_train and not s.train_file:
        raise AlbertError("--do_train needs --train_file")
    if s.do_predict and not s.predict_file:
        raise AlbertError("--do_predict needs --predict_file")
    for name in ("train_file", "predict_file"):
        path = getattr(s, name)
        if path and not is_remote(path) and not os.path.isfile(path):
            raise AlbertError(f"{path}: --{name} not found")
    s = settings_with_model_files(SQUAD, hub_module)
    runtime = RUNTIME.build()
    check_fine_tuning(s)
    return s, runtime


def main(argv):
    del argv
    settings, runtime = validate()
    from albert.tasks.squad import job as squad  # TensorFlow loads here, once the flags are checked

    squad.run(settings, runtime)


def command():
    """The command line: `python run_squad.py` and the console script albert-run-squad."""
    cli.run(main, output_dir_flag="output_dir")
