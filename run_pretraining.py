r"""ALBERT pretraining: masked-LM + sentence-order prediction with LAMB, on any tf.distribute strategy.

    python run_pretraining.py --input_file=data/train-*.tfrecord --output_dir=out \
        --albert_config_file=albert_config.json --train_batch_size=4096 --num_train_steps=125000

A rerun of the same command resumes from the last checkpoint in --output_dir (weights, optimizer, data position).
"""

import json
import math
import os

from absl import flags

from albert import cli, runner
from albert.errors import AlbertError

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
runner.define_runtime_flags()
flags.adopt_module_key_flags(runner)  # --help lists them with the script's own flags
flags.DEFINE_integer("gradient_accumulation_steps", 1, "Micro-batches per update (global batch = their sum).")
FLAGS = flags.FLAGS


def validate():
    cli.model_files_from_init_checkpoint(FLAGS)
    cli.require({"albert_config_file": FLAGS.albert_config_file, "input_file": FLAGS.input_file,
                 "output_dir": FLAGS.output_dir})
    if not FLAGS.do_train and not FLAGS.do_eval:
        raise AlbertError("nothing to do: pass --do_train and/or --do_eval")
    if FLAGS.masked_lm_budget:
        raise AlbertError("--masked_lm_budget (online masking) is not supported; the original never made it work")
    for name in ("train_batch_size", "eval_batch_size", "num_train_steps", "save_checkpoints_steps",
                 "keep_checkpoint_max", "iterations_per_loop", "max_eval_steps", "gradient_accumulation_steps",
                 "max_seq_length", "max_predictions_per_seq"):
        cli.check_at_least(name, getattr(FLAGS, name), 1)
    cli.check_at_least("num_warmup_steps", FLAGS.num_warmup_steps, 0)
    runner.preflight(FLAGS)


def main(argv):
    del argv
    validate()
    import tensorflow as tf

    from albert import AlbertPretrainer
    from albert.weights import init_from_checkpoint, save_original_checkpoint
    from albert.feature_specs import pretraining_features
    from albert.input_pipeline import check_records, expand_files, pretraining_dataset
    from albert.optimization import create_optimizer
    from albert.tasks.pretraining import pretraining_loss
    from albert.training import Trainer

    config, strategy = runner.setup(FLAGS)
    train_files = expand_files(FLAGS.input_file)
    eval_files = expand_files(FLAGS.eval_file) if FLAGS.eval_file else train_files
    spec = pretraining_features(FLAGS.max_seq_length, FLAGS.max_predictions_per_seq)
    lengths = {name: ("--max_seq_length", FLAGS.max_seq_length) for name in ("input_ids", "input_mask", "segment_ids")}
    lengths.update({name: ("--max_predictions_per_seq", FLAGS.max_predictions_per_seq)
                    for name in ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights")})
    spec.pop("token_boundary")  # not read
    check_records(sorted(set(train_files if FLAGS.do_train else []) | set(eval_files if FLAGS.do_eval else [])),
                  spec, lengths, config.vocab_size, "pretraining records")
    replicas = strategy.num_replicas_in_sync
    micro_batch = FLAGS.train_batch_size // FLAGS.gradient_accumulation_steps
    if FLAGS.train_batch_size % (FLAGS.gradient_accumulation_steps * replicas):
        raise AlbertError(f"--train_batch_size {FLAGS.train_batch_size} must divide evenly over "
                          f"{replicas} replica(s) x {FLAGS.gradient_accumulation_steps} accumulation step(s)")
    if FLAGS.eval_batch_size % replicas:
        raise AlbertError(f"--eval_batch_size {FLAGS.eval_batch_size} must divide evenly over {replicas} replica(s)")
    tf.io.gfile.makedirs(FLAGS.output_dir)

    with strategy.scope():
        model = AlbertPretrainer(config)
        optimizer = create_optimizer(FLAGS.learning_rate, FLAGS.num_train_steps, FLAGS.num_warmup_steps,
                                     FLAGS.optimizer, FLAGS.poly_power, FLAGS.start_warmup_step, model=model)
    loop = runner.loop_config(FLAGS, config, FLAGS.output_dir, FLAGS.num_train_steps, FLAGS.keep_checkpoint_max,
                              micro_batch, predictions=FLAGS.max_predictions_per_seq)
    trainer = Trainer(strategy, model, optimizer, pretraining_loss, loop,
                      loss_scaling=FLAGS.mixed_precision == "fp16")

    def dataset_fn(files, training):
        def make(context, batch_size):
            return pretraining_dataset(files, FLAGS.max_seq_length, FLAGS.max_predictions_per_seq, batch_size,
                                       training, context, seed=FLAGS.random_seed)
        return make

    best_file = os.path.join(FLAGS.output_dir, "model.ckpt-best.json")
    best = json.load(tf.io.gfile.GFile(best_file)) if tf.io.gfile.exists(best_file) else {}

    def evaluate(step, _path=None):
        results = trainer.evaluate(dataset_fn(eval_files, False), FLAGS.max_eval_steps, FLAGS.eval_batch_size)
        results["loss"] = results["masked_lm_loss"] + results["sentence_order_loss"]
        results["global_step"] = step
        runner.append_eval_results(os.path.join(FLAGS.output_dir, "eval_results.txt"), results)
        trainer.write_summaries("eval", results, step)
        print("eval " + " ".join(f"{k} {results[k]:.4f}" for k in sorted(results) if k != "global_step"))
        if results["masked_lm_accuracy"] > best.get("masked_lm_accuracy", -math.inf):
            best.update(results)
            save_original_checkpoint(model, os.path.join(FLAGS.output_dir, "model.ckpt-best"), global_step=step)
            runner.write_text(best_file, json.dumps(best, indent=2, sort_keys=True) + "\n")
        return results

    if FLAGS.do_train:
        if tf.train.latest_checkpoint(FLAGS.output_dir) is None and FLAGS.init_checkpoint:
            print(init_from_checkpoint(model, FLAGS.init_checkpoint, FLAGS.init_from_group0))
        runner.record_model_files(FLAGS, config, FLAGS.output_dir)
        trainer.train(dataset_fn(train_files, True), on_checkpoint=evaluate if FLAGS.do_eval else None)
    elif FLAGS.do_eval:
        for path, step in runner.saved_checkpoints(FLAGS.output_dir):
            tf.train.Checkpoint(model=model).read(path).expect_partial()
            evaluate(step)


if __name__ == "__main__":
    cli.run(main, output_dir_flag="output_dir")
