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

from absl import flags

from albert.ground import cli
from albert.data.features import boundaries
from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote
from albert.tasks.squad import Settings
from albert.train.settings import Runtime, check_export_dir, check_model_files
from albert.weights.formats import model_files

flags.DEFINE_string("albert_config_file", None, "Model config JSON.")
flags.DEFINE_string("vocab_file", None, "Unused: SQuAD features need the SentencePiece model.")
flags.DEFINE_string("spm_model_file", None, "SentencePiece model.")
flags.DEFINE_string("output_dir", None, "Checkpoints, predictions and eval results.")
flags.DEFINE_string("train_file", None, "SQuAD JSON for training (train-v1.1.json, train-v2.0.json).")
flags.DEFINE_string("predict_file", None, "SQuAD JSON to predict (and score, when it has answers).")
flags.DEFINE_string("train_feature_file", None, "Train feature TFRecord (default output_dir/train.tf_record); "
                    "built once, reused while its settings and questions match.")
flags.DEFINE_string("predict_feature_file", None, "Predict feature TFRecord (default output_dir/predict.tf_record).")
flags.DEFINE_string("predict_feature_left_file", None, "The decoder's metadata of the predict features, JSON "
                    "(default: the predict feature file + .json).")
flags.DEFINE_string("init_checkpoint", None, cli.INIT_CHECKPOINT_HELP)
flags.DEFINE_string("albert_hub_module_handle", None, cli.HUB_MODULE_HELP)
flags.DEFINE_bool("do_lower_case", True, "Lower-case the text.")
flags.DEFINE_integer("max_seq_length", 384, "Tokens per feature.")
flags.DEFINE_integer("doc_stride", 128, "Pieces between the starts of consecutive document spans.")
flags.DEFINE_integer("max_query_length", 64, "Question pieces kept (the first ones).")
flags.DEFINE_bool("do_train", False, "Train.")
flags.DEFINE_bool("do_predict", False, "Predict --predict_file (scored at every checkpoint when it has answers).")
flags.DEFINE_integer("train_batch_size", 32, "Global training batch.")
flags.DEFINE_integer("predict_batch_size", 8, "Prediction batch.")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate (AdamW).")
flags.DEFINE_float("num_train_epochs", 3.0, "Epochs over the training questions.")
flags.DEFINE_float("warmup_proportion", 0.1, "Fraction of the steps spent warming up.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "Checkpoint (and evaluate) every this many steps.")
flags.DEFINE_integer("iterations_per_loop", 1000, "Steps per compiled loop call.")
flags.DEFINE_integer("keep_checkpoint_max", 5, "Checkpoints kept.")
flags.DEFINE_integer("n_best_size", 20, "Candidates kept per question in nbest_predictions.json.")
flags.DEFINE_integer("max_answer_length", 30, "Longest answer, in pieces.")
flags.DEFINE_bool("use_einsum", True, "Kept for compatibility (attention is always einsum-shaped).")
flags.DEFINE_string("export_dir", None, "Export model.ckpt-best as a serving SavedModel over packed inputs (the "
                    "head's logits; see the README), with its LiteRT model.tflite.")
cli.define_tflite_flag()
cli.define_onnx_flag()
flags.DEFINE_bool("version_2_with_negative", False, "SQuAD 2.0: questions may have no answer.")
flags.DEFINE_integer("start_n_top", 5, "2.0: beam size over start positions.")
flags.DEFINE_integer("end_n_top", 5, "2.0: beam size over end positions per start.")
flags.DEFINE_float("dropout_prob", 0.1, "2.0: dropout in the answer-class head.")
flags.DEFINE_float("null_score_diff_threshold", None, "2.0: predict no answer where the no-answer score exceeds "
                   "this (default: the best-F1 threshold on the predict file's own answers).")
cli.define_runtime_flags()
cli.define_length_flags()
flags.adopt_module_key_flags(cli)  # --help lists them with the script's own flags
FLAGS = flags.FLAGS
# The flags that set no settings field: read and checked by validate() only, or kept for compatibility.
READ_HERE = ("albert_hub_module_handle",  # becomes --albert_config_file, --init_checkpoint, --spm_model_file
             "num_tpu_cores",  # kept for compatibility (the TPU strategy finds its cores)
             "progress",  # the download progress bar (albert.ground.cli.run)
             "use_einsum",  # kept for compatibility (attention is always einsum-shaped)
             "vocab_file")  # unused: SQuAD features need the SentencePiece model


def validate() -> Runtime:
    """Every check that needs no TensorFlow; the shared runtime settings."""
    FLAGS.init_checkpoint, FLAGS.albert_config_file, FLAGS.spm_model_file = model_files(
        FLAGS.init_checkpoint, FLAGS.albert_config_file, FLAGS.spm_model_file, None,
        FLAGS.albert_hub_module_handle)
    cli.require({"albert_config_file": FLAGS.albert_config_file, "output_dir": FLAGS.output_dir})
    if not FLAGS.spm_model_file:
        raise AlbertError("--spm_model_file is required: SQuAD features align SentencePiece pieces with the text")
    if not (FLAGS.do_train or FLAGS.do_predict or FLAGS.export_dir):
        raise AlbertError("nothing to do: pass --do_train, --do_predict and/or --export_dir")
    if FLAGS.group_by_length and not FLAGS.version_2_with_negative:
        raise AlbertError("--group_by_length: SQuAD 1.1's loss runs over every position, padding included, so its "
                          "training batches are not cut to a length; use it with --version_2_with_negative")
    if FLAGS.do_train and not FLAGS.train_file:
        raise AlbertError("--do_train needs --train_file")
    if FLAGS.do_predict and not FLAGS.predict_file:
        raise AlbertError("--do_predict needs --predict_file")
    for name in ("train_batch_size", "predict_batch_size", "n_best_size", "max_answer_length", "start_n_top",
                 "end_n_top", "max_seq_length", "max_query_length"):
        cli.check_at_least(name, getattr(FLAGS, name), 1)
    cli.check_probability("warmup_proportion", FLAGS.warmup_proportion)
    cli.check_finite("num_train_epochs", FLAGS.num_train_epochs)
    cli.check_finite("learning_rate", FLAGS.learning_rate)
    cli.check_probability("dropout_prob", FLAGS.dropout_prob)
    Settings(FLAGS.max_seq_length, FLAGS.doc_stride, FLAGS.max_query_length, FLAGS.do_lower_case).check()
    for name in ("train_file", "predict_file"):
        path = getattr(FLAGS, name)
        if path and not is_remote(path) and not os.path.isfile(path):
            raise AlbertError(f"{path}: --{name} not found")
    boundaries(FLAGS.max_seq_length, FLAGS.length_buckets)  # a malformed value is one line here
    runtime = cli.settings(Runtime, FLAGS, gradient_accumulation_steps=1)  # no such flag: whole batches
    check_model_files(FLAGS.albert_config_file, FLAGS.max_seq_length, FLAGS.spm_model_file,
                      init_checkpoint=FLAGS.init_checkpoint)
    cli.check_onnx_export(FLAGS.onnx_export, FLAGS.export_dir)
    check_export_dir(FLAGS.export_dir, (FLAGS.output_dir, FLAGS.albert_config_file, FLAGS.spm_model_file,
                                        FLAGS.init_checkpoint))
    return runtime


def main(argv):
    del argv
    runtime = validate()
    from albert.jobs import squad  # TensorFlow loads here, once the flags are checked

    settings = cli.settings(squad.SquadRun, FLAGS)
    cli.check_every_flag_read(FLAGS, (Runtime, squad.SquadRun), READ_HERE)
    squad.run(settings, runtime)


if __name__ == "__main__":
    cli.run(main, output_dir_flag="output_dir")
