r"""Fine-tune ALBERT on RACE (4-option reading comprehension): train, evaluate each checkpoint, predict the test set.

    python run_race.py --data_dir=. --output_dir=out/race --albert_config_file=albert_config.json \
        --spm_model_file=30k-clean.model --init_checkpoint=albert_base/model.ckpt-best \
        --max_seq_length=512 --max_qa_length=128 --train_batch_size=32 --learning_rate=1e-5 --train_step=12000
"""

import json
import math
import os

from absl import flags

from albert import cli, litert, runner
from albert.errors import AlbertError

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
litert.define_flag()
flags.adopt_module_key_flags(litert)  # --help lists it with the script's own flags
runner.define_runtime_flags()
flags.adopt_module_key_flags(runner)  # --help lists them with the script's own flags
FLAGS = flags.FLAGS


def validate():
    cli.model_files_from_init_checkpoint(FLAGS)
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
                 "train_step", "save_checkpoints_steps", "num_keep_checkpoint", "iterations_per_loop"):
        cli.check_at_least(name, getattr(FLAGS, name), 1)
    if FLAGS.max_seq_length <= FLAGS.max_qa_length + 3:
        raise AlbertError(f"--max_seq_length {FLAGS.max_seq_length} leaves no room for the article after "
                          f"--max_qa_length {FLAGS.max_qa_length} and 3 special tokens")
    runner.preflight(FLAGS)


def main(argv):
    del argv
    validate()
    import numpy as np
    import tensorflow as tf

    from albert import AlbertMultipleChoice, feature_cache
    from albert.weights import init_from_checkpoint
    from albert.input_pipeline import race_dataset
    from albert.optimization import create_optimizer
    from albert.tasks.race import accuracy_by_level, race_loss, read_examples, write_features
    from albert.tokenization import FullTokenizer
    from albert.training import Trainer

    config, strategy = runner.setup(FLAGS)
    tokenizer = FullTokenizer(FLAGS.vocab_file, FLAGS.do_lower_case, FLAGS.spm_model_file)
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    with strategy.scope():
        model = AlbertMultipleChoice(config, num_choices=4, dropout_prob=FLAGS.dropout_prob)
        optimizer = create_optimizer(FLAGS.learning_rate, FLAGS.train_step, FLAGS.warmup_step, "adamw", model=model)
    loop = runner.loop_config(FLAGS, config, FLAGS.output_dir, FLAGS.train_step, FLAGS.num_keep_checkpoint,
                              examples_per_row=4)
    trainer = Trainer(strategy, model, optimizer, race_loss, loop, loss_scaling=FLAGS.mixed_precision == "fp16")

    def features(split, path):
        """The split's feature record, rebuilt unless made from these examples, tokenizer and settings."""
        examples = read_examples(FLAGS.data_dir, split, FLAGS.high_only, FLAGS.middle_only)
        name = {"dev": "eval", "test": "predict"}.get(split, split)
        path = path or os.path.join(FLAGS.output_dir, f"{name}.tf_record")
        key = feature_cache.cache_key(examples, tokenizer, split=split, max_seq_length=FLAGS.max_seq_length,
                                      max_qa_length=FLAGS.max_qa_length)
        feature_cache.build(path, key, lambda out: write_features(examples, tokenizer, FLAGS.max_seq_length,
                                                                  FLAGS.max_qa_length, out))
        return path, examples

    def predictions_of(split, path, batch_size):
        path, examples = features(split, path)
        dataset = race_dataset([path], FLAGS.max_seq_length, batch_size, False)
        logits = []
        for batch, _ in zip(dataset, range(math.ceil(len(examples) / batch_size))):
            logits.append(model({k: batch[k] for k in ("input_ids", "input_mask", "segment_ids")}).numpy())
        return np.concatenate(logits)[:len(examples)].argmax(-1), examples

    def evaluate(step, _path=None):
        predictions, examples = predictions_of("dev", FLAGS.eval_file, FLAGS.eval_batch_size)
        results = dict(accuracy_by_level(examples, predictions), global_step=step)
        runner.append_eval_results(os.path.join(FLAGS.output_dir, "eval_results.txt"), results)
        trainer.write_summaries("eval", results, step)
        runner.record_best(model, FLAGS.output_dir, step, results["eval_accuracy"])
        print(f"eval step {step}: " + " ".join(f"{k} {v:.4f}" for k, v in sorted(results.items())
                                                 if k != "global_step"))

    if FLAGS.do_train:
        train_path, _ = features("train", FLAGS.train_file)
        if tf.train.latest_checkpoint(FLAGS.output_dir) is None and FLAGS.init_checkpoint:
            print(init_from_checkpoint(model, FLAGS.init_checkpoint))
        runner.record_model_files(FLAGS, config, FLAGS.output_dir)
        trainer.train(lambda ctx, batch: race_dataset([train_path], FLAGS.max_seq_length, batch, True, ctx,
                                                      seed=FLAGS.random_seed),
                      on_checkpoint=evaluate if FLAGS.do_eval else None)
    elif FLAGS.do_eval:
        for path, step in runner.saved_checkpoints(FLAGS.output_dir):
            tf.train.Checkpoint(model=model).read(path).expect_partial()
            evaluate(step)
    if FLAGS.do_predict or FLAGS.export_dir:
        init_from_checkpoint(model, runner.prediction_checkpoint(FLAGS.output_dir, FLAGS.init_checkpoint))
    if FLAGS.export_dir:
        from albert.export import export_packed

        report = export_packed(model, ("input_ids", "input_mask", "segment_ids"), None, FLAGS.export_dir,
                               FLAGS.max_seq_length, FLAGS.tflite_quantization, rows_per_example=4)
        print(f"exported the serving model to {FLAGS.export_dir} and {report['path']} ({report['bytes']:,} bytes)")
    if FLAGS.do_predict:
        predictions, examples = predictions_of("test", FLAGS.predict_file, FLAGS.predict_batch_size)
        letters = {e.example_id: "ABCD"[int(p)] for e, p in zip(examples, predictions)}
        results = accuracy_by_level(examples, predictions)
        runner.write_text(os.path.join(FLAGS.output_dir, "predictions.json"), json.dumps(letters, indent=2) + "\n")
        runner.write_text(os.path.join(FLAGS.output_dir, "predict_results.txt"),
               "".join(f"{k} = {results[k]}\n" for k in sorted(results)))
        print("test " + " ".join(f"{k} {v:.4f}" for k, v in sorted(results.items())))


if __name__ == "__main__":
    cli.run(main, output_dir_flag="output_dir")
