r"""ALBERT pretraining: masked-LM + sentence-order prediction with LAMB, on any tf.distribute strategy.

    python run_pretraining.py --input_file=data/train-*.tfrecord --output_dir=out \
        --albert_config_file=albert_config.json --train_batch_size=4096 --num_train_steps=125000

A rerun of the same command resumes from the last checkpoint in --output_dir (weights, optimizer, data position).
"""

from albert.ground import cli
from albert.ground.errors import AlbertError
from albert.ground.settings_flags import define
from albert.tasks.pretraining.settings import PretrainingRun
from albert.runner.preflight import check_model_files, given_settings, settings_with_model_files
from albert.train.settings import Runtime

PRETRAINING = define(PretrainingRun)
RUNTIME = define(Runtime, defaults={"save_checkpoints_steps": 5000},  # the original's
                 helps={"iterations_per_loop": "Steps per call of the compiled training loop."})
COMMAND_LINE = define(cli.CommandLineOnly, only=("masked_lm_budget", "progress", "num_tpu_cores"))


def validate() -> tuple:
    """Every check that needs no TensorFlow: the job's settings and the shared runtime settings."""
    given = given_settings(PRETRAINING)  # first what needs no model: a model reference may download
    if not given.do_train and not given.do_eval:
        raise AlbertError("nothing to do: pass --do_train and/or --do_eval")
    if COMMAND_LINE.build().masked_lm_budget:
        raise AlbertError("--masked_lm_budget (online masking) is not supported; the original never made it work")
    s = settings_with_model_files(PRETRAINING)
    runtime = RUNTIME.build()
    check_model_files(s.albert_config_file, s.max_seq_length, init_checkpoint=s.init_checkpoint)
    return s, runtime


def main(argv):
    del argv
    settings, runtime = validate()
    from albert.tasks.pretraining import job as pretraining  # TensorFlow loads here, once the flags are checked

    pretraining.run(settings, runtime)


def command():
    """The command line: `python run_pretraining.py` and the console script albert-run-pretraining."""
    cli.run(main, output_dir_flag="output_dir")
