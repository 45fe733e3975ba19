r"""Fine-tune ALBERT on RACE (4-option reading comprehension): train, evaluate each checkpoint, predict the test set.

    python run_race.py --data_dir=. --output_dir=out/race --albert_config_file=albert_config.json \
        --spm_model_file=30k-clean.model --init_checkpoint=albert_base/model.ckpt-best \
        --max_seq_length=512 --max_qa_length=128 --train_batch_size=32 --learning_rate=1e-5 --train_step=12000
"""

from albert.data.features import boundaries
from albert.ground import cli
from albert.ground.errors import AlbertError
from albert.ground.settings_flags import define
from albert.export.options import check_onnx_export
from albert.jobs.settings import RaceRun
from albert.train.settings import Runtime, check_export_dir, check_model_files
from albert.weights.formats import model_files

RACE = define(RaceRun)
RUNTIME = define(Runtime, skip=("gradient_accumulation_steps",), defaults={"save_checkpoints_steps": 100},
                 names={"keep_checkpoint_max": "num_keep_checkpoint"})  # the original's default and name
COMMAND_LINE = define(cli.CommandLineOnly, only=("albert_hub_module_handle", "progress", "num_tpu_cores",
                                                 "task_name"))


def validate() -> tuple:
    """Every check that needs no TensorFlow: the job's settings and the shared runtime settings."""
    command_line = COMMAND_LINE.build()
    init_checkpoint, albert_config_file, spm_model_file = model_files(
        RACE.value("init_checkpoint"), RACE.value("albert_config_file"), RACE.value("spm_model_file"),
        RACE.value("vocab_file"), command_line.albert_hub_module_handle)
    s = RACE.build(init_checkpoint=init_checkpoint, albert_config_file=albert_config_file,
                   spm_model_file=spm_model_file)
    if command_line.task_name.lower() != "race":
        raise AlbertError(f"--task_name {command_line.task_name!r}: run_race.py only runs race")
    if not s.spm_model_file and not s.vocab_file:
        raise AlbertError("--spm_model_file (SentencePiece) or --vocab_file (WordPiece) is required")
    if s.high_only and s.middle_only:
        raise AlbertError("--high_only and --middle_only exclude each other")
    if not (s.do_train or s.do_eval or s.do_predict or s.export_dir):
        raise AlbertError("nothing to do: pass at least one of --do_train, --do_eval, --do_predict, --export_dir")
    if s.max_seq_length <= s.max_qa_length + 3:
        raise AlbertError(f"--max_seq_length {s.max_seq_length} leaves no room for the article after "
                          f"--max_qa_length {s.max_qa_length} and 3 special tokens")
    boundaries(s.max_seq_length, s.length_buckets)  # a malformed value is one line here
    runtime = RUNTIME.build()
    check_model_files(s.albert_config_file, s.max_seq_length, s.spm_model_file, s.vocab_file, s.init_checkpoint)
    check_onnx_export(s.onnx_export, s.export_dir)
    check_export_dir(s.export_dir, (s.output_dir, s.albert_config_file, s.spm_model_file, s.vocab_file,
                                    s.init_checkpoint, s.data_dir))
    return s, runtime


def main(argv):
    del argv
    settings, runtime = validate()
    from albert.jobs import race  # TensorFlow loads here, once the flags are checked

    race.run(settings, runtime)


if __name__ == "__main__":
    cli.run(main, output_dir_flag="output_dir")
