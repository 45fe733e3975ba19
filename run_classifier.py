r"""Fine-tune ALBERT on a GLUE task: train, evaluate every checkpoint (keeping the best), predict the test set.

    python run_classifier.py --task_name=MNLI --data_dir=glue --output_dir=out/mnli \
        --albert_config_file=albert_config.json --spm_model_file=30k-clean.model \
        --init_checkpoint=albert_base/model.ckpt-best --do_train --do_eval --do_predict \
        --max_seq_length=128 --train_batch_size=128 --learning_rate=3e-5 --train_step=10000 --warmup_step=1000
"""

import os

from albert.ground import cli
from albert.ground.errors import AlbertError
from albert.ground.settings_flags import define
from albert.ground.validators import check_output_path
from albert.jobs.preflight import check_fine_tuning, check_tokenizer_given, settings_with_model_files
from albert.jobs.settings import GlueRun
from albert.tasks.glue import get_task
from albert.train.settings import Runtime

GLUE = define(GlueRun)
RUNTIME = define(Runtime, skip=("gradient_accumulation_steps",))  # whole batches
COMMAND_LINE = define(cli.CommandLineOnly, only=("albert_hub_module_handle", "progress", "num_tpu_cores"))


def validate() -> tuple:
    """Every check that needs no TensorFlow: the job's settings and the shared runtime settings."""
    s = settings_with_model_files(GLUE, COMMAND_LINE.build().albert_hub_module_handle)
    check_tokenizer_given(s)
    if not (s.do_train or s.do_eval or s.do_predict or s.export_dir):
        raise AlbertError("nothing to do: pass at least one of --do_train, --do_eval, --do_predict, --export_dir")
    if s.export_dir and not s.spm_model_file:
        raise AlbertError("--export_dir tokenizes in the graph with SentencePiece: pass --spm_model_file")
    if s.export_dir and s.seeds:
        raise AlbertError("--export_dir exports one model: run without --seeds")
    if not os.path.isdir(s.data_dir):
        raise AlbertError(f"{s.data_dir}: --data_dir not found")
    if s.cached_dir:
        check_output_path("cached_dir", s.cached_dir.rstrip("/"), directory=True)
    if s.seeds and not s.do_eval:
        raise AlbertError("--seeds compares dev results: pass --do_eval")
    if get_task(s.task_name).name == "ax" and (s.do_train or s.do_eval):
        raise AlbertError("task ax is predict-only: use --do_predict with a model fine-tuned on MNLI")
    runtime = RUNTIME.build()
    check_fine_tuning(s, s.data_dir)
    return s, runtime


def main(argv):
    del argv
    settings, runtime = validate()
    from albert.jobs import glue  # TensorFlow loads here, once the flags are checked

    glue.run(settings, runtime)


if __name__ == "__main__":
    cli.run(main, output_dir_flag="output_dir")
