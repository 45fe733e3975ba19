"""RACE fine-tuning (run_race.py): train, evaluate every checkpoint keeping the best, predict the test set
(predictions.json, accuracy overall / middle / high), export the serving model with its model.tflite (packed ids)
and, with a SentencePiece model, the serving model on raw text in its `text/` directory."""

import json
import os

from albert.ground.atomic import write_text
from albert.data import cache
from albert.data.features import PACKED_INPUTS, boundaries, step_boundaries
from albert.data.readers import prediction_batches, race_dataset, race_decoder
from albert.export.litert import file_length
from albert.tasks.race.serving import export_race_text
from albert.export.serving import export_packed
from albert.export.tflite_metadata import describe
from albert.runner.job import FineTuningJob
from albert.runner.outputs import append_eval_results, record_model_files, run_record, write_results
from albert.tasks.race.model import AlbertMultipleChoice
from albert.tasks.classification.features import predict
from albert.tasks.race.examples import NUM_CHOICES, accuracy_by_level, race_loss, read_examples, write_features
from albert.text.tokenization import FullTokenizer
from albert.train.optimizers import create_optimizer
from albert.train.settings import Runtime
from albert.train.setup import begin_job, fine_tuning_trainer
from albert.weights.run_checkpoints import record_best
from albert.tasks.race.settings import RaceRun


def run(settings: RaceRun, runtime: Runtime):
    RaceFineTuning(settings, runtime).run()


class RaceFineTuning(FineTuningJob):
    """Train / evaluate / predict / export once, into settings.output_dir."""

    def __init__(self, settings: RaceRun, runtime: Runtime):
        s = self.settings = settings
        self.runtime, self.output_dir = runtime, s.output_dir
        strategy, self.config = begin_job(runtime, s.albert_config_file, s.output_dir)
        config = self.config
        self.tokenizer = FullTokenizer(s.vocab_file, s.do_lower_case, s.spm_model_file)
        with strategy.scope():
            self.model = AlbertMultipleChoice(config, num_choices=NUM_CHOICES, dropout_prob=s.dropout_prob)
            optimizer = create_optimizer(s.learning_rate, s.train_step, s.warmup_step, "adamw", model=self.model)
        self.bounds = boundaries(s.max_seq_length, s.length_buckets)
        self.prediction_bounds = step_boundaries(s.max_seq_length, s.length_buckets)  # never compiled
        self.trainer = fine_tuning_trainer(runtime, strategy, self.model, optimizer, race_loss, config, s.output_dir,
                                           s.train_step, s.train_batch_size, s.max_seq_length, s.length_buckets,
                                           examples_per_row=NUM_CHOICES)

    def predict(self):
        s = self.settings
        predictions, examples = self.predictions_of("test", s.predict_file, s.predict_batch_size)
        letters = {e.example_id: "ABCD"[int(p)] for e, p in zip(examples, predictions)}
        results = accuracy_by_level(examples, predictions)
        write_text(os.path.join(s.output_dir, "predictions.json"), json.dumps(letters, indent=2) + "\n")
        write_results(os.path.join(s.output_dir, "predict_results.txt"), results)
        print("test " + " ".join(f"{k} {v:.4f}" for k, v in sorted(results.items())))

    def export(self, out: str):
        """The serving model over packed inputs with its model.tflite (and model.onnx), and the one on raw text in
        text/, written in `out` (moved to --export_dir when complete)."""
        s = self.settings
        described = describe(s.tflite_metadata, "ALBERT RACE", "ALBERT fine-tuned on RACE: for each of the 4 "
                             "options [CLS] article [SEP] question with the option [SEP] (inputs [batch, 4, "
                             "length]) -> a logit per option.", s.spm_model_file, s.vocab_file, s.do_lower_case)
        report = export_packed(self.model, PACKED_INPUTS, None, out,
                               file_length(s.max_seq_length, self.bounds, s.tflite_length), s.tflite_quantization,
                               rows_per_example=NUM_CHOICES, described=described, onnx_export=s.onnx_export)
        print(f"exported the serving model to {s.export_dir} and {os.path.join(s.export_dir, 'model.tflite')} "
              f"({report['bytes']:,} bytes)"
              + (f" and model.onnx ({s.onnx_export})" if s.onnx_export != "none" else ""))
        self.export_text(os.path.join(out, "text"))

    def export_text(self, path: str):
        """The serving model on raw text (article, question, options -> probabilities, choice) in `path`, beside
        the packed one; it tokenizes with SentencePiece in the graph, so a WordPiece run has only the packed one."""
        s = self.settings
        if not s.spm_model_file:
            print("no raw-text serving model: it tokenizes with SentencePiece in the graph (--spm_model_file); "
                  "the packed one takes ids from any tokenizer")
            return
        export_race_text(self.model, s.spm_model_file, s.do_lower_case, s.max_seq_length, s.max_qa_length, path,
                         self.bounds)
        print(f"exported the raw-text serving model to {os.path.join(s.export_dir, 'text')} (inputs: article, "
              "question, options [batch, "
              f"{NUM_CHOICES}]; outputs: probabilities, choice)")

    def features(self, split: str, path: str | None, resumed: int | None = None) -> tuple:
        """The split's feature record, rebuilt unless made from these examples, tokenizer and settings (with
        `resumed`, the step a run resumes from, a stale record in the run's directory is refused)."""
        s = self.settings
        examples = read_examples(s.data_dir, split, s.high_only, s.middle_only)
        name = {"dev": "eval", "test": "predict"}.get(split, split)
        path = path or os.path.join(s.output_dir, f"{name}.tf_record")
        key = cache.cache_key(examples, self.tokenizer, split=split, max_seq_length=s.max_seq_length,
                              max_qa_length=s.max_qa_length)
        cache.build(path, key, lambda out: write_features(examples, self.tokenizer, s.max_seq_length, s.max_qa_length,
                                                          out), None if resumed is None else s.output_dir)
        return path, examples

    def predictions_of(self, split: str, path: str | None, batch_size: int) -> tuple:
        """The chosen option of each example, computed in batches grouped by length, in the examples' order."""
        path, examples = self.features(split, path)
        batches = prediction_batches([path], race_decoder(self.settings.max_seq_length), batch_size,
                                     self.prediction_bounds)
        return predict(self.model, batches).argmax(-1), examples

    def training_batches(self, resumed: int | None):
        s = self.settings
        train_path, _ = self.features("train", s.train_file, resumed)
        return lambda context, batch_size: race_dataset([train_path], s.max_seq_length, batch_size, True, context,
                                                        seed=self.runtime.random_seed,
                                                        group_by_length=s.group_by_length)

    def record_files(self):
        s = self.settings
        record_model_files(s.output_dir, self.config, s.spm_model_file, run_record(s, "AlbertMultipleChoice", "race"))

    def evaluate(self, step: int, _path=None):
        s = self.settings
        predictions, examples = self.predictions_of("dev", s.eval_file, s.eval_batch_size)
        results = dict(accuracy_by_level(examples, predictions), global_step=step)
        append_eval_results(os.path.join(s.output_dir, "eval_results.txt"), results)
        self.trainer.summaries.write("eval", results, step)
        record_best(self.model, s.output_dir, step, results["eval_accuracy"])
        print(f"eval step {step}: " + " ".join(f"{k} {v:.4f}" for k, v in sorted(results.items())
                                                 if k != "global_step"))
