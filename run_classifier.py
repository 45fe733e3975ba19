r"""Fine-tune ALBERT on a GLUE task: train, evaluate every checkpoint (keeping the best), predict the test set.

    python run_classifier.py --task_name=MNLI --data_dir=glue --output_dir=out/mnli \
        --albert_config_file=albert_config.json --spm_model_file=30k-clean.model \
        --init_checkpoint=albert_base/model.ckpt-best --do_train --do_eval --do_predict \
        --max_seq_length=128 --train_batch_size=128 --learning_rate=3e-5 --train_step=10000 --warmup_step=1000
"""

import os

from absl import flags

from albert.ground import cli
from albert.data.features import boundaries
from albert.ground.errors import AlbertError
from albert.tasks.glue import get_task
from albert.train.settings import Runtime, check_export_dir, check_model_files
from albert.weights.formats import model_files

flags.DEFINE_string("data_dir", None, "Directory holding the task's folder (e.g. MNLI/, CoLA/) in the GLUE layout.")
flags.DEFINE_string("albert_config_file", None, "Model config JSON.")
flags.DEFINE_string("task_name", None, "cola, mnli, mismnli, mrpc, rte, sst-2, sts-b, qqp, qnli, wnli or ax.")
flags.DEFINE_string("vocab_file", None, "WordPiece vocabulary (when --spm_model_file is empty).")
flags.DEFINE_string("spm_model_file", None, "SentencePiece model.")
flags.DEFINE_string("output_dir", None, "Checkpoints, eval results and predictions.")
flags.DEFINE_string("cached_dir", None, "Where feature TFRecords are cached (default --output_dir).")
flags.DEFINE_string("init_checkpoint", None, cli.INIT_CHECKPOINT_HELP)
flags.DEFINE_string("albert_hub_module_handle", None, cli.HUB_MODULE_HELP)
flags.DEFINE_bool("do_lower_case", True, "Lower-case the text.")
flags.DEFINE_integer("max_seq_length", 512, "Tokens per example (at most max_position_embeddings).")
flags.DEFINE_bool("do_train", False, "Train.")
flags.DEFINE_bool("do_eval", False, "Evaluate every checkpoint on dev; keep model.ckpt-best.")
flags.DEFINE_bool("do_predict", False, "Predict the test set with model.ckpt-best.")
flags.DEFINE_integer("train_batch_size", 32, "Global training batch.")
flags.DEFINE_integer("eval_batch_size", 8, "Eval batch.")
flags.DEFINE_integer("predict_batch_size", 8, "Predict batch.")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate.")
flags.DEFINE_integer("train_step", 1000, "Training steps (the decay horizon).")
flags.DEFINE_integer("warmup_step", 0, "Warmup steps.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "Checkpoint (and evaluate) every this many steps.")
flags.DEFINE_integer("keep_checkpoint_max", 5, "Checkpoints kept.")
flags.DEFINE_integer("iterations_per_loop", 1000, "Steps per compiled loop call.")
flags.DEFINE_enum("optimizer", "adamw", ["adamw", "lamb"], "Optimizer.")
flags.DEFINE_string("export_dir", None, "Export model.ckpt-best as a serving SavedModel that takes raw strings "
                    "(text_a, and text_b for pair tasks) and returns probabilities and predictions, and in it "
                    "model.tflite (LiteRT: packed ids -> logits).")
cli.define_tflite_flag()
cli.define_onnx_flag()
cli.define_runtime_flags()
cli.define_length_flags()
flags.adopt_module_key_flags(cli)  # --help lists them with the script's own flags
flags.DEFINE_string("seeds", None, "Comma-separated seeds: fine-tune once per seed (in output_dir/seed_<s>) and "
                    "report the mean, median and best dev metric (small GLUE tasks are seed-sensitive).")
FLAGS = flags.FLAGS
# The flags that set no settings field: read and checked by validate() only.
READ_HERE = ("albert_hub_module_handle",  # becomes --albert_config_file, --init_checkpoint, --spm_model_file
             "num_tpu_cores",  # kept for compatibility (the TPU strategy finds its cores)
             "progress")  # the download progress bar (albert.ground.cli.run)


def validate() -> tuple:
    """Every check that needs no TensorFlow; the seeds and the shared runtime settings."""
    FLAGS.init_checkpoint, FLAGS.albert_config_file, FLAGS.spm_model_file = model_files(
        FLAGS.init_checkpoint, FLAGS.albert_config_file, FLAGS.spm_model_file, FLAGS.vocab_file,
        FLAGS.albert_hub_module_handle)
    cli.require({"data_dir": FLAGS.data_dir, "task_name": FLAGS.task_name, "output_dir": FLAGS.output_dir,
                 "albert_config_file": FLAGS.albert_config_file})
    if not FLAGS.spm_model_file and not FLAGS.vocab_file:
        raise AlbertError("--spm_model_file (SentencePiece) or --vocab_file (WordPiece) is required")
    if not (FLAGS.do_train or FLAGS.do_eval or FLAGS.do_predict or FLAGS.export_dir):
        raise AlbertError("nothing to do: pass at least one of --do_train, --do_eval, --do_predict, --export_dir")
    if FLAGS.export_dir and not FLAGS.spm_model_file:
        raise AlbertError("--export_dir tokenizes in the graph with SentencePiece: pass --spm_model_file")
    if FLAGS.export_dir and FLAGS.seeds:
        raise AlbertError("--export_dir exports one model: run without --seeds")
    for name in ("max_seq_length", "train_batch_size", "eval_batch_size", "predict_batch_size", "train_step"):
        cli.check_at_least(name, getattr(FLAGS, name), 1)
    cli.check_finite("learning_rate", FLAGS.learning_rate)
    if not os.path.isdir(FLAGS.data_dir):
        raise AlbertError(f"{FLAGS.data_dir}: --data_dir not found")
    if FLAGS.cached_dir:
        cli.check_output_path("cached_dir", FLAGS.cached_dir.rstrip("/"), directory=True)
    seeds = ()
    if FLAGS.seeds:
        try:
            seeds = tuple(int(s) for s in FLAGS.seeds.split(",") if s.strip())
        except ValueError:
            raise AlbertError(f"--seeds must be comma-separated integers, got {FLAGS.seeds!r}") from None
        if not FLAGS.do_eval:
            raise AlbertError("--seeds compares dev results: pass --do_eval")
    if get_task(FLAGS.task_name).name == "ax" and (FLAGS.do_train or FLAGS.do_eval):
        raise AlbertError("task ax is predict-only: use --do_predict with a model fine-tuned on MNLI")
    boundaries(FLAGS.max_seq_length, FLAGS.length_buckets)  # a malformed value is one line here
    runtime = cli.settings(Runtime, FLAGS, gradient_accumulation_steps=1)  # no such flag: whole batches
    check_model_files(FLAGS.albert_config_file, FLAGS.max_seq_length, FLAGS.spm_model_file, FLAGS.vocab_file,
                      FLAGS.init_checkpoint)
    cli.check_onnx_export(FLAGS.onnx_export, FLAGS.export_dir)
    check_export_dir(FLAGS.export_dir, (FLAGS.output_dir, FLAGS.albert_config_file, FLAGS.spm_model_file,
                                        FLAGS.vocab_file, FLAGS.init_checkpoint, FLAGS.data_dir))
    return seeds, runtime


def main(argv):
    del argv
    seeds, runtime = validate()
    from albert.jobs import glue  # TensorFlow loads here, once the flags are checked

    settings = cli.settings(glue.GlueRun, FLAGS, seeds=seeds)
    cli.check_every_flag_read(FLAGS, (Runtime, glue.GlueRun), READ_HERE)
    glue.run(settings, runtime)


if __name__ == "__main__":
    cli.run(main, output_dir_flag="output_dir")
