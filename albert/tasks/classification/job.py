"""Sequence classification fine-tuning (run_classifier.py), on a GLUE task or a user's files
(albert.tasks.classification.own_data): train, evaluate every checkpoint keeping the best, predict the test set, export
a serving model on raw strings with its model.tflite; `--seeds` repeats it per seed and compares."""

import os

import keras
import numpy as np

from albert.ground.atomic import write_text
from albert.data.buckets import in_original_order
from albert.data.features import PACKED_INPUTS, boundaries, step_boundaries
from albert.data.readers import classifier_dataset, classifier_decoder, prediction_batches
from albert.export import litert
from albert.export.onnx import export_onnx
from albert.tasks.classification.serving import classifier_metadata, export_classifier
from albert.export.tflite_metadata import describe
from albert.runner.job import FineTuningJob
from albert.runner.outputs import append_eval_results, record_model_files, run_record
from albert.tasks.classification.model import AlbertClassifier
from albert.tasks.classification.features import cached_features, classification_loss, predict
from albert.tasks.classification.glue import get_task
from albert.tasks.classification.own_data import OwnTask
from albert.tasks.classification.metrics import best_key, task_metrics
from albert.text.tokenization import FullTokenizer
from albert.train.optimizers import create_optimizer
from albert.train.settings import Runtime
from albert.train.setup import begin_job, check_batch_split, fine_tuning_trainer
from albert.weights.run_checkpoints import best_trial, record_best
from albert.tasks.classification.settings import GlueRun

# The GLUE server's file name for each task's predictions.
SUBMISSION_NAMES = {"cola": "CoLA", "mnli": "MNLI-m", "mismnli": "MNLI-mm", "mrpc": "MRPC", "qnli": "QNLI",
                    "qqp": "QQP", "rte": "RTE", "sst-2": "SST-2", "sts-b": "STS-B", "wnli": "WNLI", "ax": "AX"}


def run(settings: GlueRun, runtime: Runtime, task=None):
    """One fine-tuning into output_dir, or with `seeds` one per seed (output_dir/seed_<s>) and the seeds' dev
    results compared in seeds_results.txt. `task`: a GLUE Task (default: --task_name's) or an own_data.OwnTask."""
    task = task or get_task(settings.task_name)
    if not settings.seeds:
        FineTuning(settings, runtime, runtime.random_seed, settings.output_dir, task).run()
        return
    seeds = settings.seeds
    best = {}
    for seed in seeds:
        keras.backend.clear_session()
        directory = os.path.join(settings.output_dir, f"seed_{seed}")
        FineTuning(settings, runtime, seed, directory, task).run()
        best[seed] = best_trial(directory)[2]
    key, values = best_key(task.name), np.array(list(best.values()))
    lines = [f"seed {seed}: best {key} {value:.4f}" for seed, value in best.items()]
    lines.append(f"{key} over {len(seeds)} seeds: mean {values.mean():.4f}, median {np.median(values):.4f}, best "
                 f"{values.max():.4f} (seed {max(best, key=best.get)})")
    write_text(os.path.join(settings.output_dir, "seeds_results.txt"), "\n".join(lines) + "\n")
    print("\n".join(lines))


class FineTuning(FineTuningJob):
    """Train / evaluate / predict / export once, into `output_dir`."""

    def __init__(self, settings: GlueRun, runtime: Runtime, seed: int, output_dir: str, task):
        self.settings, self.seed, self.output_dir = settings, seed, output_dir
        self.task = task
        strategy, self.config = begin_job(runtime, settings.albert_config_file, output_dir, seed)
        config = self.config
        self.tokenizer = FullTokenizer(settings.vocab_file, settings.do_lower_case, settings.spm_model_file)
        self.cached_dir = settings.cached_dir or settings.output_dir  # one feature cache for every seed
        check_batch_split("train_batch_size", settings.train_batch_size, strategy.num_replicas_in_sync)
        with strategy.scope():
            self.model = AlbertClassifier(config, num_labels=1 if task.is_regression else len(task.labels))
            optimizer = create_optimizer(settings.learning_rate, settings.train_step, settings.warmup_step,
                                         settings.optimizer, model=self.model)
        self.bounds = boundaries(settings.max_seq_length, settings.length_buckets)
        self.prediction_bounds = step_boundaries(settings.max_seq_length, settings.length_buckets)  # never compiled
        self.trainer = fine_tuning_trainer(runtime, strategy, self.model, optimizer, classification_loss, config,
                                           output_dir, settings.train_step, settings.train_batch_size,
                                           settings.max_seq_length, settings.length_buckets)

    def predict(self):
        s = self.settings
        logits, examples = self.logits_of("test", s.predict_batch_size)
        (write_own_predictions if isinstance(self.task, OwnTask) else write_predictions)(
            self.task, logits, examples, self.output_dir)

    def features(self, split: str, resumed: int | None = None) -> tuple:
        """(record, examples) of a split; with `resumed` (the step a run resumes from) a stale record in the run's
        directory is refused, not rebuilt (albert.data.cache.build)."""
        s, own = self.settings, isinstance(self.task, OwnTask)
        return cached_features(self.task, s.data_dir, split, self.tokenizer, s.max_seq_length, self.cached_dir,
                               resumed_run=None if resumed is None else self.output_dir,
                               examples=self.task.examples(split) if own else None)

    def train_dataset(self, path: str, batch_size: int, context=None):
        """Training batches: the original's, or grouped by length."""
        return classifier_dataset([path], self.settings.max_seq_length, self.task.is_regression, batch_size, True,
                                  context, seed=self.seed, group_by_length=self.settings.group_by_length)

    def prediction_batches(self, split: str, batch_size: int):
        """A split's features in batches grouped by length, each with its examples' `position`."""
        path, _ = self.features(split)
        decode = classifier_decoder(self.settings.max_seq_length, self.task.is_regression)
        return prediction_batches([path], decode, batch_size, self.prediction_bounds)

    def logits_of(self, split: str, batch_size: int) -> tuple:
        """The model's logits on a split, computed in batches grouped by length, in the examples' order."""
        _, examples = self.features(split)
        return predict(self.model, self.prediction_batches(split, batch_size)), examples

    def training_batches(self, resumed: int | None):
        train_file, _ = self.features("train", resumed)
        return lambda context, batch_size: self.train_dataset(train_file, batch_size, context)

    def record_files(self):
        """The run directory as a model directory, with the task, labels and preprocessing it is trained with."""
        task = self.task
        record = run_record(self.settings, "AlbertClassifier", "own" if isinstance(task, OwnTask) else task.name,
                            labels=None if task.is_regression else tuple(task.labels),
                            regression=task.is_regression, pair=task.pair)
        record_model_files(self.output_dir, self.config, self.settings.spm_model_file, record)

    def dev_metrics(self, logits, examples) -> tuple:
        task = self.task
        gold = np.array([e.label if task.is_regression else task.labels.index(e.label) for e in examples])
        predictions = logits[:, 0] if task.is_regression else logits.argmax(-1)
        return task_metrics(task, predictions, gold), gold, predictions

    def evaluate(self, step: int, _path=None):
        """Dev metrics of the model as it is, appended to eval_results.txt; model.ckpt-best kept."""
        logits, examples = self.logits_of("dev", self.settings.eval_batch_size)
        results, gold, predictions = self.dev_metrics(logits, examples)
        if self.task.is_regression:
            results["eval_loss"] = float(np.mean((predictions - gold) ** 2))
        else:
            shifted = logits - logits.max(-1, keepdims=True)
            log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
            results["eval_loss"] = float(-log_probs[np.arange(len(gold)), gold].mean())
        results["global_step"] = step
        append_eval_results(os.path.join(self.output_dir, "eval_results.txt"), results)
        self.trainer.summaries.write("eval", results, step)
        key = best_key(self.task.name)
        best_step, best_value = record_best(self.model, self.output_dir, step, results[key])
        print(f"eval step {step}: " + " ".join(f"{k} {v:.4f}" for k, v in sorted(results.items())
                                                 if k != "global_step" and "[" not in k)
              + f" | best {key} {best_value:.4f} at step {best_step}")

    def export(self, out: str):
        """The serving SavedModel on raw strings and, in it, model.tflite (packed ids -> logits) and with
        --onnx_export model.onnx (the same), written in `out` (moved to --export_dir when complete); with --do_eval
        the LiteRT file's dev metric beside the float model's (tflite_results.txt)."""
        s, task = self.settings, self.task
        pair = task.pair
        labels = list(task.labels) if task.labels else None
        export_classifier(self.model, s.spm_model_file, s.do_lower_case, labels, pair, s.max_seq_length, out,
                          self.bounds)
        kind = "regression score" if task.is_regression else f"logits over {', '.join(task.labels)}"
        described = describe(s.tflite_metadata, f"ALBERT {task.directory} classifier",
                             f"ALBERT fine-tuned on {task.directory}: [CLS] text [SEP]"
                             f"{' text_b [SEP]' if pair else ''} -> {kind}.", s.spm_model_file, s.vocab_file,
                             s.do_lower_case, labels=labels, regression=task.is_regression)
        report = litert.export_tflite(self.model, os.path.join(out, "model.tflite"), PACKED_INPUTS,
                                      litert.file_length(s.max_seq_length, self.bounds, s.tflite_length),
                                      quantization=s.tflite_quantization, described=described)
        print(f"exported the serving model to {s.export_dir} (inputs: text_a{', text_b' if pair else ''}) and "
              f"{os.path.join(s.export_dir, 'model.tflite')} (packed ids -> logits, {report['bytes']:,} bytes)")
        if s.onnx_export != "none":
            metadata = classifier_metadata(task.name, labels, pair, s.max_seq_length, s.do_lower_case,
                                           s.spm_model_file)
            onnx_file = export_onnx(self.model, os.path.join(out, "model.onnx"), PACKED_INPUTS,
                                    quantization=s.onnx_export, metadata=metadata)
            print(f"exported {os.path.join(s.export_dir, 'model.onnx')} ({s.onnx_export}: packed ids -> logits, "
                  f"{onnx_file['bytes']:,} bytes)")
        if s.do_eval:
            logits, examples = self.logits_of("dev", s.eval_batch_size)
            batches = list(self.prediction_batches("dev", s.eval_batch_size))  # as the float model's
            lite = litert.run_tflite(report["path"], batches, PACKED_INPUTS)["logits"]
            lite = in_original_order([b["position"].numpy() for b in batches], [lite])
            key = best_key(task.name)
            shown = dict(report, path=os.path.join(s.export_dir, "model.tflite"))  # where it is once moved into place
            line = litert.report_line(shown, s.tflite_quantization, key, self.dev_metrics(lite, examples)[0][key],
                                      self.dev_metrics(logits, examples)[0][key])
            write_text(os.path.join(self.output_dir, "tflite_results.txt"), line + "\n")
            print(line)


def write_predictions(task, logits, examples, output_dir: str):
    """test_results.tsv (probabilities, or the score for STS-B) and the GLUE submission file (index, label)."""
    if task.is_regression:
        rows = [str(np.float32(x)) for x in logits[:, 0]]  # the original's str(np.float32)
        labels = [f"{x:.3f}" for x in logits[:, 0]]
    else:
        shifted = np.exp(logits - logits.max(-1, keepdims=True))
        probabilities = (shifted / shifted.sum(-1, keepdims=True)).astype(np.float32)
        rows = ["\t".join(str(p) for p in row) for row in probabilities]
        labels = [task.labels[i] for i in probabilities.argmax(-1)]
    write_text(os.path.join(output_dir, "test_results.tsv"), "".join(r + "\n" for r in rows))
    submission = "index\tprediction\n" + "".join(f"{e.guid}\t{label}\n" for e, label in zip(examples, labels))
    write_text(os.path.join(output_dir, "submit_results.tsv"), submission)
    write_text(os.path.join(output_dir, SUBMISSION_NAMES[task.name] + ".tsv"), submission)
    print(f"wrote test_results.tsv, submit_results.tsv and {SUBMISSION_NAMES[task.name]}.tsv "
          f"({len(examples)} examples)")


def write_own_predictions(task, logits, examples, output_dir: str):
    """test_results.tsv of a user's test file: a header, then for each row its 0-based index, the predicted label's
    name and each class's probability (a regression: the index and the score)."""
    if task.is_regression:
        lines = ["index\tprediction"] + [f"{e.guid}\t{np.float32(x)}" for e, x in zip(examples, logits[:, 0])]
    else:
        shifted = np.exp(logits - logits.max(-1, keepdims=True))
        probabilities = (shifted / shifted.sum(-1, keepdims=True)).astype(np.float32)
        lines = ["\t".join(["index", "prediction", *task.labels])]
        lines += ["\t".join([e.guid, task.labels[row.argmax()], *(str(p) for p in row)])
                  for e, row in zip(examples, probabilities)]
    write_text(os.path.join(output_dir, "test_results.tsv"), "\n".join(lines) + "\n")
    print(f"wrote test_results.tsv ({len(examples)} rows of {task.files['test']})")

