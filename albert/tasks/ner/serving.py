"""run_ner.py's serving SavedModel: raw text in, one tag per word out, computed in float32 and tokenized in the graph
(loading it needs `import tensorflow_text`).

`serving_default(text: [B] string)` -> `tags` [B, W] string (padded with ""), `word_counts` [B] int32 and `words`
[B, W] string: each text is split into words on whitespace, each word tokenized alone ([UNK] when it yields no
piece), the pieces cut into windows of max_seq_length - 2 every doc_stride pieces, and each word tagged at its first
piece in the window where it has the most context -- the windows and the rule of evaluation
(albert.tasks.ner.windows), so the served tags are run_ner.py's.
"""

import json
import os

import tensorflow as tf

from albert.data.buckets import cut_to_bucket
from albert.data.features import boundaries
from albert.export.savedmodel import save, text_root
from albert.tasks.ner.windows import unknown_id
from albert.text.tokenization import FullTokenizer


def export_tagger(model, sp_model_file: str, do_lower_case: bool, labels: list, seq_length: int, doc_stride: int,
                  path: str) -> str:
    """The serving SavedModel of a fine-tuned AlbertTokenClassifier at `path` (see the module's docstring)."""
    unk = unknown_id(FullTokenizer(None, do_lower_case, sp_model_file))
    root, model = text_root(model, sp_model_file, do_lower_case)
    tokenizer = root.tokenizer
    capacity, bounds = seq_length - 2, boundaries(seq_length)
    names = tf.constant(labels)

    def tag(text):
        words = tf.strings.split(text)  # [B, (W)]
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
        tags = tf.gather(names, tf.argmax(word_logits, -1))
        return {"tags": words.with_flat_values(tags).to_tensor(""), "words": words.to_tensor(""),
                "word_counts": tf.cast(words.row_lengths(), tf.int32)}

    root.serve = tf.function(tag, input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    root.sp_model_file = tf.saved_model.Asset(sp_model_file)
    return save(root, path, {"serving_default": root.serve})


def tagger_metadata(labels: list, scheme: str, seq_length: int, doc_stride: int, do_lower_case: bool,
                    sp_model_file: str) -> dict:
    """What a serving process needs beside the tagger's model.onnx (packed ids -> logits [B, T, tags]) to tag
    text: the tag of each logit (JSON), the scheme, the window length and stride, the case folding, the
    SentencePiece model in the export's assets."""
    return {"task": "ner", "labels": json.dumps(labels), "tag_scheme": scheme, "max_seq_length": str(seq_length),
            "doc_stride": str(doc_stride), "do_lower_case": str(do_lower_case).lower(),
            "sentencepiece_model": f"assets/{os.path.basename(sp_model_file)}"}
