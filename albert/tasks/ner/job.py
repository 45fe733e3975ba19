"""Token classification fine-tuning (run_ner.py): train on windows of pieces, evaluate every checkpoint with entity
scores (albert.tasks.ner.entities: conlleval's rules, or strict), keep model.ckpt-best by entity F1, tag the test set,
export a serving model on raw text with its model.tflite (and model.onnx)."""

import os

import numpy as np
import tensorflow as tf

from albert.data.buckets import grouped_batches, in_original_order
from albert.data.features import PACKED_INPUTS, boundaries, step_boundaries
from albert.export import litert
from albert.tasks.ner.serving import export_tagger, tagger_metadata
from albert.export.onnx import export_onnx
from albert.export.tflite_metadata import describe
from albert.ground.atomic import write_text
from albert.runner.job import FineTuningJob
from albert.runner.outputs import append_eval_results, record_model_files, run_record
from albert.runner.settings import warmup_steps, with_epoch_steps
from albert.tasks.ner.settings import NerRun
from albert.tasks.ner.model import AlbertTokenClassifier
from albert.tasks.ner.entities import score
from albert.tasks.ner.examples import NerTask, prediction_lines
from albert.tasks.ner.windows import padded, sentence_windows, word_tags
from albert.text.tokenization import FullTokenizer
from albert.train.optimizers import create_optimizer
from albert.train.settings import Runtime
from albert.train.setup import begin_job, check_batch_split, fine_tuning_trainer
from albert.weights.run_checkpoints import record_best


def token_loss(model, batch, training):
    """Mean cross-entropy over the positions in the loss (tag id >= 0: each word's first piece, in the window that
    scores it); metric: their accuracy."""
    logits = model({k: batch[k] for k in PACKED_INPUTS}, training=training)
    tags = tf.cast(batch["tag_ids"], tf.int32)
    scored = tf.cast(tags >= 0, tf.float32)
    safe = tf.maximum(tags, 0)
    per_position = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=safe, logits=logits)
    correct = tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), safe), tf.float32)
    count = tf.reduce_sum(scored)
    return [(tf.reduce_sum(scored * per_position), count, 0.0)], {"accuracy": (tf.reduce_sum(scored * correct),
                                                                                count)}


def run(settings: NerRun, runtime: Runtime, task: NerTask):
    NerFineTuning(settings, runtime, task).run()


class NerFineTuning(FineTuningJob):
    """Train / evaluate / predict / export once, into settings.output_dir."""

    def __init__(self, settings: NerRun, runtime: Runtime, task: NerTask):
        self.settings, self.task, self.output_dir = settings, task, settings.output_dir
        self.seed = runtime.random_seed
        strategy, self.config = begin_job(runtime, settings.albert_config_file, settings.output_dir, self.seed)
        self.tokenizer = FullTokenizer(settings.vocab_file, settings.do_lower_case, settings.spm_model_file)
        check_batch_split("train_batch_size", settings.train_batch_size, strategy.num_replicas_in_sync)
        self._features = {}
        # --num_train_epochs: the steps are counted over the training windows, made here once
        settings, line = with_epoch_steps(settings, lambda: len(self.features("train")[0]),
                                          f"windows ({len(task.sentences.get('train', ())):,} sentences)")
        if line:
            print(line)
        self.settings = settings
        with strategy.scope():
            self.model = AlbertTokenClassifier(self.config, num_labels=len(task.labels),
                                               dropout_prob=settings.dropout_prob)
            optimizer = create_optimizer(settings.learning_rate, settings.train_step,
                                         warmup_steps(settings, settings.train_step), settings.optimizer,
                                         model=self.model)
        self.bounds = boundaries(settings.max_seq_length, settings.length_buckets)
        self.prediction_bounds = step_boundaries(settings.max_seq_length, settings.length_buckets)
        self.trainer = fine_tuning_trainer(runtime, strategy, self.model, optimizer, token_loss, self.config,
                                           settings.output_dir, settings.train_step, settings.train_batch_size,
                                           settings.max_seq_length, settings.length_buckets)

    def features(self, split: str) -> tuple:
        """(windows, padded arrays) of a split, made once."""
        if split not in self._features:
            s = self.settings
            windows = sentence_windows(self.task.split(split), self.tokenizer, list(self.task.labels),
                                       s.max_seq_length, s.doc_stride, s.label_all_tokens and split == "train")
            self._features[split] = windows, padded(windows, s.max_seq_length)
        return self._features[split]

    def predict(self):
        sentences = self.task.split("test")
        tags = self.tag("test", self.settings.predict_batch_size)
        write_text(os.path.join(self.output_dir, "test_predictions.txt"), prediction_lines(sentences, tags))
        print(f"wrote test_predictions.txt ({len(sentences)} sentences, {sum(map(len, tags))} words)")

    def train_dataset(self, context, batch_size: int):
        """Training windows, reshuffled each epoch with the run's seed (an index permutation: the iterator
        checkpoints small), repeated, in whole batches; this pipeline's share under a distribution strategy."""
        _, arrays = self.features("train")
        tensors = {k: tf.constant(v) for k, v in arrays.items()}
        count = len(arrays["input_ids"])
        order = tf.data.Dataset.range(count)
        if context is not None and context.num_input_pipelines > 1:
            order = order.shard(context.num_input_pipelines, context.input_pipeline_id)
        order = order.shuffle(count, seed=self.seed, reshuffle_each_iteration=True).repeat()
        return order.map(lambda i: {k: v[i] for k, v in tensors.items()}, num_parallel_calls=tf.data.AUTOTUNE,
                         deterministic=True).batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)

    def training_batches(self, resumed: int | None):
        self.features("train")  # the windows are made from the train file each run: nothing to check on resuming
        return self.train_dataset

    def record_files(self):
        record = run_record(self.settings, "AlbertTokenClassifier", "ner", labels=tuple(self.task.labels),
                            scheme=self.task.scheme)
        record_model_files(self.output_dir, self.config, self.settings.spm_model_file, record)

    def logits(self, split: str, batch_size: int) -> np.ndarray:
        """[windows, max_seq_length, tags] logits of a split's windows, computed in batches grouped by length."""
        _, arrays = self.features(split)
        examples = tf.data.Dataset.from_tensor_slices({k: arrays[k] for k in PACKED_INPUTS})
        step = tf.function(lambda features: self.model(features, training=False), reduce_retracing=True)
        positions, outputs, length = [], [], self.settings.max_seq_length
        for batch in grouped_batches(examples, batch_size, self.prediction_bounds):
            out = step({k: batch[k] for k in PACKED_INPUTS}).numpy()
            outputs.append(np.pad(out, ((0, 0), (0, length - out.shape[1]), (0, 0))))
            positions.append(batch["position"].numpy())
        return in_original_order(positions, outputs)

    def tag(self, split: str, batch_size: int) -> list:
        """Each sentence's predicted tags, one per word."""
        windows, _ = self.features(split)
        return word_tags(windows, self.logits(split, batch_size).argmax(-1), self.task.split(split),
                         list(self.task.labels))

    def evaluate(self, step: int, _path=None):
        """Entity scores of the model as it is on the dev sentences, appended to eval_results.txt; model.ckpt-best
        (and dev_predictions.txt, its predictions) kept by F1."""
        s, sentences = self.settings, self.task.split("dev")
        predicted = self.tag("dev", s.eval_batch_size)
        scores = score([list(x.tags) for x in sentences], predicted, s.strict, self.task.scheme)
        results = {"precision": scores["micro"].precision, "recall": scores["micro"].recall,
                   "f1": scores["micro"].f1, "accuracy": scores["accuracy"], "global_step": step}
        for kind, values in scores["types"].items():
            results.update({f"precision[{kind}]": values.precision, f"recall[{kind}]": values.recall,
                            f"f1[{kind}]": values.f1, f"support[{kind}]": values.support})
        append_eval_results(os.path.join(self.output_dir, "eval_results.txt"), results)
        self.trainer.summaries.write("eval", results, step)
        best_step, best_value = record_best(self.model, self.output_dir, step, results["f1"])
        if best_step == step:
            write_text(os.path.join(self.output_dir, "dev_predictions.txt"), prediction_lines(sentences, predicted))
        print(f"eval step {step}: " + " ".join(f"{k} {results[k]:.4f}" for k in ("precision", "recall", "f1",
                                                                                 "accuracy"))
              + f" | best f1 {best_value:.4f} at step {best_step}")

    def export(self, out: str):
        """The serving SavedModel on raw text and, in it, model.tflite (packed ids -> logits) and with
        --onnx_export model.onnx, the tag names in their metadata; written in `out` (moved to --export_dir when
        complete)."""
        s, labels = self.settings, list(self.task.labels)
        export_tagger(self.model, s.spm_model_file, s.do_lower_case, labels, s.max_seq_length, s.doc_stride, out)
        described = describe(s.tflite_metadata, "ALBERT token classifier",
                             "ALBERT fine-tuned for token classification: [CLS] pieces [SEP] -> logits over "
                             f"{', '.join(labels)} at every position (a word's tag is read at its first piece).",
                             s.spm_model_file, s.vocab_file, s.do_lower_case, labels=labels)
        report = litert.export_tflite(self.model, os.path.join(out, "model.tflite"), PACKED_INPUTS,
                                      litert.file_length(s.max_seq_length, self.bounds, s.tflite_length),
                                      quantization=s.tflite_quantization, described=described)
        print(f"exported the serving model to {s.export_dir} (input: text; output: one tag per word) and "
              f"{os.path.join(s.export_dir, 'model.tflite')} (packed ids -> logits, {report['bytes']:,} bytes)")
        if s.onnx_export != "none":
            metadata = tagger_metadata(labels, self.task.scheme, s.max_seq_length, s.doc_stride, s.do_lower_case,
                                       s.spm_model_file)
            onnx_file = export_onnx(self.model, os.path.join(out, "model.onnx"), PACKED_INPUTS,
                                    quantization=s.onnx_export, metadata=metadata)
            print(f"exported {os.path.join(s.export_dir, 'model.onnx')} ({s.onnx_export}: packed ids -> logits, "
                  f"{onnx_file['bytes']:,} bytes)")
