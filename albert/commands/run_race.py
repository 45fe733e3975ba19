r"""Fine-tune ALBERT on RACE (4-option reading comprehension): train, evaluate each checkpoint, predict the test set.

    python run_race.py --data_dir=. --output_dir=out/race --albert_config_file=albert_config.json \
        --spm_model_file=30k-clean.model --init_checkpoint=albert_base/model.ckpt-best \
        --max_seq_length=512 --max_qa_length=128 --train_batch_size=32 --learning_rate=1e-5 --train_step=12000
"""

from albert.ground import cli
from albert.ground.errors import AlbertError
from albert.ground.settings_flags import define
from albert.runner.preflight import check_fine_tuning, check_tokenizer_given, given_settings, settings_with_model_files
from albert.tasks.race.settings import RaceRun
from albert.train.settings import Runtime

RACE = define(RaceRun)
RUNTIME = define(Runtime, skip=("gradient_accumulation_steps",), defaults={"save_checkpoints_steps": 100},
                 names={"keep_checkpoint_max": "num_keep_checkpoint"})  # the original's default and name
COMMAND_LINE = define(cli.CommandLineOnly, only=("albert_hub_module_handle", "progress", "num_tpu_cores",
                                                 "task_name"))


def validate() -> tuple:
    """Every check that needs no TensorFlow: the job's settings and the shared runtime settings."""
    command_line = COMMAND_LINE.build()
    s = given_settings(RACE, command_line.albert_hub_module_handle)  # first what needs no model: it may download
    if command_line.task_name.lower() != "race":
        raise AlbertError(f"--task_name {command_line.task_name!r}: {cli.program()} only runs race")
    if s.high_only and s.middle_only:
        raise AlbertError("--high_only and --middle_only exclude each other")
    if not (s.do_train or s.do_eval or s.do_predict or s.export_dir):
        raise AlbertError("nothing to do: pass at least one of --do_train, --do_eval, --do_predict, --export_dir")
    if (s.do_train or s.do_eval or s.do_predict) and not s.data_dir:
        raise AlbertError("--data_dir is required: the RACE files to train, evaluate or predict on")
    if s.max_seq_length <= s.max_qa_length + 3:
        raise AlbertError(f"--max_seq_length {s.max_seq_length} leaves no room for the article after "
                          f"--max_qa_length {s.max_qa_length} and 3 special tokens")
    s = settings_with_model_files(RACE, command_line.albert_hub_module_handle)
    check_tokenizer_given(s)
    runtime = RUNTIME.build()
    check_fine_tuning(s, s.data_dir)
    return s, runtime


def main(argv):
    del argv
    settings, runtime = validate()
    from albert.tasks.race import job as race  # TensorFlow loads here, once the flags are checked

    race.run(settings, runtime)


def command():
    """The command line: `python run_race.py` and the console script albert-run-race."""
    cli.run(main, output_dir_flag="output_dir")
