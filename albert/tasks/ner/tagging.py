"""Tagging words, once, in TensorFlow ops: what `AlbertTokenClassifier.predict` on lists of words
(albert.tasks.ner.model) and run_ner.py's serving SavedModel (albert.tasks.ner.serving) both run.

Each word is tokenized alone ([UNK] when it yields no piece), a sentence's pieces cut into windows of
max_seq_length - 2 every doc_stride pieces, and each word read at its first piece in the window where it has the most
context: the windows and the rule of run_ner.py's evaluation (albert.tasks.ner.windows, which its training features
keep), so the tags are run_ner.py's. A batch of windows is computed up to its length bucket.
"""

import tensorflow as tf

from albert.data.buckets import cut_to_bucket
from albert.text.graph_tokenizer import InGraphTokenizer


def tagger(model, tokenizer: InGraphTokenizer, unk: int, seq_length: int, doc_stride: int, bounds: tuple | None):
    """`tag_words(words [B, (W)] ragged strings)` -> [B, (W)] int32: each word's label id (the argmax of `model`'s
    logits at its first piece, in its window of most context); `unk`: the [UNK] piece's id."""
    capacity = seq_length - 2

    def tag_words(words):
        pieces = tokenizer.tokenize(words.flat_values)  # [N, (p)]
        empty = tf.cast(pieces.row_lengths() == 0, tf.int64)
        pieces = tf.concat([pieces, tf.RaggedTensor.from_row_lengths(
            tf.fill([tf.reduce_sum(empty)], tf.constant(unk, tf.int32)), empty)], axis=1)
        counts = pieces.row_lengths()  # [N]
        text_of_word = words.value_rowids()  # [N]
        totals = tf.math.unsorted_segment_sum(counts, text_of_word, words.nrows())  # [B]
        text_start = tf.cumsum(totals, exclusive=True)
        first = tf.cumsum(counts, exclusive=True) - tf.gather(text_start, text_of_word)  # [N], within its text
        windows = 1 + (tf.maximum(totals - capacity, 0) + doc_stride - 1) // doc_stride  # [B]
        window_text = tf.repeat(tf.range(words.nrows()), windows)
        window_number = tf.ragged.range(windows).flat_values
        starts = window_number * doc_stride
        ends = tf.minimum(starts + capacity, tf.gather(totals, window_text))
        offsets = tf.gather(text_start, window_text)
        ids = tf.gather(pieces.flat_values, tf.ragged.range(offsets + starts, offsets + ends))
        count = tf.shape(window_text, out_type=tf.int64)[0]
        cls = tf.fill([count, 1], tf.constant(tokenizer.cls_id, tf.int32))
        sep = tf.fill([count, 1], tf.constant(tokenizer.sep_id, tf.int32))
        packed = tf.concat([tf.RaggedTensor.from_tensor(cls), ids, tf.RaggedTensor.from_tensor(sep)], axis=1)
        shape = tf.stack([count, seq_length])
        features = {"input_ids": packed.to_tensor(0, shape=shape),
                    "input_mask": tf.ones_like(packed).to_tensor(0, shape=shape),
                    "segment_ids": tf.zeros(shape, tf.int32)}
        logits = model(cut_to_bucket(features, bounds), training=False)  # [windows, T, tags]
        # each word's window: the one where its first piece has the most context (the first on ties)
        most = tf.reduce_max(windows)
        k = tf.range(most, dtype=tf.int64)[None, :]
        word_windows = tf.gather(windows, text_of_word)[:, None]
        start = k * doc_stride
        end = tf.minimum(start + capacity, tf.gather(totals, text_of_word)[:, None])
        f = first[:, None]
        inside = (k < word_windows) & (start <= f) & (f < end)
        context = tf.cast(tf.minimum(f - start, end - 1 - f), tf.float64) + 0.01 * tf.cast(end - start, tf.float64)
        chosen = tf.argmax(tf.where(inside, context - 1e-6 * tf.cast(k, tf.float64), -1e9), axis=1)
        window = tf.gather(tf.cumsum(windows, exclusive=True), text_of_word) + chosen
        position = 1 + first - chosen * doc_stride
        word_logits = tf.gather_nd(logits, tf.stack([window, position], axis=1))
        return words.with_flat_values(tf.argmax(word_logits, -1, output_type=tf.int32))

    return tag_words

