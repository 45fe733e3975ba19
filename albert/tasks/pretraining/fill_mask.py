"""Fill-mask on raw text, once, in TensorFlow ops: texts holding `[MASK]` -> each mask's top-k pieces with their
words and probabilities. `AlbertPretrainer.fill_mask` (albert.tasks.pretraining.model) runs it and export_to_tfhub.py's
fill-mask SavedModel (albert.tasks.pretraining.serving) saves it, so the two give the same pieces from the same code.

The text between masks is tokenized as a text of its own (ALBERT's normalisation, SentencePiece with the digit-comma
rule: albert.text.graph_tokenizer), a word start after each mask, which is how Hugging Face's tokenizer splits at its
`[MASK]` token: the ids equal transformers' `pipeline("fill-mask")`'s except beside the symbols the SentencePiece model
keeps whole (`( ) " - . – £ €`), where Hugging Face's tokenizer splits the text too (`2.5`: `▁2 . 5` here, as
pretraining saw it; `▁2 . ▁5` there). A prediction is what `pipeline("fill-mask")` returns: `token` (the piece's id),
`token_str` (its word: the piece without SentencePiece's word-start mark), `score` (the softmax probability over the
whole vocabulary) and `sequence` -- here the text as written with that one mask replaced by `token_str` (transformers
decodes its ids instead, so its `sequence` is lower-cased and re-spaced).

`MaskFiller(...)(texts, k)` gives, M the most masks of a text in the batch and K = k:
- `token_ids` [B,M,K] int32: the pieces' ids, most probable first (a tie: the lower id; -1 where a text has fewer
  masks);
- `token_strs` [B,M,K] string: their words ("" as padding);
- `scores` [B,M,K] float32: softmax probabilities over the whole vocabulary, computed in float64 (0 as padding);
- `mask_counts` [B] int32 and `mask_offsets` [B,M,2] int32: each mask's start and end in the text, in characters
  (Python's `text[start:end]`; -1 as padding);
- `errors` [B] string: "" for a text that was filled, else why it was not (empty, no mask, more masks than the model
  was built for, longer than seq_length pieces with [CLS] and [SEP], in that order). Such a text gets no predictions
  (mask_counts 0); the other texts of the batch are filled as usual.
"""

import re

import tensorflow as tf

from albert.data.instances import Options
from albert.ground.errors import AlbertError
from albert.text.graph_tokenizer import InGraphTokenizer
from albert.text.tokenization import SPIECE_UNDERLINE

MASK = "[MASK]"
# The masked positions a pretrained model was built for: the original's --max_predictions_per_seq default.
MAX_MASKS = Options.max_predictions_per_seq


def mask_pattern(vocab) -> re.Pattern:
    """`[MASK]` and the vocabulary's own spelling of its mask piece (`vocab`: the pieces), as one pattern."""
    spellings = {MASK} | {piece for piece in vocab
                          if piece[:1] in "[<" and piece[-1:] in "]>" and piece[1:-1].lower() == "mask"}
    return re.compile("|".join(re.escape(s) for s in sorted(spellings, key=len, reverse=True)))


def piece_word(piece: str) -> str:
    """The text a piece stands for, as transformers' `token_str`: without SentencePiece's word-start mark."""
    return piece.replace(SPIECE_UNDERLINE, " ").strip(" ") if piece != SPIECE_UNDERLINE else ""


class MaskFiller:
    """The fill-mask computation of one model over one SentencePiece vocabulary (see the module's docstring).

    `pieces`: the SentencePiece model's pieces in id order; `seq_length`: the most pieces of a text with [CLS] and
    [SEP], `limit`: how an error names it ("the export's seq_length"); `max_masks`: the masked positions the model
    was built for. `features(texts)` is the packing alone."""

    def __init__(self, model, tokenizer: InGraphTokenizer, pieces: list, seq_length: int, max_masks: int,
                 limit: str, where: str):
        if MASK not in pieces:
            raise AlbertError(f"{where}: the vocabulary has no {MASK} piece, so nothing can be filled; use the "
                              "SentencePiece model the model was pretrained with")
        self.model, self.tokenizer, self.seq_length, self.max_masks = model, tokenizer, seq_length, max_masks
        self.limit = limit
        self.vocab_size = model.config.vocab_size
        self.words = tf.constant([piece_word(p) for p in pieces] + [""] * (self.vocab_size - len(pieces)))
        self.pattern = mask_pattern(pieces).pattern
        self.mask_id = pieces.index(MASK)

    def errors(self, texts, counts, lengths):
        """Per text, "" or why it is not filled (see the module's docstring)."""
        count, length, most = tf.strings.as_string(counts), tf.strings.as_string(lengths), self.max_masks
        return tf.where(
            tf.strings.regex_full_match(texts, f"{self.tokenizer._space}*"),
            f"empty text; give a text with {MASK} where a word is missing",
            tf.where(counts == 0, f"no {MASK} in the text; write {MASK} where the word to fill is",
                     tf.where(counts > most,
                              tf.strings.join([count, f" masks, more than the {most} masked positions the model "
                                               f"was built for (max_predictions_per_seq); use at most {most}"]),
                              tf.where(lengths > self.seq_length,
                                       tf.strings.join([length, " pieces with [CLS] and [SEP], more than "
                                                        f"{self.limit} {self.seq_length}; shorten the text"]),
                                       ""))))

    def features(self, texts) -> tuple:
        """[B] texts -> (the masked-LM head's inputs: `input_ids`, `input_mask`, `segment_ids` [B,T] cut to the
        longest text and `masked_lm_positions` [B,max(M,1)]; `errors` [B]; the masks' character offsets, ragged
        [B,(M),2])."""
        import tensorflow_text as text

        batch = tf.shape(texts, out_type=tf.int64)[0]
        parts, starts, _ = text.regex_split_with_offsets(texts, self.pattern, self.pattern)  # masks kept
        segments, text_of = parts.flat_values, parts.value_rowids()
        is_mask = tf.strings.regex_full_match(segments, self.pattern)
        # each segment's ids; a mask is the one mask piece (an empty string tokenizes to no piece)
        ids = self.tokenizer.tokenize(tf.where(is_mask, "", segments))
        ids = tf.concat([ids, tf.RaggedTensor.from_row_lengths(
            tf.fill([tf.reduce_sum(tf.cast(is_mask, tf.int64))], tf.constant(self.mask_id, tf.int32)),
            tf.cast(is_mask, tf.int64))], axis=1)
        lengths = tf.math.unsorted_segment_sum(ids.row_lengths(), text_of, batch)  # pieces between [CLS] and [SEP]
        counts = tf.math.unsorted_segment_sum(tf.cast(is_mask, tf.int64), text_of, batch)
        errors = self.errors(texts, counts, lengths + 2)
        filled = tf.equal(errors, "")
        body = tf.RaggedTensor.from_row_lengths(ids.values, lengths)
        body = tf.ragged.boolean_mask(body, body.with_values(tf.gather(filled, body.value_rowids())))
        start_in_text = tf.cumsum(ids.row_lengths(), exclusive=True) - tf.gather(tf.cumsum(lengths, exclusive=True),
                                                                                 text_of)
        taken = is_mask & tf.gather(filled, text_of)
        positions = tf.RaggedTensor.from_value_rowids(tf.cast(1 + tf.boolean_mask(start_in_text, taken), tf.int32),
                                                      tf.boolean_mask(text_of, taken), nrows=batch)
        ends = tf.RaggedTensor.from_tensor(tf.fill([batch, 1], tf.constant(self.tokenizer.sep_id, tf.int32)))
        packed = tf.concat([tf.RaggedTensor.from_tensor(tf.fill([batch, 1], tf.constant(self.tokenizer.cls_id,
                                                                                        tf.int32))),
                            body, ends], axis=1)
        most = tf.reduce_max(tf.concat([positions.row_lengths(), [0]], 0))
        features = {"input_ids": packed.to_tensor(0), "input_mask": tf.ones_like(packed).to_tensor(0),
                    "masked_lm_positions": positions.to_tensor(0, shape=tf.stack([batch, tf.maximum(most, 1)]))}
        features["segment_ids"] = tf.zeros_like(features["input_ids"])
        # where the masks are, in characters of the text as given
        mask_texts = tf.boolean_mask(tf.gather(texts, text_of), taken)
        byte_starts = tf.boolean_mask(starts.flat_values, taken)
        begin = tf.strings.length(tf.strings.substr(mask_texts, tf.zeros_like(byte_starts), byte_starts),
                                  unit="UTF8_CHAR")
        end = begin + tf.strings.length(tf.boolean_mask(segments, taken), unit="UTF8_CHAR")
        offsets = tf.RaggedTensor.from_value_rowids(tf.stack([begin, end], axis=1), tf.boolean_mask(text_of, taken),
                                                    nrows=batch)
        return features, errors, offsets

    def __call__(self, texts, k):
        tf.debugging.assert_rank(texts, 1, message="text must be a vector of strings, one text per row")
        tf.debugging.assert_greater_equal(k, 1, message="top_k must be at least 1")
        tf.debugging.assert_less_equal(k, self.vocab_size, message=f"top_k must be at most the {self.vocab_size} "
                                       "pieces")
        features, errors, offsets = self.features(texts)
        counts = offsets.row_lengths()
        most = tf.reduce_max(tf.concat([counts, [0]], 0))
        logits = self.model(features, training=False)["mlm_logits"][:, :most]  # [B, M, V]
        probabilities = tf.nn.softmax(tf.cast(logits, tf.float64), axis=-1)
        scores, top = tf.math.top_k(probabilities, k)  # ties: the lower id first
        real = tf.range(most)[None, :] < counts[:, None]  # [B, M]
        real_k = tf.broadcast_to(real[:, :, None], tf.shape(top))
        batch = tf.shape(texts, out_type=tf.int64)[0]
        return {"token_ids": tf.where(real_k, top, -1),
                "token_strs": tf.where(real_k, tf.gather(self.words, top), ""),
                "scores": tf.where(real_k, tf.cast(scores, tf.float32), 0.0),
                "mask_counts": tf.cast(counts, tf.int32),
                "mask_offsets": tf.cast(offsets.to_tensor(-1, shape=tf.stack([batch, most, 2])), tf.int32),
                "errors": errors}


def as_predictions(texts, outputs: dict) -> list:
    """MaskFiller's outputs (NumPy, strings decoded) of texts that were all filled -> per text, per mask, the top-k
    predictions as `pipeline("fill-mask")`'s dicts: a text with one mask gives a list of k dicts, a text with several
    a list of such lists (one per mask, in order)."""
    answers = []
    for b, text in enumerate(texts):
        per_mask = []
        for m in range(int(outputs["mask_counts"][b])):
            start, end = (int(v) for v in outputs["mask_offsets"][b, m])
            per_mask.append([{"score": float(s), "token": int(i), "token_str": str(w),
                              "sequence": text[:start] + str(w) + text[end:]}
                             for i, s, w in zip(outputs["token_ids"][b, m], outputs["scores"][b, m],
                                                outputs["token_strs"][b, m])])
        answers.append(per_mask[0] if len(per_mask) == 1 else per_mask)
    return answers
