"""Text to model inputs in the graph: ALBERT's normalisation and SentencePiece (with the digit-comma rule) as
TensorFlow ops (tensorflow-text, with `albert.text.unigram`'s segmentation), and the packing of one or two segments.

The ids equal `albert.text.tokenization.FullTokenizer`'s, and pairs are packed and truncated as `run_classifier.py`
builds its features (the longer segment loses its last piece first, b on ties). `albert.model.preprocessor` is the
Keras layer made of it; the exported TF Hub preprocessor and raw-string serving models use it too.
"""

import functools
import sys
import unicodedata

import tensorflow as tf

from albert.text.tokenization import SPIECE_UNDERLINE
from albert.text.unigram import UnigramViterbi


@functools.lru_cache(maxsize=None)
def _char_class(predicate) -> str:
    """An RE2 character class of every code point for which `predicate(chr(c))` holds (Python's Unicode data,
    so that the graph normalises exactly as `preprocess_text` does)."""
    ranges, start = [], None
    for code in range(sys.maxunicode + 2):
        inside = code <= sys.maxunicode and not 0xD800 <= code <= 0xDFFF and predicate(chr(code))
        if inside and start is None:
            start = code
        elif not inside and start is not None:
            ranges.append((start, code - 1))
            start = None
    return "[" + "".join(f"\\x{{{a:x}}}" if a == b else f"\\x{{{a:x}}}-\\x{{{b:x}}}" for a, b in ranges) + "]"


class InGraphTokenizer(tf.Module):
    """ALBERT's text normalisation and SentencePiece tokenization as TensorFlow ops (tensorflow-text)."""

    def __init__(self, sp_model_proto: bytes, do_lower_case: bool, name="tokenizer"):
        super().__init__(name=name)
        import tensorflow_text as text

        self.do_lower_case = do_lower_case
        self.sentencepiece = text.SentencepieceTokenizer(model=sp_model_proto, out_type=tf.string)
        self.unigram = UnigramViterbi(sp_model_proto)
        self._space = _char_class(str.isspace)
        self._combining = _char_class(unicodedata.combining)
        self._digit_comma = "(?s).*" + _char_class(str.isdigit) + ","
        self.cls_id = int(self.sentencepiece.string_to_id("[CLS]"))
        self.sep_id = int(self.sentencepiece.string_to_id("[SEP]"))

    def normalize(self, texts):
        """preprocess_text: collapse whitespace, NFKD, drop combining marks, lower-case."""
        import tensorflow_text as text

        texts = tf.strings.regex_replace(texts, f"^{self._space}+|{self._space}+$", "")
        texts = tf.strings.regex_replace(texts, f"{self._space}+", " ")
        texts = tf.strings.regex_replace(text.normalize_utf8(texts, "NFKD"), self._combining, "")
        return tf.strings.lower(texts, encoding="utf-8") if self.do_lower_case else texts

    def encode_pieces(self, texts):
        """SentencePiece pieces of [B] strings, [B, (n)]: tensorflow-text normalizes them with the model's rules,
        `albert.text.unigram` segments them as the Python `sentencepiece` package does (ties included)."""
        normalized = tf.strings.reduce_join(self.sentencepiece.tokenize(texts), axis=-1)
        return self.unigram.encode(normalized)[0]

    def pieces(self, texts):
        """encode_pieces, digit-comma rule included: a piece ending in digit+comma is re-encoded without the comma
        (and without a `▁` the original piece did not have), then the comma follows. [B] -> [B, (n)] strings."""
        pieces = self.encode_pieces(self.normalize(texts))
        flat = pieces.values
        flagged = tf.strings.regex_full_match(flat, self._digit_comma)
        core = tf.strings.regex_replace(tf.strings.regex_replace(flat, ",$", ""), SPIECE_UNDERLINE, "")
        again = self.encode_pieces(tf.where(flagged, core, ""))  # [N, (k)]
        starts = again.row_splits[:-1]
        nonempty = again.row_lengths() > 0
        first = tf.where(nonempty, tf.gather(tf.concat([again.values, [""]], 0), starts), "")
        underline = f"{SPIECE_UNDERLINE}(?s).*"
        adjust = (flagged & nonempty & ~tf.strings.regex_full_match(flat, underline)
                  & tf.strings.regex_full_match(first, underline))
        stripped = tf.strings.regex_replace(first, f"^{SPIECE_UNDERLINE}", "")
        rows = tf.boolean_mask(starts, adjust)[:, None]
        values = tf.tensor_scatter_nd_update(again.values, rows, tf.boolean_mask(stripped, adjust))
        drop = tf.scatter_nd(rows, tf.cast(tf.boolean_mask(tf.equal(stripped, ""), adjust), tf.int32),
                             tf.shape(again.values, out_type=tf.int64)) > 0
        again = tf.ragged.boolean_mask(again.with_values(values), again.with_values(~drop))
        comma = tf.RaggedTensor.from_tensor(tf.fill([tf.size(flat), 1], ","))
        replaced = tf.concat([again, comma], axis=1)
        single = tf.RaggedTensor.from_tensor(flat[:, None])
        merged = tf.concat([
            tf.ragged.boolean_mask(replaced, replaced.with_values(tf.gather(flagged, replaced.value_rowids()))),
            tf.ragged.boolean_mask(single, single.with_values(~flagged))], axis=1)
        lengths = tf.math.unsorted_segment_sum(merged.row_lengths(), pieces.value_rowids(), pieces.nrows())
        return tf.RaggedTensor.from_row_lengths(merged.values, lengths)

    def tokenize(self, texts):
        """[B] strings -> [B, (n)] int32 ids, as FullTokenizer.tokenize_to_ids."""
        return tf.cast(self.sentencepiece.string_to_id(self.pieces(texts)), tf.int32)

    def pack(self, segments: list, seq_length):
        """`[CLS] a [SEP]` or `[CLS] a [SEP] b [SEP]` padded to seq_length, as run_classifier builds them: a pair is
        truncated by removing the last piece of the longer segment (b on ties) until it fits; a pair whose b is
        empty is packed as a single segment."""
        if len(segments) not in (1, 2):
            raise ValueError(f"bert_pack_inputs takes one or two segments, got {len(segments)}")
        a = segments[0]
        b = segments[1] if len(segments) == 2 else tf.RaggedTensor.from_row_lengths(
            tf.zeros([0], a.dtype), tf.zeros_like(a.row_lengths()))
        seq_length = tf.cast(seq_length, tf.int64)
        la, lb = a.row_lengths(), b.row_lengths()
        pair = lb > 0
        budget = tf.where(pair, seq_length - 3, seq_length - 2)
        short = tf.minimum(la, lb)
        fits = la + lb <= budget
        keep_short = 2 * short <= budget
        half_up, half_down = (budget + 1) // 2, budget // 2
        # Longer-first trimming: the shorter side keeps all when it is at most half; else they meet at the middle
        # (a gets the odd piece, since b loses on ties).
        new_a = tf.where(fits, la, tf.where(keep_short, tf.where(la <= lb, la, budget - lb), half_up))
        new_b = tf.where(fits, lb, tf.where(keep_short, tf.where(la <= lb, budget - la, lb), half_down))
        new_a = tf.where(pair, new_a, tf.minimum(la, budget))

        def head(x, n):
            positions = tf.ragged.range(x.row_lengths())
            return tf.ragged.boolean_mask(x, positions < n[:, None])

        a, b = head(a, new_a), head(b, new_b)
        batch = a.nrows()
        cls = tf.RaggedTensor.from_tensor(tf.fill([batch, 1], tf.constant(self.cls_id, a.dtype)))
        sep = tf.RaggedTensor.from_tensor(tf.fill([batch, 1], tf.constant(self.sep_id, a.dtype)))
        sep_b = tf.RaggedTensor.from_row_lengths(tf.fill([tf.reduce_sum(tf.cast(new_b > 0, tf.int64))],
                                                         tf.constant(self.sep_id, a.dtype)),
                                                 tf.cast(new_b > 0, tf.int64))
        ids = tf.concat([cls, a, sep, b, sep_b], axis=1)
        types = tf.concat([tf.zeros_like(cls), tf.zeros_like(a), tf.zeros_like(sep), tf.ones_like(b),
                           tf.ones_like(sep_b)], axis=1)
        shape = tf.stack([batch, seq_length])
        return {"input_word_ids": tf.cast(ids.to_tensor(0, shape=shape), tf.int32),
                "input_mask": tf.cast(tf.ones_like(ids).to_tensor(0, shape=shape), tf.int32),
                "input_type_ids": tf.cast(types.to_tensor(0, shape=shape), tf.int32)}
