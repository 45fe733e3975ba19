r"""Fine-tune ALBERT on RACE (4-option reading comprehension): train, evaluate each checkpoint, predict the test set.

    python run_race.py --data_dir=. --output_dir=out/race --albert_config_file=albert_config.json \
        --spm_model_file=30k-clean.model --init_checkpoint=albert_base/model.ckpt-best \
        --max_seq_length=512 --max_qa_length=128 --train_batch_size=32 --learning_rate=1e-5 --train_step=12000
"""

from absl import flags

from albert.ground import cli
from albert.data.features import boundaries
from albert.ground.errors import AlbertError
from albert.train.settings import Runtime, check_export_dir, check_model_files
from albert.weights.formats import model_files

flags.DEFINE_string("data_dir", None, "Parent of RACE/{train,dev,test}/{middle,high}/ (official files or all.txt).")
flags.DEFINE_string("albert_config_file", None, "Model config JSON.")
flags.DEFINE_string("task_name", "race", "Only race.")
flags.DEFINE_string("vocab_file", None, "WordPiece vocabulary (when --spm_model_file is empty).")
flags.DEFINE_string("train_file", None, "Train feature TFRecord (default output_dir/train.tf_record; built once).")
flags.DEFINE_string("eval_file", None, "Eval feature TFRecord (default output_dir/eval.tf_record; built once).")
flags.DEFINE_string("predict_file", None, "Predict feature TFRecord (default output_dir/predict.tf_record).")
flags.DEFINE_string("spm_model_file", None, "SentencePiece model.")
flags.DEFINE_string("output_dir", None, "Checkpoints, eval results and predictions.")
flags.DEFINE_string("init_checkpoint", None, cli.INIT_CHECKPOINT_HELP)
flags.DEFINE_string("albert_hub_module_handle", None, cli.HUB_MODULE_HELP)
flags.DEFINE_bool("do_lower_case", True, "Lower-case the text.")
flags.DEFINE_float("dropout_prob", 0.1, "Dropout on the pooled output before the scoring layer.")
flags.DEFINE_integer("max_seq_length", 512, "Tokens per (article, question+option) row.")
flags.DEFINE_integer("max_qa_length", 128, "Question+option tokens kept (the last ones).")
flags.DEFINE_integer("num_keep_checkpoint", 5, "Checkpoints kept.")
flags.DEFINE_bool("high_only", False, "RACE-H only.")
flags.DEFINE_bool("middle_only", False, "RACE-M only.")
flags.DEFINE_bool("do_train", True, "Train.")
flags.DEFINE_bool("do_eval", True, "Evaluate every checkpoint on dev; keep model.ckpt-best by accuracy.")
flags.DEFINE_bool("do_predict", False, "Evaluate model.ckpt-best on test and write predictions.json.")
flags.DEFINE_integer("train_batch_size", 32, "Global training batch.")
flags.DEFINE_integer("eval_batch_size", 8, "Eval batch.")
flags.DEFINE_integer("predict_batch_size", 8, "Predict batch.")
flags.DEFINE_float("learning_rate", 1e-5, "Peak learning rate.")
flags.DEFINE_integer("train_step", 12000, "Training steps.")
flags.DEFINE_integer("warmup_step", 1000, "Warmup steps.")
flags.DEFINE_integer("save_checkpoints_steps", 100, "Checkpoint (and evaluate) every this many steps.")
flags.DEFINE_integer("iterations_per_loop", 1000, "Steps per compiled loop call.")
flags.DEFINE_string("export_dir", None, "Export model.ckpt-best as a serving SavedModel over packed inputs "
                    "([batch, 4, max_seq_length] input_ids, input_mask, segment_ids -> logits [batch, 4]) with its "
                    "LiteRT model.tflite.")
cli.define_tflite_flag()
cli.define_onnx_flag()
cli.define_runtime_flags()
cli.define_length_flags()
flags.adopt_module_key_flags(cli)  # --help lists them with the script's own flags
FLAGS = flags.FLAGS
# The flags that set no settings field: read and checked by validate() only, or passed under another name.
READ_HERE = ("albert_hub_module_handle",  # becomes --albert_config_file, --init_checkpoint, --spm_model_file
             "num_tpu_cores",  # kept for compatibility (the TPU strategy finds its cores)
             "progress",  # the download progress bar (albert.ground.cli.run)
             "task_name",  # only race
             "num_keep_checkpoint")  # Runtime.keep_checkpoint_max (the original's name)


def validate() -> Runtime:
    """Every check that needs no TensorFlow; the shared runtime settings."""
    FLAGS.init_checkpoint, FLAGS.albert_config_file, FLAGS.spm_model_file = model_files(
        FLAGS.init_checkpoint, FLAGS.albert_config_file, FLAGS.spm_model_file, FLAGS.vocab_file,
        FLAGS.albert_hub_module_handle)
    cli.require({"data_dir": FLAGS.data_dir, "output_dir": FLAGS.output_dir,
                 "albert_config_file": FLAGS.albert_config_file})
    if FLAGS.task_name.lower() != "race":
        raise AlbertError(f"--task_name {FLAGS.task_name!r}: run_race.py only runs race")
    if not FLAGS.spm_model_file and not FLAGS.vocab_file:
        raise AlbertError("--spm_model_file (SentencePiece) or --vocab_file (WordPiece) is required")
    if FLAGS.high_only and FLAGS.middle_only:
        raise AlbertError("--high_only and --middle_only exclude each other")
    if not (FLAGS.do_train or FLAGS.do_eval or FLAGS.do_predict or FLAGS.export_dir):
        raise AlbertError("nothing to do: pass at least one of --do_train, --do_eval, --do_predict, --export_dir")
    for name in ("max_seq_length", "max_qa_length", "train_batch_size", "eval_batch_size", "predict_batch_size",
                 "train_step", "num_keep_checkpoint"):
        cli.check_at_least(name, getattr(FLAGS, name), 1)
    cli.check_finite("learning_rate", FLAGS.learning_rate)
    if FLAGS.max_seq_length <= FLAGS.max_qa_length + 3:
        raise AlbertError(f"--max_seq_length {FLAGS.max_seq_length} leaves no room for the article after "
                          f"--max_qa_length {FLAGS.max_qa_length} and 3 special tokens")
    boundaries(FLAGS.max_seq_length, FLAGS.length_buckets)  # a malformed value is one line here
    runtime = cli.settings(Runtime, FLAGS, keep_checkpoint_max=FLAGS.num_keep_checkpoint,
                           gradient_accumulation_steps=1)  # no such flag: whole batches
    check_model_files(FLAGS.albert_config_file, FLAGS.max_seq_length, FLAGS.spm_model_file, FLAGS.vocab_file,
                      FLAGS.init_checkpoint)
    cli.check_onnx_export(FLAGS.onnx_export, FLAGS.export_dir)
    check_export_dir(FLAGS.export_dir, (FLAGS.output_dir, FLAGS.albert_config_file, FLAGS.spm_model_file,
                                        FLAGS.vocab_file, FLAGS.init_checkpoint, FLAGS.data_dir))
    return runtime


def main(argv):
    del argv
    runtime = validate()
    from albert.jobs import race  # TensorFlow loads here, once the flags are checked

    settings = cli.settings(race.RaceRun, FLAGS)
    cli.check_every_flag_read(FLAGS, (Runtime, race.RaceRun), READ_HERE)
    race.run(settings, runtime)


if __name__ == "__main__":
    cli.run(main, output_dir_flag="output_dir")
