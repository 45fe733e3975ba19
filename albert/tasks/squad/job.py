"""SQuAD 1.1 / 2.0 fine-tuning (run_squad.py): train, evaluate every checkpoint on the predict file keeping the
best by F1, predict (predictions.json, nbest_predictions.json, null_odds.json), export the serving model with its
model.tflite and score that file on the same questions, and the serving model on raw text (`text/` in the export)."""

import json
import os
import random

from albert.ground.atomic import write_text
from albert.ground.outputs import writing
from albert.data.features import boundaries, step_boundaries
from albert.data.readers import prediction_batches, squad_dataset, squad_decoder
from albert.ground.errors import AlbertError
from albert.export import litert
from albert.tasks.squad.serving import export_squad
from albert.tasks.squad.serving import export_squad_text
from albert.export.tflite_metadata import describe
from albert.runner.outputs import (append_eval_results, begin_training, record_model_files, run_record,
                                 write_results)
from albert.tasks.squad.model import AlbertSquadV1, AlbertSquadV2
from albert.tasks.squad import examples as squad
from albert.tasks.squad.evaluate import evaluate_v1, evaluate_v2
from albert.tasks.squad.predictions import apply_null_threshold, decode, keyed_outputs, run_model
from albert.text.tokenization import load_sentencepiece
from albert.train.optimizers import create_optimizer
from albert.train.settings import Runtime
from albert.train.setup import begin_job, check_batch_split, fine_tuning_trainer
from albert.weights.loader import init_from_checkpoint
from albert.weights.run_checkpoints import prediction_checkpoint, record_best
from albert.runner.settings import say_long_warmup, warmup_steps
from albert.tasks.squad.settings import SquadRun


def run(settings: SquadRun, runtime: Runtime):
    SquadFineTuning(settings, runtime).run()


class SquadFineTuning:
    def __init__(self, settings: SquadRun, runtime: Runtime):
        s = self.settings = settings
        self.version_2 = s.version_2_with_negative
        self.bounds = boundaries(s.max_seq_length, s.length_buckets)
        self.prediction_bounds = step_boundaries(s.max_seq_length, s.length_buckets)  # never compiled
        strategy, self.config = begin_job(runtime, s.albert_config_file, s.output_dir)
        config = self.config
        self.sp_model = load_sentencepiece(s.spm_model_file)
        with strategy.scope():
            self.model = (AlbertSquadV2(config, s.start_n_top, s.end_n_top, s.dropout_prob) if self.version_2
                          else AlbertSquadV1(config))
        self.strategy, self.runtime = strategy, runtime
        # Every input is read and checked before any feature file is written.
        if s.do_train:
            self.examples = squad.read_examples(s.train_file, True)
            random.Random(12345).shuffle(self.examples)
            self.num_train_steps = int(len(self.examples) / s.train_batch_size * s.num_train_epochs)
            if self.num_train_steps < 1:
                raise AlbertError(f"--num_train_epochs {s.num_train_epochs} over {len(self.examples)} questions at "
                                  f"--train_batch_size {s.train_batch_size} makes no training step")
            check_batch_split("train_batch_size", s.train_batch_size, strategy.num_replicas_in_sync)
        self.predict = self._predict_inputs() if s.do_predict else None
        self.trainer = None

    def _predict_inputs(self) -> dict:
        """The predict file's examples, its features (built once, cached) and whether it has answers to score."""
        s = self.settings
        record = s.predict_feature_file or os.path.join(s.output_dir, "predict.tf_record")
        dataset_json = squad.load_json(s.predict_file)
        examples = squad.read_examples(s.predict_file, False, dataset_json, self.version_2)
        predict = {"record": record, "examples": examples, "dataset_json": dataset_json}
        predict["has_answers"] = all("answers" in qa for article in dataset_json["data"]
                                     for paragraph in article.get("paragraphs", []) for qa in paragraph["qas"])
        if self.version_2 and not predict["has_answers"] and s.null_score_diff_threshold is None:
            raise AlbertError(f"{s.predict_file} has no answers to tune the no-answer threshold on; pass "
                              "--null_score_diff_threshold (the value tuned on dev)")
        predict["metadata"] = squad.cached_features(predict["examples"], self.sp_model, s.features, False, record,
                                                    s.predict_feature_left_file or record + ".json")
        return predict

    def run(self):
        s = self.settings
        if s.do_train:
            self.train()
        if self.predict or s.export_dir:
            init_from_checkpoint(self.model, prediction_checkpoint(s.output_dir, s.init_checkpoint))
        if not s.export_dir:
            self.predict_with(None)
            return
        with writing(s.export_dir, s.export_command, "--export_dir") as out:
            results = self.predict_with(self.export(out))
            self.export_text(os.path.join(out, "text"), results)

    def predict_with(self, report: dict | None) -> dict | None:
        """--do_predict's predictions and results, and with `report` (the export's model.tflite) the exported
        file's F1 on the same questions beside the model's; the results (None without --do_predict or answers)."""
        s = self.settings
        if not self.predict:
            return None
        results = self.predict_and_write()
        if results is not None:
            write_results(os.path.join(s.output_dir, "predict_results.txt"), results)
            print("predict " + json.dumps(results))
        if results is not None and report is not None:  # the exported file on the same questions
            lite = self.predict_and_write(self.tflite_outputs(report["path"]), write=False)
            shown = dict(report, path=os.path.join(s.export_dir, "model.tflite"))  # where it is once moved into place
            line = litert.report_line(shown, s.tflite_quantization, "f1", lite["f1"], results["f1"])
            write_text(os.path.join(s.output_dir, "tflite_results.txt"), line + "\n")
            print(line)
        return results

    def export(self, out: str) -> dict:
        """The serving SavedModel and its model.tflite with TFLite metadata (--tflite_metadata), written in `out`
        (moved to --export_dir when complete); the file's length fixed by default for 1.1 (the Task Library's
        BertQuestionAnswerer reads only that)."""
        s, version = self.settings, "2.0" if self.version_2 else "1.1"
        described = describe(s.tflite_metadata, f"ALBERT SQuAD {version}",
                             f"ALBERT fine-tuned on SQuAD {version}: [CLS] question [SEP] context [SEP] -> "
                             + ("the answer beam (start / end log-probabilities and indices) and the no-answer "
                                "logit." if self.version_2 else "start and end logits."),
                             s.spm_model_file, None, s.do_lower_case)
        length = litert.file_length(s.max_seq_length, self.bounds, s.tflite_length, runtime_fixed=not self.version_2)
        report = export_squad(self.model, self.version_2, out, length, s.tflite_quantization, described,
                              s.onnx_export)
        print(f"exported the serving model to {s.export_dir} and {os.path.join(s.export_dir, 'model.tflite')} "
              f"({report['bytes']:,} bytes)"
              + (f" and model.onnx ({s.onnx_export})" if s.onnx_export != "none" else ""))
        return report

    def export_text(self, path: str, results: dict | None):
        """The serving model on raw text (question, context -> answer, offsets, score) in `path`, beside the packed
        one. 2.0's no-answer threshold: --null_score_diff_threshold, else the one this run tuned on the predict
        file's answers, else 0.0 (AlbertSquadV2.answer's default)."""
        s = self.settings
        threshold, origin = s.null_score_diff_threshold, "--null_score_diff_threshold"
        if threshold is None and results and "null_score_diff_threshold" in results:
            threshold, origin = results["null_score_diff_threshold"], f"tuned on {s.predict_file}"
        if threshold is None:
            threshold, origin = 0.0, "the default"
        export_squad_text(self.model, s.spm_model_file, s.do_lower_case, s.max_seq_length, s.doc_stride,
                          s.max_query_length, s.n_best_size, s.max_answer_length, path, threshold, self.bounds)
        outputs = "answer, start, end, score" + (", null_score, has_answer" if self.version_2 else "")
        print(f"exported the raw-text serving model to {os.path.join(s.export_dir, 'text')} (inputs: question, "
              f"context; outputs: {outputs}"
              + (f"; no-answer threshold {threshold:g}, {origin}" if self.version_2 else "") + ")")

    def train(self):
        s = self.settings
        with self.strategy.scope():
            optimizer = create_optimizer(s.learning_rate, self.num_train_steps,
                                         warmup_steps(s, self.num_train_steps), "adamw", model=self.model)
        say_long_warmup(s, self.num_train_steps)
        # SQuAD 1.1's loss is a softmax over every position, padding included: its training batches stay whole.
        self.trainer = fine_tuning_trainer(self.runtime, self.strategy, self.model, optimizer,
                                           squad.squad_v2_loss if self.version_2 else squad.squad_v1_loss,
                                           self.config, s.output_dir, self.num_train_steps, s.train_batch_size,
                                           s.max_seq_length, s.length_buckets if self.version_2 else None)
        resumed = begin_training(self.trainer, s.init_checkpoint)
        record = s.train_feature_file or os.path.join(s.output_dir, "train.tf_record")
        squad.cached_features(self.examples, self.sp_model, s.features, True, record, record + ".json",
                              resumed_run=None if resumed is None else s.output_dir, source=s.train_file)
        self.trainer.train(lambda ctx, batch: squad_dataset([record], s.max_seq_length, batch, True, ctx,
                                                            seed=self.runtime.random_seed,
                                                            group_by_length=s.group_by_length),
                           on_checkpoint=self.evaluate if self.predict and self.predict["has_answers"] else None,
                           on_started=lambda: record_model_files(
                               s.output_dir, self.config, s.spm_model_file, run_record(
                               s, "AlbertSquadV2" if self.version_2 else "AlbertSquadV1", "squad")))

    def evaluate(self, step: int, _path=None):
        s = self.settings
        results = self.predict_and_write()
        results["global_step"] = step
        append_eval_results(os.path.join(s.output_dir, "eval_results.txt"), results)
        self.trainer.summaries.write("eval", results, step)
        best_step, best_value = record_best(self.model, s.output_dir, step, results["f1"])
        print(f"eval step {step}: " + " ".join(f"{k} {results[k]:.4f}" for k in ("exact", "exact_match", "f1")
                                                 if k in results) + f" | best f1 {best_value:.4f} at step {best_step}")

    def tflite_outputs(self, path: str) -> dict:
        """{unique_id: {output name: row}} of a model.tflite over the predict features, in the float model's
        batches (grouped by length and cut to it, unless the file has a fixed length)."""
        s = self.settings
        batches = prediction_batches([self.predict["record"]], squad_decoder(s.max_seq_length, False),
                                     s.predict_batch_size, self.prediction_bounds)
        return keyed_outputs(litert.tflite_runner(path), batches, self.version_2)

    def predict_and_write(self, outputs: dict | None = None, write: bool = True):
        """Predict the features (or take `outputs`), decode, write predictions.json, nbest_predictions.json (and
        null_odds.json for 2.0) unless not `write`; returns the official scores (2.0: after the no-answer threshold)
        or None when the file has no answers."""
        s, predict, version_2 = self.settings, self.predict, self.version_2
        metadata = predict["metadata"]
        if outputs is None:  # every feature once, in batches grouped by length (outputs are keyed by unique id)
            batches = prediction_batches([predict["record"]], squad_decoder(s.max_seq_length, False),
                                         s.predict_batch_size, self.prediction_bounds)
            outputs = run_model(self.model, batches, version_2)
        predictions, nbest, null_odds = decode(predict["examples"], metadata, outputs, s.n_best_size,
                                               s.max_answer_length, version_2)
        data = predict["dataset_json"]["data"]
        results = None
        if version_2:
            tuned = evaluate_v2(data, predictions, null_odds) if predict["has_answers"] else {}
            threshold = (s.null_score_diff_threshold if s.null_score_diff_threshold is not None
                         else tuned["best_f1_thresh"])
            predictions = apply_null_threshold(predictions, null_odds, threshold)
            if predict["has_answers"]:
                results = evaluate_v2(data, predictions)
                results.update({k: v for k, v in tuned.items() if k.startswith("best_")},
                               null_score_diff_threshold=threshold)
            if write:
                write_text(os.path.join(s.output_dir, "null_odds.json"), json.dumps(null_odds, indent=4) + "\n")
        elif predict["has_answers"]:
            results = evaluate_v1(data, predictions)
        if write:
            write_text(os.path.join(s.output_dir, "predictions.json"), json.dumps(predictions, indent=4) + "\n")
            write_text(os.path.join(s.output_dir, "nbest_predictions.json"), json.dumps(nbest, indent=4) + "\n")
        return results
