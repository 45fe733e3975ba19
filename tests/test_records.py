"""The hand-written tf.train.Example serializer and TFRecord framing against TensorFlow's own."""

import numpy as np
import tensorflow as tf

from albert.data.example_proto import serialize_example, serialize_examples
from albert.data.features import pretraining_features
from albert.data.tfrecord import TFRecordWriter


def tf_example(features: dict) -> tf.train.Example:
    feature = {}
    for name, values in features.items():
        values = np.asarray(values)
        if values.dtype.kind == "f":
            feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        else:
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Example(features=tf.train.Features(feature=feature))


def random_pretraining_features(rng, count):
    spec = pretraining_features(64, 10)
    out = {}
    for name, (dtype, length) in spec.items():
        if dtype == "float32":
            out[name] = rng.random((count, length)).astype(np.float32)
        else:
            high = {"input_ids": 30000, "masked_lm_ids": 2_000_000}.get(name, 128)
            out[name] = rng.integers(0, high, size=(count, length))
    return out


def test_batch_serializer_equals_tensorflow_bytes():
    rng = np.random.default_rng(0)
    batch = random_pretraining_features(rng, 50)
    batch["masked_lm_ids"][3, :4] = [0, 127, 128, 2**40]  # 1-, 2- and 6-byte varints in one row
    records = serialize_examples(batch)
    for i in range(50):
        expected = tf_example({k: v[i] for k, v in batch.items()}).SerializeToString(deterministic=True)
        assert records[i] == expected


def test_serializer_handles_any_int64_and_empty_features():
    rng = np.random.default_rng(1)
    features = {"a": rng.integers(-2**63, 2**63 - 1, size=20), "bb": np.zeros(0, np.int64),
                "c": np.array([0.5, -1.25], np.float32), "d": np.array([2**63 - 1, -1, 0])}
    assert tf.train.Example.FromString(serialize_example(features)) == tf_example(features)


def test_tfrecord_framing_equals_tensorflow_writer(tmp_path):
    records = serialize_examples(random_pretraining_features(np.random.default_rng(2), 20)) + [b"", b"x" * 70000]
    ours, theirs = str(tmp_path / "ours.tfrecord"), str(tmp_path / "theirs.tfrecord")
    with TFRecordWriter(ours) as writer:
        for record in records:
            writer.write(record)
    with tf.io.TFRecordWriter(theirs) as writer:
        for record in records:
            writer.write(record)
    assert open(ours, "rb").read() == open(theirs, "rb").read()
    assert [r.numpy() for r in tf.data.TFRecordDataset(ours)] == records
