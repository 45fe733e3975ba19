"""Text to model inputs in the graph: ALBERT's normalisation and SentencePiece (with the digit-comma rule) as
TensorFlow ops (tensorflow-text, with `albert.text.unigram`'s segmentation), and the packing of one or two segments.

The ids equal `albert.text.tokenization.FullTokenizer`'s, and pairs are packed and truncated as `run_classifier.py`
builds its features (the longer segment loses its last piece first, b on ties). `albert.model.preprocessor` is the
Keras layer made of it; the exported TF Hub preprocessor and raw-string serving models use it too.
"""

import functools
import sys
import unicodedata

import numpy as np
import tensorflow as tf

from albert.text.offsets import all_characters, vanishing_characters
from albert.text.tokenization import SPIECE_UNDERLINE
from albert.text.unigram import UnigramViterbi

BIG = 2 ** 62


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


@functools.lru_cache(maxsize=4)
def character_tables(proto: bytes) -> dict:
    """The code-point tables of the alignment (albert.text.offsets), from Python's Unicode data and the
    SentencePiece model `proto` (a few seconds, once per model): `space` (whitespace); `keys`, `lengths`, `values`:
    every other character preprocessing changes (NFKD, combining marks dropped), how many characters it becomes
    and those, concatenated in key order; `skipped`: what no piece holds (whitespace, and the characters
    SentencePiece deletes or turns into spaces: `vanishing`); `absorbed`: what preprocessing drops entirely. Each
    sorted, int32."""
    import sentencepiece as spm

    keys, lengths, values, space, absorbed = [], [], [], [], []
    for c in all_characters():
        if c.isspace():
            space.append(ord(c))
            continue
        if c.isascii():
            continue
        kept = [d for d in unicodedata.normalize("NFKD", c) if not unicodedata.combining(d)]
        if kept != [c]:
            keys.append(ord(c))
            lengths.append(len(kept))
            values.extend(map(ord, kept))
            if not kept:
                absorbed.append(ord(c))
    gone = vanishing_characters(spm.SentencePieceProcessor(model_proto=proto))
    skipped = sorted(set(space) | {ord(c) for c in gone})
    table = dict(space=space, keys=keys, lengths=lengths, values=values or [0], skipped=skipped, absorbed=absorbed)
    return {k: np.asarray(v, np.int32) for k, v in table.items()}


def _member(codes, table):
    """Whether each code point of `codes` is in the sorted int32 `table` (a constant of at least one entry)."""
    index = tf.minimum(tf.searchsorted(table, codes), tf.size(table) - 1)
    return tf.equal(tf.gather(table, index), codes)


def _utf8_length(codes):
    return 1 + tf.cast(codes >= 0x80, tf.int64) + tf.cast(codes >= 0x800, tf.int64) + tf.cast(codes >= 0x10000,
                                                                                             tf.int64)


def _starts(ragged):
    """Per row of a ragged tensor: the index of its first value among all of them."""
    return ragged.row_splits[:-1]


class InGraphTokenizer(tf.Module):
    """ALBERT's text normalisation and SentencePiece tokenization as TensorFlow ops (tensorflow-text)."""

    def __init__(self, sp_model_proto: bytes, do_lower_case: bool, name="tokenizer"):
        super().__init__(name=name)
        import tensorflow_text as text

        self.do_lower_case = do_lower_case
        self._proto = sp_model_proto  # character_tables' key, when piece_characters is traced
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
        return self.split_digit_commas(self.encode_pieces(self.normalize(texts)))

    def split_digit_commas(self, pieces):
        """The digit-comma rule over pieces [B, (n)] (albert.text.tokenization.split_digit_commas)."""
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

    # ------------------------------------------------------------------------------- characters of the pieces
    def normalize_with_origin(self, texts) -> tuple:
        """albert.text.offsets.preprocess_with_origin in the graph: (the preprocessed texts [B], origin [B, (p)]
        int64: per character of each, the index of the character of the text it comes from). NFKD and combining
        marks from Python's Unicode data (character_tables), lower case by tf.strings.lower (a final sigma in
        context, as Python)."""
        table = {k: tf.constant(v) for k, v in character_tables(self._proto).items()}
        chars = tf.strings.unicode_decode(texts, "UTF-8")
        codes, rows = chars.values, chars.value_rowids()
        batch = chars.nrows()
        local = tf.ragged.range(chars.row_lengths()).values
        space = _member(codes, table["space"])
        first = tf.math.unsorted_segment_min(tf.where(space, tf.constant(BIG, tf.int64), local), rows, batch)
        last = tf.math.unsorted_segment_max(tf.where(space, tf.constant(-1, tf.int64), local), rows, batch)
        after_space = tf.concat([tf.zeros_like(space[:1]), space[:-1]], 0) & (local > 0)
        keep = (local >= tf.gather(first, rows)) & (local <= tf.gather(last, rows)) & ~(space & after_space)
        codes = tf.boolean_mask(tf.where(space, ord(" "), codes), keep)
        origin, rows = tf.boolean_mask(local, keep), tf.boolean_mask(rows, keep)
        index = tf.minimum(tf.searchsorted(table["keys"], codes), tf.size(table["keys"]) - 1)
        listed = tf.equal(tf.gather(table["keys"], index), codes)
        count = tf.where(listed, tf.gather(tf.cast(table["lengths"], tf.int64), index), 1)
        source = tf.repeat(tf.range(tf.size(codes, out_type=tf.int64)), count)
        within = tf.ragged.range(count).values
        at = tf.gather(tf.cumsum(tf.cast(table["lengths"], tf.int64), exclusive=True), tf.gather(index, source))
        codes = tf.where(tf.gather(listed, source), tf.gather(table["values"], tf.where(tf.gather(listed, source),
                                                                                      at + within, 0)),
                         tf.gather(codes, source))
        origin = tf.RaggedTensor.from_value_rowids(tf.gather(origin, source), tf.gather(rows, source), nrows=batch)
        if self.do_lower_case:  # one code point for one (tests/test_squad_alignment.py); tf.strings.lower stops at a
            nul = tf.equal(codes, 0)  # NUL, so U+0001 stands in for it (neither is a letter: the sigma rule is the same)
            lowered = tf.strings.lower(tf.strings.unicode_encode(origin.with_values(tf.where(nul, 1, codes)), "UTF-8"),
                                       encoding="utf-8")
            codes = tf.where(nul, 0, tf.strings.unicode_decode(lowered, "UTF-8").values)
        return tf.strings.unicode_encode(origin.with_values(codes), "UTF-8"), origin

    def piece_characters(self, texts) -> tuple:
        """albert.text.offsets.piece_characters in the graph: (pieces [B, (n)] strings, as `pieces`; starts and ends
        [B, (n)] int64: the index in its text of the first and of the last character each piece holds, as
        PieceCharacters.starts / .ends). The characters of each piece come from tensorflow-text's SentencePiece
        offsets (tokenize_with_offsets), shared out within each of its pieces as albert.text.offsets does."""
        table = {k: tf.constant(v) for k, v in character_tables(self._proto).items()}
        normalized, origin = self.normalize_with_origin(texts)
        batch = origin.nrows()
        segments, begins, ends = self.sentencepiece.tokenize_with_offsets(normalized)
        pieces = self.split_digit_commas(self.unigram.encode(tf.strings.reduce_join(segments, axis=-1))[0])
        # the preprocessed characters: their code points, global byte offsets, and which SentencePiece keeps
        chars = tf.strings.unicode_decode(normalized, "UTF-8")
        width = _utf8_length(chars.values)
        row_bytes = tf.cumsum(tf.math.unsorted_segment_sum(width, chars.value_rowids(), batch), exclusive=True)
        char_byte = tf.cumsum(width, exclusive=True)
        kept = ~_member(chars.values, table["skipped"])
        kept_before = tf.concat([tf.cumsum(tf.cast(kept, tf.int64), exclusive=True),
                                 [tf.reduce_sum(tf.cast(kept, tf.int64))]], 0)
        kept_at = tf.concat([tf.where(kept)[:, 0], [0]], 0)
        # each segment's characters [begin, end) among them, and how many it keeps
        segment_rows = segments.value_rowids()
        base = tf.gather(row_bytes, segment_rows)
        begin = tf.searchsorted(char_byte, base + begins.values, out_type=tf.int64)
        end = tf.searchsorted(char_byte, base + ends.values, out_type=tf.int64)
        kept_count = tf.gather(kept_before, end) - tf.gather(kept_before, begin)
        # the segments' characters, `▁` aside: one kept character each when as many, else all of them for each
        surface = tf.strings.unicode_decode(segments.values, "UTF-8")
        real = ~tf.equal(surface.values, ord(SPIECE_UNDERLINE))
        of = surface.value_rowids()
        count = tf.math.unsorted_segment_sum(tf.cast(real, tf.int64), of, surface.nrows())
        rank = tf.boolean_mask(tf.cumsum(tf.cast(real, tf.int64), exclusive=True)
                               - tf.gather(tf.cumsum(count, exclusive=True), of), real)
        of = tf.boolean_mask(of, real)
        first_kept = tf.gather(kept_before, tf.gather(begin, of))
        one_each = tf.gather(tf.equal(count, kept_count), of)
        has = tf.gather(kept_count, of) > 0
        low = tf.gather(kept_at, tf.where(one_each, first_kept + rank, first_kept))
        high = tf.gather(kept_at, tf.where(one_each, first_kept + rank, first_kept + tf.gather(kept_count, of) - 1))
        # the final pieces share out the segments' characters in order (their concatenation is the same)
        piece_codes = tf.strings.unicode_decode(pieces.values, "UTF-8")
        held = tf.math.unsorted_segment_sum(tf.cast(~tf.equal(piece_codes.values, ord(SPIECE_UNDERLINE)), tf.int64),
                                            piece_codes.value_rowids(), piece_codes.nrows())
        owner = tf.repeat(tf.range(tf.size(held, out_type=tf.int64)), held)
        size = tf.size(held)
        low = tf.math.unsorted_segment_min(tf.where(has, low, tf.constant(BIG, tf.int64)), owner, size)
        high = tf.math.unsorted_segment_max(tf.where(has, high, tf.constant(-1, tf.int64)), owner, size)
        filled = high >= 0
        # back to the characters of the texts: a piece's last one extended over the combining marks that follow
        raw = tf.strings.unicode_decode(texts, "UTF-8")
        raw_base = tf.gather(raw.row_splits, pieces.value_rowids())
        raw_length = tf.gather(raw.row_lengths(), pieces.value_rowids())
        origins = tf.concat([origin.values, [0]], 0)
        start = tf.gather(origins, tf.where(filled, low, 0))
        last = tf.where(filled, tf.gather(origins, tf.where(filled, high, 0)), tf.constant(-1, tf.int64))
        standing = tf.concat([tf.where(~_member(raw.values, table["absorbed"]))[:, 0],
                              [tf.size(raw.values, out_type=tf.int64)]], 0)
        following = tf.gather(standing, tf.searchsorted(standing, raw_base + last + 1, out_type=tf.int64))
        last = tf.minimum(following, raw_base + raw_length) - 1 - raw_base
        # a piece holding no character: from the next piece's first character to the previous piece's last one
        filled_at = tf.where(filled)[:, 0]
        piece_rows = pieces.value_rowids()
        flat = tf.range(tf.size(held, out_type=tf.int64))
        nxt = tf.searchsorted(filled_at, flat, out_type=tf.int64)
        nxt_index = tf.gather(tf.concat([filled_at, [0]], 0), nxt)
        nxt_ok = (nxt < tf.size(filled_at, out_type=tf.int64)) & tf.equal(tf.gather(piece_rows, nxt_index),
                                                                          piece_rows)
        start = tf.where(filled, start, tf.where(nxt_ok, tf.gather(start, nxt_index), raw_length))
        prv = tf.searchsorted(filled_at, flat, side="right", out_type=tf.int64) - 1
        prv_index = tf.gather(tf.concat([filled_at, [0]], 0), tf.maximum(prv, 0))
        prv_ok = (prv >= 0) & tf.equal(tf.gather(piece_rows, prv_index), piece_rows)
        last = tf.where(filled, last, tf.where(prv_ok, tf.gather(last, prv_index), tf.constant(-1, tf.int64)))
        return pieces, pieces.with_values(start), pieces.with_values(last)

    def tokenize(self, texts):
        """[B] strings -> [B, (n)] int32 ids, as FullTokenizer.tokenize_to_ids."""
        return tf.cast(self.sentencepiece.string_to_id(self.pieces(texts)), tf.int32)

    def pack(self, segments: list, seq_length):
        """`[CLS] a [SEP]` or `[CLS] a [SEP] b [SEP]` padded to seq_length, as run_classifier builds them: a pair is
        truncated by removing the last piece of the longer segment (b on ties) until it fits; a pair whose b is
        empty is packed as a single segment. The original's names (`input_ids`, `input_mask`, `segment_ids`); an
        export gives its users TF Hub's (albert.export.savedmodel.hub_inputs)."""
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
        return {"input_ids": tf.cast(ids.to_tensor(0, shape=shape), tf.int32),
                "input_mask": tf.cast(tf.ones_like(ids).to_tensor(0, shape=shape), tf.int32),
                "segment_ids": tf.cast(types.to_tensor(0, shape=shape), tf.int32)}
