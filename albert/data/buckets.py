"""Compute only real tokens: batches cut to a length bucket instead of padded to max_seq_length.

The records (and the preprocessors) pad every example to max_seq_length; at GLUE's lengths most of those positions
are padding (86-98 % at 512). A batch is cut to the smallest of a few boundaries (four per doubling: 8, 12, 16,
20, 24, 28, 32, 40, 48, ..., 384, 448, 512, up to max_seq_length) that holds its longest example, so a compiled
step (XLA, TPU) sees a bounded number of shapes.
Attention masks the padding and every loss here weights only real positions, so the numbers are the same up to
round-off (SQuAD 1.1's loss is the exception: its softmax runs over every position, padding included).

- `albert.data.features.boundaries(max_seq_length, spec)`: the lengths, from a --length_buckets value.
- `cut_to_bucket(features, boundaries)`: one padded batch (same examples, same order) cut in the graph.
- `grouped_batches(examples, ...)`: evaluation and prediction batches of examples sorted by length (in windows),
  each carrying its examples' positions so outputs go back to the original order.
- `length_sorted_batches(examples, ...)`: `--group_by_length` training batches, cut from windows of examples sorted
  by length (as Hugging Face's `LengthGroupedSampler`).
"""

import numpy as np
import tensorflow as tf

from albert.data.features import PACKED_INPUTS

# batches per window sorted by length (--group_by_length, evaluation; HF sorts mega-batches of 50 batches)
WINDOW_BATCHES = 50

# the features whose last axis is the sequence (run_ner.py's tag ids too)
SEQUENCE_FEATURES = PACKED_INPUTS + ("p_mask", "tag_ids")


def bucket_index(lengths, bucket_bounds: tuple):
    """The place in `bucket_bounds` of the smallest boundary that holds each of `lengths` (int tensor of any
    shape; a length past the last boundary gets the last)."""
    table = tf.constant(bucket_bounds, tf.int32)
    index = tf.searchsorted(table, tf.reshape(tf.cast(lengths, tf.int32), [-1]), side="left")
    return tf.reshape(tf.minimum(index, len(bucket_bounds) - 1), tf.shape(lengths))


def bucket_length(lengths, bucket_bounds: tuple):
    """The smallest boundary that holds each of `lengths` (int32 tensor of any shape)."""
    return tf.gather(tf.constant(bucket_bounds, tf.int32), bucket_index(lengths, bucket_bounds))


def example_lengths(features: dict):
    """Real tokens of each example (the input mask's sum over the last axis; RACE's [B, 4, T]: the longest row)."""
    lengths = tf.reduce_sum(tf.cast(features["input_mask"], tf.int32), axis=-1)
    return lengths if lengths.shape.rank == 1 else tf.reduce_max(lengths, axis=list(range(1, lengths.shape.rank)))


def cut(features: dict, length) -> dict:
    """The sequence features cut to `length` positions (the others as they are)."""
    return {k: v[..., :length] if k in SEQUENCE_FEATURES else v for k, v in features.items()}


def cut_to_bucket(features: dict, bucket_bounds: tuple | None) -> dict:
    """A padded batch cut to the smallest boundary holding its longest example; `None`: as it is."""
    if not bucket_bounds or len(bucket_bounds) == 1:
        return features
    return cut(features, bucket_length(tf.reduce_max(example_lengths(features)), bucket_bounds))


def sorted_by_length(examples: tf.data.Dataset, window: int, descending: bool = False) -> tf.data.Dataset:
    """The examples again, in windows of `window` sorted by length (ties in arrival order): the one sort behind
    evaluation's batches and --group_by_length's. Memory: one window."""
    def sort(batch):
        order = tf.argsort(example_lengths(batch), direction="DESCENDING" if descending else "ASCENDING", stable=True)
        return {k: tf.gather(v, order) for k, v in batch.items()}

    return examples.batch(window).map(sort, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).unbatch()


def grouped_batches(examples: tf.data.Dataset, batch_size: int, cut_bounds: tuple,
                    window_batches: int = WINDOW_BATCHES) -> tf.data.Dataset:
    """Evaluation and prediction batches: every example once, taken in windows of `window_batches` batches, each
    window sorted by length (shortest first, ties in arrival order) and cut into batches, each batch cut to the
    smallest of `cut_bounds` that holds its longest example (albert.data.features.step_boundaries: the longest
    itself under the default --length_buckets, as prediction steps are never XLA-compiled), each with `position`
    (its examples' places in `examples`, to put outputs back in order: in_original_order)."""
    numbered = examples.enumerate().map(lambda position, features: dict(features, position=position))
    return sorted_by_length(numbered, batch_size * window_batches).batch(batch_size).map(
        lambda batch: cut_to_bucket(batch, cut_bounds), num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


def length_sorted_batches(examples: tf.data.Dataset, batch_size: int, seed: int,
                          window_batches: int = WINDOW_BATCHES) -> tf.data.Dataset:
    """`--group_by_length` training batches: the examples taken in windows of `window_batches` batches, each window
    sorted by length (longest first, ties in arrival order) and cut into batches of neighbouring lengths, the batches
    then shuffled (a window's worth of buffer, `seed`). Every example of a window once; a last partial batch is
    dropped (training batches keep their size). Batches keep the records' padding: the training step cuts each
    (albert.data.features.step_boundaries), so a step computes up to its own longest example, or its bucket under XLA.
    Finer than grouping by bucket: a batch's examples differ by a few tokens, not by up to a quarter of the bucket."""
    batches = sorted_by_length(examples, batch_size * window_batches, descending=True)
    return batches.batch(batch_size, drop_remainder=True).shuffle(window_batches, seed=seed)


def in_original_order(positions: list, outputs: list) -> np.ndarray:
    """Outputs of grouped batches (each with its `position`) back in the order of the examples."""
    positions, outputs = np.concatenate(positions), np.concatenate(outputs)
    ordered = np.empty_like(outputs)
    ordered[positions] = outputs
    return ordered
