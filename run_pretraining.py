r"""ALBERT pretraining: masked-LM + sentence-order prediction with LAMB, on any tf.distribute strategy.

    python run_pretraining.py --input_file=data/train-*.tfrecord --output_dir=out \
        --albert_config_file=albert_config.json --train_batch_size=4096 --num_train_steps=125000

A rerun of the same command resumes from the last checkpoint in --output_dir (weights, optimizer, data position).
"""

from absl import flags

from albert.ground import cli
from albert.ground.errors import AlbertError
from albert.train.settings import Runtime, check_model_files
from albert.weights.formats import model_files

flags.DEFINE_string("albert_config_file", None, "Model config JSON (albert_config.json).")
flags.DEFINE_string("input_file", None, "TFRecord files from create_pretraining_data.py, comma-separated globs.")
flags.DEFINE_string("eval_file", None, "TFRecords to evaluate on (default: --input_file, as the original).")
flags.DEFINE_string("output_dir", None, "Checkpoints, summaries and eval results.")
flags.DEFINE_string("init_checkpoint", None, cli.INIT_CHECKPOINT_HELP)
flags.DEFINE_integer("max_seq_length", 512, "Must match the data.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Must match the data (doubled for --do_permutation data).")
flags.DEFINE_bool("do_train", True, "Train.")
flags.DEFINE_bool("do_eval", False, "Evaluate every checkpoint; keep model.ckpt-best by masked-LM accuracy.")
flags.DEFINE_integer("train_batch_size", 4096, "Global batch size (over all replicas and accumulation steps).")
flags.DEFINE_integer("eval_batch_size", 64, "Global eval batch size.")
flags.DEFINE_enum("optimizer", "lamb", ["adamw", "lamb"], "Optimizer.")
flags.DEFINE_float("learning_rate", 0.00176, "Peak learning rate.")
flags.DEFINE_float("poly_power", 1.0, "Power of the polynomial decay.")
flags.DEFINE_integer("num_train_steps", 125000, "Training steps.")
flags.DEFINE_integer("num_warmup_steps", 3125, "Linear warmup steps.")
flags.DEFINE_integer("start_warmup_step", 0, "Step at which the warmup starts.")
flags.DEFINE_integer("save_checkpoints_steps", 5000, "Checkpoint (and evaluate) every this many steps.")
flags.DEFINE_integer("keep_checkpoint_max", 5, "Checkpoints kept.")
flags.DEFINE_integer("iterations_per_loop", 1000, "Steps per call of the compiled training loop.")
flags.DEFINE_integer("max_eval_steps", 100, "Eval batches per evaluation.")
flags.DEFINE_bool("init_from_group0", False, "Initialise every transformer group from the checkpoint's group 0.")
flags.DEFINE_float("masked_lm_budget", 0, "Not supported (online masking was never functional in the original).")
cli.define_runtime_flags()
flags.adopt_module_key_flags(cli)  # --help lists them with the script's own flags
flags.DEFINE_integer("gradient_accumulation_steps", 1, "Micro-batches per update (global batch = their sum).")
FLAGS = flags.FLAGS
# The flags that set no settings field: read and checked by validate() only.
READ_HERE = ("masked_lm_budget",  # refused: online masking never worked in the original
             "num_tpu_cores",  # kept for compatibility (the TPU strategy finds its cores)
             "progress")  # the download progress bar (albert.ground.cli.run)


def validate() -> Runtime:
    """Every check that needs no TensorFlow; the shared runtime settings."""
    FLAGS.init_checkpoint, FLAGS.albert_config_file, _ = model_files(FLAGS.init_checkpoint,
                                                                     FLAGS.albert_config_file, None)
    cli.require({"albert_config_file": FLAGS.albert_config_file, "input_file": FLAGS.input_file,
                 "output_dir": FLAGS.output_dir})
    if not FLAGS.do_train and not FLAGS.do_eval:
        raise AlbertError("nothing to do: pass --do_train and/or --do_eval")
    if FLAGS.masked_lm_budget:
        raise AlbertError("--masked_lm_budget (online masking) is not supported; the original never made it work")
    for name in ("train_batch_size", "eval_batch_size", "num_train_steps", "max_eval_steps", "max_seq_length",
                 "max_predictions_per_seq"):
        cli.check_at_least(name, getattr(FLAGS, name), 1)
    cli.check_at_least("num_warmup_steps", FLAGS.num_warmup_steps, 0)
    cli.check_finite("learning_rate", FLAGS.learning_rate)
    runtime = cli.settings(Runtime, FLAGS)
    check_model_files(FLAGS.albert_config_file, FLAGS.max_seq_length, init_checkpoint=FLAGS.init_checkpoint)
    return runtime


def main(argv):
    del argv
    runtime = validate()
    from albert.jobs import pretraining  # TensorFlow loads here, once the flags are checked

    settings = cli.settings(pretraining.PretrainingRun, FLAGS)
    cli.check_every_flag_read(FLAGS, (Runtime, pretraining.PretrainingRun), READ_HERE)
    pretraining.run(settings, runtime)


if __name__ == "__main__":
    cli.run(main, output_dir_flag="output_dir")
