r"""Fine-tune ALBERT on a GLUE task: train, evaluate every checkpoint (keeping the best), predict the test set.

    python run_classifier.py --task_name=MNLI --data_dir=glue --output_dir=out/mnli \
        --albert_config_file=albert_config.json --spm_model_file=30k-clean.model \
        --init_checkpoint=albert_base/model.ckpt-best --do_train --do_eval --do_predict \
        --max_seq_length=128 --train_batch_size=128 --learning_rate=3e-5 --train_step=10000 --warmup_step=1000
"""

import math
import os

from absl import flags

from albert import cli, litert, runner
from albert.errors import AlbertError

flags.DEFINE_string("data_dir", None, "Directory holding the task's folder (e.g. MNLI/, CoLA/) in the GLUE layout.")
flags.DEFINE_string("albert_config_file", None, "Model config JSON.")
flags.DEFINE_string("task_name", None, "cola, mnli, mismnli, mrpc, rte, sst-2, sts-b, qqp, qnli, wnli or ax.")
flags.DEFINE_string("vocab_file", None, "WordPiece vocabulary (when --spm_model_file is empty).")
flags.DEFINE_string("spm_model_file", None, "SentencePiece model.")
flags.DEFINE_string("output_dir", None, "Checkpoints, eval results and predictions.")
flags.DEFINE_string("cached_dir", None, "Where feature TFRecords are cached (default --output_dir).")
flags.DEFINE_string("init_checkpoint", None, cli.INIT_CHECKPOINT_HELP)
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
                    "(text_a, and text_b for pair tasks) and returns probabilities and predictions, and in it model.tflite "
                    "(LiteRT: packed ids -> logits).")
litert.define_flag()
flags.adopt_module_key_flags(litert)  # --help lists it with the script's own flags
runner.define_runtime_flags()
flags.adopt_module_key_flags(runner)  # --help lists them with the script's own flags
flags.DEFINE_string("seeds", None, "Comma-separated seeds: fine-tune once per seed (in output_dir/seed_<s>) and "
                    "report the mean, median and best dev metric (small GLUE tasks are seed-sensitive).")
FLAGS = flags.FLAGS

# The GLUE server's file name for each task's predictions.
SUBMISSION_NAMES = {"cola": "CoLA", "mnli": "MNLI-m", "mismnli": "MNLI-mm", "mrpc": "MRPC", "qnli": "QNLI",
                    "qqp": "QQP", "rte": "RTE", "sst-2": "SST-2", "sts-b": "STS-B", "wnli": "WNLI", "ax": "AX"}


def validate():
    cli.model_files_from_init_checkpoint(FLAGS)
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
    for name in ("max_seq_length", "train_batch_size", "eval_batch_size", "predict_batch_size", "train_step",
                 "save_checkpoints_steps", "keep_checkpoint_max", "iterations_per_loop"):
        cli.check_at_least(name, getattr(FLAGS, name), 1)
    if not os.path.isdir(FLAGS.data_dir):
        raise AlbertError(f"{FLAGS.data_dir}: --data_dir not found")
    if FLAGS.cached_dir:
        cli.check_output_path("cached_dir", FLAGS.cached_dir.rstrip("/"), directory=True)
    runner.preflight(FLAGS)


def main(argv):
    del argv
    validate()
    if not FLAGS.seeds:
        fine_tune(FLAGS.random_seed, FLAGS.output_dir)
        return
    try:
        seeds = [int(s) for s in FLAGS.seeds.split(",") if s.strip()]
    except ValueError:
        raise AlbertError(f"--seeds must be comma-separated integers, got {FLAGS.seeds!r}") from None
    if not FLAGS.do_eval:
        raise AlbertError("--seeds compares dev results: pass --do_eval")
    import keras
    import numpy as np

    from albert.tasks.glue import get_task
    from albert.tasks.metrics import best_key

    best = {}
    for seed in seeds:
        keras.backend.clear_session()
        directory = os.path.join(FLAGS.output_dir, f"seed_{seed}")
        fine_tune(seed, directory)
        best[seed] = float(open(os.path.join(directory, "best_trial.txt")).read().split(":")[2])
    key, values = best_key(get_task(FLAGS.task_name).name), np.array(list(best.values()))
    lines = [f"seed {seed}: best {key} {value:.4f}" for seed, value in best.items()]
    lines.append(f"{key} over {len(seeds)} seeds: mean {values.mean():.4f}, median {np.median(values):.4f}, best "
                 f"{values.max():.4f} (seed {max(best, key=best.get)})")
    runner.write_text(os.path.join(FLAGS.output_dir, "seeds_results.txt"), "\n".join(lines) + "\n")
    print("\n".join(lines))


def fine_tune(seed: int, output_dir: str):
    """Train / evaluate / predict once, into output_dir."""
    import numpy as np
    import tensorflow as tf

    from albert import AlbertClassifier
    from albert.weights import init_from_checkpoint
    from albert.input_pipeline import classifier_dataset
    from albert.optimization import create_optimizer
    from albert.tasks.classification import cached_features, classification_loss, predict
    from albert.tasks.glue import get_task
    from albert.tasks.metrics import best_key, glue_metrics
    from albert.tokenization import FullTokenizer
    from albert.training import Trainer

    task = get_task(FLAGS.task_name)
    if task.name == "ax" and (FLAGS.do_train or FLAGS.do_eval):
        raise AlbertError("task ax is predict-only: use --do_predict with a model fine-tuned on MNLI")
    config, strategy = runner.setup(FLAGS, seed)
    tokenizer = FullTokenizer(FLAGS.vocab_file, FLAGS.do_lower_case, FLAGS.spm_model_file)
    cached_dir = FLAGS.cached_dir or FLAGS.output_dir
    if FLAGS.train_batch_size % strategy.num_replicas_in_sync:
        raise AlbertError(f"--train_batch_size {FLAGS.train_batch_size} must divide evenly over "
                          f"{strategy.num_replicas_in_sync} replica(s)")
    tf.io.gfile.makedirs(output_dir)
    num_labels = 1 if task.is_regression else len(task.labels)
    with strategy.scope():
        model = AlbertClassifier(config, num_labels=num_labels)
        optimizer = create_optimizer(FLAGS.learning_rate, FLAGS.train_step, FLAGS.warmup_step, FLAGS.optimizer,
                                     model=model)
    loop = runner.loop_config(FLAGS, config, output_dir, FLAGS.train_step, FLAGS.keep_checkpoint_max)
    trainer = Trainer(strategy, model, optimizer, classification_loss, loop,
                      loss_scaling=FLAGS.mixed_precision == "fp16")

    def logits_of(split, batch_size):
        path, examples = cached_features(task, FLAGS.data_dir, split, tokenizer, FLAGS.max_seq_length, cached_dir)
        dataset = classifier_dataset([path], FLAGS.max_seq_length, task.is_regression, batch_size, False)
        return predict(model, dataset, math.ceil(len(examples) / batch_size))[:len(examples)], examples

    def dev_metrics(logits, examples):
        gold = np.array([e.label if task.is_regression else task.labels.index(e.label) for e in examples])
        predictions = logits[:, 0] if task.is_regression else logits.argmax(-1)
        return glue_metrics(task.name, predictions, gold), gold, predictions

    def evaluate(step, _path=None):
        logits, examples = logits_of("dev", FLAGS.eval_batch_size)
        results, gold, predictions = dev_metrics(logits, examples)
        if task.is_regression:
            results["eval_loss"] = float(np.mean((predictions - gold) ** 2))
        else:
            shifted = logits - logits.max(-1, keepdims=True)
            log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
            results["eval_loss"] = float(-log_probs[np.arange(len(gold)), gold].mean())
        results["global_step"] = step
        runner.append_eval_results(os.path.join(output_dir, "eval_results.txt"), results)
        trainer.write_summaries("eval", results, step)
        key = best_key(task.name)
        best_step, best_value = runner.record_best(model, output_dir, step, results[key])
        print(f"eval step {step}: " + " ".join(f"{k} {v:.4f}" for k, v in sorted(results.items())
                                                 if k != "global_step") + f" | best {key} {best_value:.4f} "
                                                                          f"at step {best_step}")

    if FLAGS.do_train:
        train_file, _ = cached_features(task, FLAGS.data_dir, "train", tokenizer, FLAGS.max_seq_length, cached_dir)
        if tf.train.latest_checkpoint(output_dir) is None and FLAGS.init_checkpoint:
            print(init_from_checkpoint(model, FLAGS.init_checkpoint))
        runner.record_model_files(FLAGS, config, output_dir)
        trainer.train(lambda ctx, batch: classifier_dataset([train_file], FLAGS.max_seq_length, task.is_regression,
                                                            batch, True, ctx, seed=seed),
                      on_checkpoint=evaluate if FLAGS.do_eval else None)
    elif FLAGS.do_eval:
        for path, step in runner.saved_checkpoints(output_dir):
            tf.train.Checkpoint(model=model).read(path).expect_partial()
            evaluate(step)
    if FLAGS.do_predict or FLAGS.export_dir:
        init_from_checkpoint(model, runner.prediction_checkpoint(output_dir, FLAGS.init_checkpoint))
    if FLAGS.do_predict:
        logits, examples = logits_of("test", FLAGS.predict_batch_size)
        write_predictions(task, logits, examples, output_dir)
    if FLAGS.export_dir:
        from albert.export import export_classifier

        pair = any(layout.text_b is not None for layout in task.splits.values())
        from albert.litert import export_tflite

        export_classifier(model, FLAGS.spm_model_file, FLAGS.do_lower_case, list(task.labels or []) or None, pair,
                          FLAGS.max_seq_length, FLAGS.export_dir)
        packed = ("input_ids", "input_mask", "segment_ids")
        report = export_tflite(model, os.path.join(FLAGS.export_dir, "model.tflite"), packed, FLAGS.max_seq_length,
                               quantization=FLAGS.tflite_quantization)
        print(f"exported the serving model to {FLAGS.export_dir} (inputs: text_a{', text_b' if pair else ''}) and "
              f"{report['path']} (packed ids -> logits, {report['bytes']:,} bytes)")
        if FLAGS.do_eval:  # the exported file on dev, next to the float model it came from
            logits, examples = logits_of("dev", FLAGS.eval_batch_size)
            path, _ = cached_features(task, FLAGS.data_dir, "dev", tokenizer, FLAGS.max_seq_length, cached_dir)
            dataset = classifier_dataset([path], FLAGS.max_seq_length, task.is_regression, FLAGS.eval_batch_size,
                                         False).take(math.ceil(len(examples) / FLAGS.eval_batch_size))
            lite = litert.run_tflite(report["path"], dataset, packed)["logits"][:len(examples)]
            key = best_key(task.name)
            line = litert.report_line(report, FLAGS.tflite_quantization, key, dev_metrics(lite, examples)[0][key],
                                      dev_metrics(logits, examples)[0][key])
            runner.write_text(os.path.join(output_dir, "tflite_results.txt"), line + "\n")
            print(line)


def write_predictions(task, logits, examples, output_dir):
    """test_results.tsv (probabilities, or the score for STS-B) and the GLUE submission file (index, label)."""
    import numpy as np

    if task.is_regression:
        rows = [str(np.float32(x)) for x in logits[:, 0]]  # the original's str(np.float32)
        labels = [f"{x:.3f}" for x in logits[:, 0]]
    else:
        shifted = np.exp(logits - logits.max(-1, keepdims=True))
        probabilities = (shifted / shifted.sum(-1, keepdims=True)).astype(np.float32)
        rows = ["\t".join(str(p) for p in row) for row in probabilities]
        labels = [task.labels[i] for i in probabilities.argmax(-1)]
    runner.write_text(os.path.join(output_dir, "test_results.tsv"), "".join(r + "\n" for r in rows))
    submission = "index\tprediction\n" + "".join(f"{e.guid}\t{label}\n" for e, label in zip(examples, labels))
    runner.write_text(os.path.join(output_dir, "submit_results.tsv"), submission)
    runner.write_text(os.path.join(output_dir, SUBMISSION_NAMES[task.name] + ".tsv"), submission)
    print(f"wrote test_results.tsv, submit_results.tsv and {SUBMISSION_NAMES[task.name]}.tsv "
          f"({len(examples)} examples)")


if __name__ == "__main__":
    cli.run(main, output_dir_flag="output_dir")
