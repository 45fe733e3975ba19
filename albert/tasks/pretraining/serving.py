"""export_to_tfhub.py's fill-mask serving SavedModel (OUT/fill_mask): raw texts holding `[MASK]` in, each mask's
top-k pieces out -- `AlbertPretrainer.fill_mask` (albert.tasks.pretraining.fill_mask) as TensorFlow ops, computed in
float32 and tokenized in the graph (loading it needs TensorFlow and `import tensorflow_text`, nothing of this project).

`serving_default(text: [B] string)` gives the top `top_k` (the export's, 5) and `top_k(text, top_k: int32 scalar)`
any number of them. Outputs, M the most masks of a text in the batch and K the number asked for:
- `token_ids` [B,M,K] int32: the pieces' ids, most probable first (-1 where a text has fewer masks);
- `token_strs` [B,M,K] string: their words (the piece without SentencePiece's `▁`; "" as padding);
- `scores` [B,M,K] float32: softmax probabilities over the whole vocabulary (0 as padding);
- `mask_counts` [B] int32 and `mask_offsets` [B,M,2] int32: each mask's start and end in the text, in characters
  (Python's `text[start:end]`; -1 as padding);
- `errors` [B] string: "" for a text that was filled, else why it was not (no mask, more masks than the model was
  built for, longer than the export's seq_length, empty). Such a text gets no predictions (mask_counts 0) and the
  other texts of the batch are filled as usual: one bad text does not fail a batch that a server put together.

The text between masks is tokenized as a text of its own (ALBERT's normalisation, SentencePiece with the digit-comma
rule: albert.text.graph_tokenizer), the ids and the masked positions of
albert.tasks.pretraining.fill_mask.masked_inputs, so the served top-k ids equal `fill_mask`'s and the scores agree
within float round-off.
"""

import tensorflow as tf

from albert.tasks.pretraining.fill_mask import MASK, mask_pattern, piece_word
from albert.export.savedmodel import save, text_root
from albert.ground.errors import AlbertError
from albert.text.tokenization import FullTokenizer

DEFAULT_TOP_K = 5  # serving_default's number of predictions per mask (transformers' pipeline default)


def export_fill_mask(model, sp_model_file: str, do_lower_case: bool, seq_length: int, path: str,
                     top_k: int = DEFAULT_TOP_K) -> str:
    """The fill-mask serving SavedModel of an AlbertPretrainer at `path` (see the module's docstring); a text may
    hold at most `model.max_predictions_per_seq` masks and `seq_length` pieces with [CLS] and [SEP]."""
    tokenizer = FullTokenizer(None, do_lower_case, sp_model_file)
    if MASK not in tokenizer.vocab:
        raise AlbertError(f"{sp_model_file}: the vocabulary has no {MASK} piece, so nothing can be filled; use the "
                          "SentencePiece model the model was pretrained with")
    vocab_size = model.config.vocab_size
    pieces = tokenizer.convert_ids_to_tokens(range(len(tokenizer.vocab)))
    words = tf.constant([piece_word(p) for p in pieces] + [""] * (vocab_size - len(pieces)))
    pattern = mask_pattern(tokenizer).pattern
    max_masks = int(model.max_predictions_per_seq)
    mask_id = tokenizer.convert_tokens_to_ids([MASK])[0]
    root, model = text_root(model, sp_model_file, do_lower_case)
    graph = root.tokenizer

    def errors_of(texts, counts, lengths):
        """Per text, "" or why it is not filled (albert.tasks.pretraining.fill_mask.masked_inputs' rules, its order)."""
        count, length = tf.strings.as_string(counts), tf.strings.as_string(lengths)
        return tf.where(
            tf.strings.regex_full_match(texts, f"{graph._space}*"),
            f"empty text; give a text with {MASK} where a word is missing",
            tf.where(counts == 0, f"no {MASK} in the text; write {MASK} where the word to fill is",
                     tf.where(counts > max_masks,
                              tf.strings.join([count, f" masks, more than the {max_masks} masked positions the model "
                                               f"was built for (max_predictions_per_seq); use at most {max_masks}"]),
                              tf.where(lengths > seq_length,
                                       tf.strings.join([length, " pieces with [CLS] and [SEP], more than the "
                                                        f"export's seq_length {seq_length}; shorten the text"]),
                                       ""))))

    def fill(texts, k):
        import tensorflow_text as text

        tf.debugging.assert_rank(texts, 1, message="text must be a vector of strings, one text per row")
        tf.debugging.assert_greater_equal(k, 1, message="top_k must be at least 1")
        tf.debugging.assert_less_equal(k, vocab_size, message=f"top_k must be at most the {vocab_size} pieces")
        batch = tf.shape(texts, out_type=tf.int64)[0]
        parts, starts, ends = text.regex_split_with_offsets(texts, pattern, pattern)  # [B, (S)], masks kept
        segments, text_of = parts.flat_values, parts.value_rowids()
        is_mask = tf.strings.regex_full_match(segments, pattern)
        # each segment's ids; a mask is the one mask piece (an empty string tokenizes to no piece)
        ids = graph.tokenize(tf.where(is_mask, "", segments))
        ids = tf.concat([ids, tf.RaggedTensor.from_row_lengths(
            tf.fill([tf.reduce_sum(tf.cast(is_mask, tf.int64))], tf.constant(mask_id, tf.int32)),
            tf.cast(is_mask, tf.int64))], axis=1)
        lengths = tf.math.unsorted_segment_sum(ids.row_lengths(), text_of, batch)  # [B] pieces between [CLS], [SEP]
        counts = tf.math.unsorted_segment_sum(tf.cast(is_mask, tf.int64), text_of, batch)
        errors = errors_of(texts, counts, lengths + 2)
        filled = tf.equal(errors, "")
        body = tf.RaggedTensor.from_row_lengths(ids.values, lengths)
        body = tf.ragged.boolean_mask(body, body.with_values(tf.gather(filled, body.value_rowids())))
        start_in_text = tf.cumsum(ids.row_lengths(), exclusive=True) - tf.gather(tf.cumsum(lengths, exclusive=True),
                                                                                 text_of)
        taken = is_mask & tf.gather(filled, text_of)
        positions = tf.RaggedTensor.from_value_rowids(tf.cast(1 + tf.boolean_mask(start_in_text, taken), tf.int32),
                                                      tf.boolean_mask(text_of, taken), nrows=batch)
        ends_of = tf.RaggedTensor.from_tensor(tf.fill([batch, 1], tf.constant(graph.sep_id, tf.int32)))
        packed = tf.concat([tf.RaggedTensor.from_tensor(tf.fill([batch, 1], tf.constant(graph.cls_id, tf.int32))),
                            body, ends_of], axis=1)
        most = tf.reduce_max(tf.concat([positions.row_lengths(), [0]], 0))
        features = {"input_ids": packed.to_tensor(0), "input_mask": tf.ones_like(packed).to_tensor(0),
                    "masked_lm_positions": positions.to_tensor(0, shape=tf.stack([batch, tf.maximum(most, 1)]))}
        features["segment_ids"] = tf.zeros_like(features["input_ids"])
        logits = model(features, training=False)["mlm_logits"][:, :most]  # [B, M, V] float32
        probabilities = tf.nn.softmax(tf.cast(logits, tf.float64), axis=-1)
        scores, top = tf.math.top_k(probabilities, k)  # ties: the lower id first, as fill_mask's stable sort
        real = tf.range(most)[None, :] < positions.row_lengths()[:, None]  # [B, M]
        real_k = tf.broadcast_to(real[:, :, None], tf.shape(top))
        # where the masks are, in characters of the text as given
        mask_texts = tf.boolean_mask(tf.gather(texts, text_of), taken)
        byte_starts = tf.boolean_mask(starts.flat_values, taken)
        begin = tf.strings.length(tf.strings.substr(mask_texts, tf.zeros_like(byte_starts), byte_starts),
                                  unit="UTF8_CHAR")
        end = begin + tf.strings.length(tf.boolean_mask(segments, taken), unit="UTF8_CHAR")
        offsets = tf.RaggedTensor.from_value_rowids(tf.stack([begin, end], axis=1), tf.boolean_mask(text_of, taken),
                                                    nrows=batch)
        return {"token_ids": tf.where(real_k, top, -1),
                "token_strs": tf.where(real_k, tf.gather(words, top), ""),
                "scores": tf.where(real_k, tf.cast(scores, tf.float32), 0.0),
                "mask_counts": tf.cast(positions.row_lengths(), tf.int32),
                "mask_offsets": offsets.to_tensor(-1, shape=tf.stack([batch, most, 2])),
                "errors": errors}

    text_spec = tf.TensorSpec([None], tf.string, name="text")
    root.top_k = tf.function(fill, input_signature=[text_spec, tf.TensorSpec([], tf.int32, name="top_k")])
    # serving_default calls top_k's traced graph (one trace of the model, not two)
    root.serve = tf.function(lambda texts: root.top_k(texts, tf.constant(top_k, tf.int32)),
                             input_signature=[text_spec])
    root.sp_model_file = tf.saved_model.Asset(sp_model_file)
    return save(root, path, {"serving_default": root.serve,
                             "top_k": root.top_k})
