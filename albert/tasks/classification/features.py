"""Sequence classification and regression (GLUE): cached feature records, the loss, and predictions."""

import os

import numpy as np
import tensorflow as tf

from albert.ground.atomic import replacing_file
from albert.data import cache
from albert.data.buckets import in_original_order
from albert.data.example_proto import serialize_examples
from albert.data.features import PACKED_INPUTS, classifier_features
from albert.data.tfrecord import TFRecordWriter
from albert.tasks.classification.glue import Task, convert_example, read_examples


def write_features(features: list, path: str, max_seq_length: int, regression: bool):
    """InputFeatures -> a TFRecord file of the original classifier records (temporary name, then rename)."""
    label_type = np.float32 if regression else np.int64
    arrays = {
        "input_ids": np.array([f.input_ids for f in features], np.int64),
        "input_mask": np.array([f.input_mask for f in features], np.int64),
        "segment_ids": np.array([f.segment_ids for f in features], np.int64),
        "label_ids": np.array([[f.label_id] for f in features], label_type),
        "is_real_example": np.array([[f.is_real_example] for f in features], np.int64),
    }
    assert set(arrays) == set(classifier_features(max_seq_length, regression))
    with replacing_file(path) as tmp, TFRecordWriter(tmp) as writer:
        for record in serialize_examples(arrays):
            writer.write(record)


def cached_features(task: Task, data_dir: str | None, split: str, tokenizer, max_seq_length: int, cached_dir: str,
                    resumed_run: str | None = None, examples: list | None = None) -> tuple:
    """(TFRecord path, examples) of a split; the records are built once and reused while the examples, the
    tokenizer and max_seq_length are the same (albert.data.cache; `resumed_run`: cache.refuse_rebuild). The
    examples are read from `data_dir` in the GLUE layout, unless given (a user's files:
    albert.tasks.classification.own_data)."""
    examples = read_examples(task, data_dir, split) if examples is None else examples
    os.makedirs(cached_dir, exist_ok=True)
    name = {"dev": "eval", "test": "predict"}.get(split, split)
    path = os.path.join(cached_dir, f"{task.name}_{name}.tf_record")
    key = cache.cache_key(examples, tokenizer, task=task.name, split=split, max_seq_length=max_seq_length)
    cache.build(path, key, lambda out: write_features(
        [convert_example(e, task, max_seq_length, tokenizer) for e in examples], out, max_seq_length,
        task.is_regression), resumed_run)
    return path, examples


def classification_loss(model, batch, training):
    """Mean cross-entropy (classification) or mean squared error (regression, one output), weighted by
    `is_real_example`; metric (of the training batches, next to the loss): accuracy, for classification. Dev
    metrics (eval_accuracy, eval_loss, ...) come from the runner's evaluation, never from training batches."""
    logits = model({k: batch[k] for k in PACKED_INPUTS}, training=training)
    real = tf.cast(tf.reshape(batch["is_real_example"], [-1]), tf.float32)
    labels = tf.reshape(batch["label_ids"], [-1])
    count = tf.reduce_sum(real)
    if logits.shape[-1] == 1:
        per_example = tf.square(logits[:, 0] - tf.cast(labels, tf.float32))
        total = tf.reduce_sum(real * per_example)
        return [(total, count, 0.0)], {}
    labels = tf.cast(labels, tf.int32)
    per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    correct = tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), labels), tf.float32)
    total = tf.reduce_sum(real * per_example)
    return [(total, count, 0.0)], {"accuracy": (tf.reduce_sum(real * correct), count)}


def predict(model, batches) -> np.ndarray:
    """Logits of every example of `batches` (albert.data.readers.prediction_batches: grouped by length, each with
    its examples' `position`), in the examples' order."""
    step = tf.function(lambda features: model(features, training=False), reduce_retracing=True)
    positions, outputs = [], []
    for batch in batches:
        outputs.append(step({k: batch[k] for k in PACKED_INPUTS}).numpy())
        positions.append(batch["position"].numpy())
    return in_original_order(positions, outputs) if outputs else np.zeros((0, 1))
