r"""Fine-tune ALBERT on SQuAD 1.1 (span head) or 2.0 (`--version_2_with_negative`: the original XLNet-style head
with an answer-class logit): train, evaluate every checkpoint on the predict file, keep the best by F1, predict.

    python run_squad.py --albert_config_file=albert_config.json --spm_model_file=30k-clean.model \
        --init_checkpoint=albert_base/model.ckpt-best --train_file=train-v1.1.json --predict_file=dev-v1.1.json \
        --output_dir=out/squad --do_train --do_predict --max_seq_length=384 --doc_stride=128 \
        --train_batch_size=48 --learning_rate=5e-5 --num_train_epochs=2.0

Outputs in --output_dir: predictions.json, nbest_predictions.json, null_odds.json (2.0), eval_results.txt (one
block per evaluated checkpoint), best_trial.txt and model.ckpt-best.
"""

import json
import os
import random

from absl import flags

from albert import cli, litert, runner
from albert.errors import AlbertError

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
flags.DEFINE_string("albert_hub_module_handle", None, "Not supported: pass --init_checkpoint.")
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
litert.define_flag()
flags.adopt_module_key_flags(litert)  # --help lists it with the script's own flags
flags.DEFINE_bool("version_2_with_negative", False, "SQuAD 2.0: questions may have no answer.")
flags.DEFINE_integer("start_n_top", 5, "2.0: beam size over start positions.")
flags.DEFINE_integer("end_n_top", 5, "2.0: beam size over end positions per start.")
flags.DEFINE_float("dropout_prob", 0.1, "2.0: dropout in the answer-class head.")
flags.DEFINE_float("null_score_diff_threshold", None, "2.0: predict no answer where the no-answer score exceeds "
                   "this (default: the best-F1 threshold on the predict file's own answers).")
runner.define_runtime_flags()
flags.adopt_module_key_flags(runner)  # --help lists them with the script's own flags
FLAGS = flags.FLAGS


def settings():
    from albert.tasks.squad import Settings

    return Settings(FLAGS.max_seq_length, FLAGS.doc_stride, FLAGS.max_query_length, FLAGS.do_lower_case)


def validate():
    cli.model_files_from_init_checkpoint(FLAGS)
    cli.require({"albert_config_file": FLAGS.albert_config_file, "output_dir": FLAGS.output_dir})
    if not FLAGS.spm_model_file:
        raise AlbertError("--spm_model_file is required: SQuAD features align SentencePiece pieces with the text")
    if FLAGS.albert_hub_module_handle:
        raise AlbertError("--albert_hub_module_handle is not supported; pass the checkpoint as --init_checkpoint")
    if not (FLAGS.do_train or FLAGS.do_predict or FLAGS.export_dir):
        raise AlbertError("nothing to do: pass --do_train, --do_predict and/or --export_dir")
    if FLAGS.do_train and not FLAGS.train_file:
        raise AlbertError("--do_train needs --train_file")
    if FLAGS.do_predict and not FLAGS.predict_file:
        raise AlbertError("--do_predict needs --predict_file")
    for name in ("train_batch_size", "predict_batch_size", "save_checkpoints_steps", "iterations_per_loop",
                 "keep_checkpoint_max", "n_best_size", "max_answer_length", "start_n_top", "end_n_top",
                 "max_seq_length", "max_query_length"):
        cli.check_at_least(name, getattr(FLAGS, name), 1)
    cli.check_probability("warmup_proportion", FLAGS.warmup_proportion)
    cli.check_finite("num_train_epochs", FLAGS.num_train_epochs)
    cli.check_probability("dropout_prob", FLAGS.dropout_prob)
    settings().check()
    for name in ("train_file", "predict_file", "spm_model_file", "albert_config_file"):
        path = getattr(FLAGS, name)
        if path and "://" not in path and not os.path.isfile(path):
            raise AlbertError(f"{path}: --{name} not found")
    runner.preflight(FLAGS)


def main(argv):
    del argv
    validate()
    import tensorflow as tf

    from albert import AlbertSquadV1, AlbertSquadV2
    from albert.weights import init_from_checkpoint
    from albert.input_pipeline import squad_dataset
    from albert.optimization import create_optimizer
    from albert.tasks import squad
    from albert.tokenization import load_sentencepiece
    from albert.training import Trainer

    version_2 = FLAGS.version_2_with_negative
    config, strategy = runner.setup(FLAGS)
    sp_model = load_sentencepiece(FLAGS.spm_model_file)
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    with strategy.scope():
        model = (AlbertSquadV2(config, FLAGS.start_n_top, FLAGS.end_n_top, FLAGS.dropout_prob) if version_2
                 else AlbertSquadV1(config))

    # Every input is read and checked before any feature file is written.
    if FLAGS.do_train:
        examples = squad.read_examples(FLAGS.train_file, True)
        random.Random(12345).shuffle(examples)
        num_train_steps = int(len(examples) / FLAGS.train_batch_size * FLAGS.num_train_epochs)
        if num_train_steps < 1:
            raise AlbertError(f"--num_train_epochs {FLAGS.num_train_epochs} over {len(examples)} questions at "
                              f"--train_batch_size {FLAGS.train_batch_size} makes no training step")
        if FLAGS.train_batch_size % strategy.num_replicas_in_sync:
            raise AlbertError(f"--train_batch_size {FLAGS.train_batch_size} must divide evenly over "
                              f"{strategy.num_replicas_in_sync} replica(s)")
    predict = None
    if FLAGS.do_predict:
        record = FLAGS.predict_feature_file or os.path.join(FLAGS.output_dir, "predict.tf_record")
        dataset_json = squad.load_json(FLAGS.predict_file)
        predict = {"record": record, "examples": squad.read_examples(FLAGS.predict_file, False, dataset_json),
                   "dataset_json": dataset_json}
        predict["has_answers"] = all("answers" in qa for article in predict["dataset_json"]["data"]
                                     for paragraph in article.get("paragraphs", []) for qa in paragraph["qas"])
        if version_2 and not predict["has_answers"] and FLAGS.null_score_diff_threshold is None:
            raise AlbertError(f"{FLAGS.predict_file} has no answers to tune the no-answer threshold on; pass "
                              "--null_score_diff_threshold (the value tuned on dev)")
        predict["metadata"] = squad.cached_features(predict["examples"], sp_model, settings(), False, record,
                                                    FLAGS.predict_feature_left_file or record + ".json")

    def evaluate(step, _path=None):
        results = predict_and_write(model, predict, version_2)
        if results is None:
            return
        results["global_step"] = step
        runner.append_eval_results(os.path.join(FLAGS.output_dir, "eval_results.txt"), results)
        trainer.write_summaries("eval", results, step)  # evaluate runs only from the training loop
        best_step, best_value = runner.record_best(model, FLAGS.output_dir, step, results["f1"])
        print(f"eval step {step}: " + " ".join(f"{k} {results[k]:.4f}" for k in ("exact", "exact_match", "f1")
                                                 if k in results) + f" | best f1 {best_value:.4f} at step {best_step}")

    if FLAGS.do_train:
        record = FLAGS.train_feature_file or os.path.join(FLAGS.output_dir, "train.tf_record")
        squad.cached_features(examples, sp_model, settings(), True, record, record + ".json")
        with strategy.scope():
            optimizer = create_optimizer(FLAGS.learning_rate, num_train_steps,
                                         int(num_train_steps * FLAGS.warmup_proportion), "adamw", model=model)
        loop = runner.loop_config(FLAGS, config, FLAGS.output_dir, num_train_steps, FLAGS.keep_checkpoint_max)
        trainer = Trainer(strategy, model, optimizer, squad.squad_v2_loss if version_2 else squad.squad_v1_loss,
                          loop, loss_scaling=FLAGS.mixed_precision == "fp16")
        if tf.train.latest_checkpoint(FLAGS.output_dir) is None and FLAGS.init_checkpoint:
            print(init_from_checkpoint(model, FLAGS.init_checkpoint))
        runner.record_model_files(FLAGS, config, FLAGS.output_dir)
        trainer.train(lambda ctx, batch: squad_dataset([record], FLAGS.max_seq_length, batch, True, ctx,
                                                       seed=FLAGS.random_seed),
                      on_checkpoint=evaluate if predict and predict["has_answers"] else None)
    if predict or FLAGS.export_dir:
        init_from_checkpoint(model, runner.prediction_checkpoint(FLAGS.output_dir, FLAGS.init_checkpoint))
    report = None
    if FLAGS.export_dir:
        from albert.export import export_squad

        report = export_squad(model, version_2, FLAGS.export_dir, FLAGS.max_seq_length, FLAGS.tflite_quantization)
        print(f"exported the serving model to {FLAGS.export_dir} and {report['path']} ({report['bytes']:,} bytes)")
    if predict:
        results = predict_and_write(model, predict, version_2)
        if results is not None:
            runner.write_text(os.path.join(FLAGS.output_dir, "predict_results.txt"),
                              "".join(f"{k} = {results[k]}\n" for k in sorted(results)))
            print("predict " + json.dumps(results))
        if results is not None and report is not None:  # the exported file on the same questions
            lite = predict_and_write(model, predict, version_2, tflite_outputs(report["path"], predict, version_2),
                                     write=False)
            line = litert.report_line(report, FLAGS.tflite_quantization, "f1", lite["f1"], results["f1"])
            runner.write_text(os.path.join(FLAGS.output_dir, "tflite_results.txt"), line + "\n")
            print(line)


def tflite_outputs(path: str, predict: dict, version_2: bool) -> dict:
    """{unique_id: {output name: row}} of a model.tflite over the predict features (as run_model's)."""
    import numpy as np

    from albert.input_pipeline import squad_dataset
    from albert.tasks.squad import model_inputs

    count = predict["metadata"]["num_features"]
    batches = list(squad_dataset([predict["record"]], FLAGS.max_seq_length, FLAGS.predict_batch_size, False)
                   .take(-(-count // FLAGS.predict_batch_size)))
    outputs = litert.run_tflite(path, batches, model_inputs(version_2))
    ids = np.concatenate([batch["unique_ids"].numpy().reshape(-1) for batch in batches])[:count]
    return {int(unique_id): {k: v[row] for k, v in outputs.items()} for row, unique_id in enumerate(ids)}


def predict_and_write(model, predict: dict, version_2: bool, outputs: dict | None = None, write: bool = True):
    """Predict the features (or take `outputs`), decode, write predictions.json, nbest_predictions.json (and
    null_odds.json for 2.0) unless not `write`; returns the official scores (2.0: after the no-answer threshold)
    or None when the file has no answers."""
    from albert.input_pipeline import squad_dataset
    from albert.tasks.squad_eval import evaluate_v1, evaluate_v2
    from albert.tasks.squad_predictions import apply_null_threshold, decode, run_model

    metadata = predict["metadata"]
    if outputs is None:
        dataset = squad_dataset([predict["record"]], FLAGS.max_seq_length, FLAGS.predict_batch_size, False)
        outputs = run_model(model, dataset, metadata["num_features"], version_2, FLAGS.predict_batch_size)
    predictions, nbest, null_odds = decode(predict["examples"], metadata, outputs, FLAGS.n_best_size,
                                           FLAGS.max_answer_length, version_2)
    data = predict["dataset_json"]["data"]
    results = None
    if version_2:
        tuned = evaluate_v2(data, predictions, null_odds) if predict["has_answers"] else {}
        threshold = (FLAGS.null_score_diff_threshold if FLAGS.null_score_diff_threshold is not None
                     else tuned["best_f1_thresh"])
        predictions = apply_null_threshold(predictions, null_odds, threshold)
        if predict["has_answers"]:
            results = evaluate_v2(data, predictions)
            results.update({k: v for k, v in tuned.items() if k.startswith("best_")},
                           null_score_diff_threshold=threshold)
        if write:
            runner.write_text(os.path.join(FLAGS.output_dir, "null_odds.json"),
                              json.dumps(null_odds, indent=4) + "\n")
    elif predict["has_answers"]:
        results = evaluate_v1(data, predictions)
    if write:
        runner.write_text(os.path.join(FLAGS.output_dir, "predictions.json"),
                          json.dumps(predictions, indent=4) + "\n")
        runner.write_text(os.path.join(FLAGS.output_dir, "nbest_predictions.json"),
                          json.dumps(nbest, indent=4) + "\n")
    return results


if __name__ == "__main__":
    cli.run(main, output_dir_flag="output_dir")
