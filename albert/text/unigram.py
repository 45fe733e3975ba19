"""SentencePiece's unigram segmentation as TensorFlow ops, choosing the pieces the Python `sentencepiece` does.

Why not tensorflow-text's SentencePiece op alone: the best segmentation can be a tie that only floating-point
rounding breaks ("2.666" is "6" + "66" or "66" + "6", the same score), and tensorflow-text's build adds the path
scores in double precision where the `sentencepiece` package (0.2.x, what `FullTokenizer` and the original's Python
use) adds them in float32; the two then disagree on a few sentences of real text (4 of the 7,655 GLUE dev examples
of tests/test_real_artifacts.py). Here tensorflow-text still normalizes (the model's own rules), and this module
runs the package's Viterbi search over the normalized bytes with its float32 arithmetic:

- one pass over the bytes: the pieces starting at each character are found by walking a byte trie of the pieces
  (the walks of the last max-piece-length starts advance together, one hash lookup per byte), and the best path to
  each byte is the max over the pieces ending there of (best path to their start + their score), float32 sums, the
  earliest start winning a tie; a character no piece covers is one unknown piece;
- back along the chosen pieces; consecutive unknown pieces are merged into one (as the package returns them).

Speed: no piece holds a `▁` after its first character (the models `train_spm` and the release make), so every `▁`
begins a piece and words are searched apart, each distinct word once, in a pass as long as the longest word. A
word's choice can differ from the whole sentence's only through the rounding of the path score before it; where
a word's best and second-best candidates at some byte are closer than that rounding could move them, its sentence
is searched whole, exactly as the package does (a handful of sentences in thousands).

`encode(normalized)` takes strings as tensorflow-text's pieces joined (the `▁` for spaces and the dummy prefix
included) and returns the pieces (their text) and ids as [B, (n)] ragged tensors (int64 row splits).
"""

import numpy as np
import tensorflow as tf

from albert.text.tokenization import SPIECE_UNDERLINE as SPACE
from albert.ground.wire import fields

NORMAL, UNKNOWN, USER_DEFINED, UNUSED = 1, 2, 4, 5  # ModelProto.SentencePiece.Type
UNK_PENALTY = np.float32(10.0)  # sentencepiece's kUnkPenalty
# sentencepiece's OneCharLen: a UTF-8 character's byte length from the high nibble of its first byte
CHAR_LENGTH = [1] * 12 + [2, 2, 3, 4]
# A word's search agrees with its sentence's unless two candidates are within what float32 rounding of the path
# score before the word can move them: at most half a unit in the last place per addition, a unit being 2^-7 while
# that score stays under 2^17 in magnitude (sentences of up to MAX_WORDWISE_BYTES bytes: every piece, the unknown
# one included, scores above -24 per byte). Closer than GAP_PER_BYTE x (the word's bytes + 1): searched whole.
MAX_WORDWISE_BYTES = 4096
GAP_PER_BYTE = 2.0 ** -6


def read_pieces(proto: bytes) -> list:
    """(piece bytes, score, type) of every piece of a serialized SentencePiece ModelProto, in id order."""
    pieces = []
    for number, value in fields(proto):
        if number == 1:  # repeated SentencePiece pieces: piece 1, score 2, type 3 (default NORMAL)
            entry = dict(fields(value))
            pieces.append((entry.get(1, b""), np.float32(entry.get(2, 0.0)), entry.get(3, NORMAL)))
    return pieces


class UnigramViterbi(tf.Module):
    """The unigram model of one SentencePiece model proto, as lookup tables and the search in `encode`."""

    def __init__(self, proto: bytes, name="unigram"):
        super().__init__(name=name)
        pieces = read_pieces(proto)
        normal = [score for _, score, kind in pieces if kind == NORMAL]
        min_score, max_score = np.float32(min(normal)), np.float32(max(normal))
        self.unk_id = next(i for i, (_, _, kind) in enumerate(pieces) if kind == UNKNOWN)
        self.unk_score = np.float32(min_score - UNK_PENALTY)
        matched = [(i, piece, score, kind) for i, (piece, score, kind) in enumerate(pieces)
                   if kind in (NORMAL, USER_DEFINED) and piece]  # control pieces are never matched in text
        children, node_piece, node_score = {}, [-1], [0.0]
        for piece_id, piece, score, kind in matched:
            node = 0
            for byte in piece:
                key = node * 256 + byte
                if key not in children:
                    children[key] = len(node_piece)
                    node_piece.append(-1)
                    node_score.append(0.0)
                node = children[key]
            node_piece[node] = piece_id
            # A user-defined symbol's bonus: its byte length times the best score, less 0.1 (as the package).
            node_score[node] = score if kind == NORMAL else np.float32(float(np.float32(len(piece) * max_score))
                                                                      - 0.1)
        self.max_length = max(len(piece) for _, piece, _, _ in matched)
        space = SPACE.encode()
        self.wordwise = not any(space in piece[len(space):] for _, piece, _, _ in matched)
        self.transitions = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant(list(children), tf.int64), tf.constant(list(children.values()), tf.int64)), -1)
        self.node_piece = tf.constant(node_piece, tf.int32)
        self.node_score = tf.constant(np.array(node_score, np.float32))
        # Traced once per model, then called from any graph (the preprocessor's, a SavedModel's).
        # (autograph off: the loops here are tf.while_loop / tf.foldl already, and converting them costs seconds)
        self.encode = tf.function(self._encode, input_signature=[tf.TensorSpec([None], tf.string)],
                                  autograph=False)

    # ------------------------------------------------------------------------------------------------ search
    def _search(self, strings):
        """The best path of each string [B], as the package's float32 Viterbi finds it: (lengths [B], and per byte
        position 0..N the length and id of the chosen piece ending there [B, N + 1], and the smallest gap between the
        best and the second-best candidate over the positions [B])."""
        lengths = tf.strings.length(strings)
        split = tf.strings.bytes_split(strings)
        flat = tf.cast(tf.reshape(tf.io.decode_raw(split.flat_values, tf.uint8), [-1]), tf.int32)
        codes = split.with_flat_values(flat).to_tensor(-1)  # [B, N] bytes, -1 past each string
        batch, size = tf.shape(codes)[0], tf.shape(codes)[1]
        width = self.max_length
        # Each byte that begins a character, and that character's byte length (cut at the string's end), else 0.
        is_start = (codes >= 0) & ((codes < 0x80) | (codes >= 0xC0))
        char_length = tf.where(is_start, tf.minimum(tf.gather(tf.constant(CHAR_LENGTH), tf.maximum(codes, 0) // 16),
                                                    lengths[:, None] - tf.range(size)[None, :]), 0)

        def columns(x):
            return tf.TensorArray(x.dtype, size=size + 1, element_shape=[None]).unstack(
                tf.transpose(tf.pad(x, [[0, 0], [0, 1]])))

        byte_at, begins_at = columns(codes), columns(char_length)
        by_length = tf.range(1, width + 1)[None, :]
        minus_inf = tf.constant(-np.inf, tf.float32)

        def root(begins):  # a new match at the trie's root where a character begins, none elsewhere
            return tf.where(begins > 0, tf.constant(0, tf.int64), -1)[:, None]

        def step(s, best, matches, begins, closest, back_lengths, back_ids):
            # Column k of the windows: the match that began at byte s - k (its trie state after bytes s-k..s-1),
            # the length of the character that begins there (0: none does), the best path's score to byte s - k.
            byte = tf.cast(byte_at.read(s), tf.int64)[:, None]
            alive = (matches >= 0) & (byte >= 0)
            matches = tf.where(alive, self.transitions.lookup(tf.where(alive, matches * 256 + byte, -1)), -1)
            node = tf.cast(tf.maximum(matches, 0), tf.int32)
            piece = tf.where(matches >= 0, tf.gather(self.node_piece, node), -1)
            unknown = tf.equal(begins, by_length) & (piece < 0)  # no piece covers exactly that character
            piece = tf.where(unknown, self.unk_id, piece)
            score = tf.where(unknown, self.unk_score, tf.gather(self.node_score, node))
            # Arriving at byte s + 1: max over the pieces ending there, float32 sums, the earliest start on a tie.
            candidates = tf.where(piece >= 0, best + score, minus_inf)
            top = tf.reduce_max(candidates, axis=1)
            winners = (piece >= 0) & tf.equal(candidates, top[:, None])
            length = tf.reduce_max(tf.where(winners, by_length, 0), axis=1)
            chosen = tf.reduce_max(tf.where(by_length == length[:, None], piece, -1), axis=1)
            runner_up = tf.reduce_max(tf.where(by_length == length[:, None], minus_inf, candidates), axis=1)
            closest = tf.minimum(closest, top - runner_up)  # inf where one candidate (or none) arrives
            new = begins_at.read(s + 1)
            return (s + 1, tf.concat([top[:, None], best[:, :-1]], axis=1),
                    tf.concat([root(new), matches[:, :-1]], axis=1), tf.concat([new[:, None], begins[:, :-1]], axis=1),
                    closest, back_lengths.write(s + 1, length), back_ids.write(s + 1, chosen))

        first = begins_at.read(0)
        record = tf.TensorArray(tf.int32, size=size + 1, element_shape=[None])
        *_, closest, back_lengths, back_ids = tf.while_loop(lambda s, *_: s < size, step, (
            tf.constant(0), tf.concat([tf.zeros([batch, 1]), tf.fill([batch, width - 1], minus_inf)], axis=1),
            tf.concat([root(first), tf.fill([batch, width - 1], tf.constant(-1, tf.int64))], axis=1),
            tf.concat([first[:, None], tf.zeros([batch, width - 1], tf.int32)], axis=1),
            tf.fill([batch], tf.constant(np.inf, tf.float32)),
            record.write(0, tf.zeros([batch], tf.int32)), record.write(0, tf.fill([batch], -1))))
        return lengths, tf.transpose(back_lengths.stack()), tf.transpose(back_ids.stack()), closest

    @staticmethod
    def _path(lengths, back_lengths, back_ids):
        """The chosen pieces, flat and in order (each string's, the strings in order): (row, begin, end, id).
        Byte t ends a piece of the path whose start, t - back_lengths[t], ends the one before; pointer jumping
        marks the whole chain from each string's end in log2(N) vectorized rounds (after round r, every end within
        2^r pieces of the last one)."""
        batch, columns = tf.shape(back_lengths)[0], tf.shape(back_lengths)[1]
        byte = tf.range(columns)[None, :]
        flat_base = tf.range(batch)[:, None] * columns

        def mark(ends_and_jump, _):
            ends, jump = ends_and_jump
            target = tf.reshape(tf.where(ends, flat_base + jump, batch * columns), [-1])  # unmarked: past the end
            reached = tf.math.unsorted_segment_max(tf.ones_like(target), target, batch * columns + 1)[:-1]
            return ends | tf.reshape(reached > 0, [batch, columns]), tf.gather(jump, jump, batch_dims=1)

        rounds = tf.cast(tf.math.ceil(tf.math.log(tf.cast(columns, tf.float32)) / np.log(2.0)), tf.int32) + 1
        last = tf.equal(byte, lengths[:, None]) & (lengths[:, None] > 0)
        ends, _ = tf.foldl(mark, tf.range(rounds), (last, tf.maximum(byte - back_lengths, 0)))
        at = tf.cast(tf.where(ends & (byte > 0)), tf.int32)  # row-major order
        end = at[:, 1]
        return at[:, 0], end - tf.gather_nd(back_lengths, at), end, tf.gather_nd(back_ids, at)

    # ------------------------------------------------------------------------------------------------ encode
    def _wordwise(self, normalized):
        """The pieces (row, begin, end, id) of the strings searched a distinct word at a time, and which strings
        must be searched whole instead [B] (see the module's note)."""
        words = tf.strings.split(normalized, sep=SPACE)  # the text before the first ▁, then each word without it
        first = tf.equal(tf.range(tf.size(words.flat_values, out_type=tf.int64)),
                         tf.gather(words.row_starts(), words.value_rowids()))
        flat = tf.where(first, words.flat_values, tf.strings.join([SPACE, words.flat_values]))
        word_bytes = tf.strings.length(flat)
        present = word_bytes > 0
        flat, word_bytes = tf.boolean_mask(flat, present), tf.boolean_mask(word_bytes, present)
        word_rows = tf.cast(tf.boolean_mask(words.value_rowids(), present), tf.int32)
        distinct, index = tf.unique(flat, out_idx=tf.int32)
        lengths, back_lengths, back_ids, closest = self._search(distinct)
        rows, begin, end, ids = self._path(lengths, back_lengths, back_ids)
        near_tie = tf.gather(closest < GAP_PER_BYTE * tf.cast(lengths + 1, tf.float32), index)
        whole = tf.math.unsorted_segment_max(tf.cast(near_tie, tf.int32), word_rows, tf.size(normalized)) > 0
        whole |= tf.strings.length(normalized) > MAX_WORDWISE_BYTES
        # Each occurrence of a word gets the distinct word's pieces, moved to where it is in its string.
        counts = tf.math.unsorted_segment_sum(tf.ones_like(rows), rows, tf.size(distinct))
        first_piece = tf.cumsum(counts, exclusive=True)
        occurrence = tf.repeat(tf.range(tf.size(index)), tf.gather(counts, index))
        within = tf.range(tf.size(occurrence)) - tf.gather(tf.cumsum(tf.gather(counts, index), exclusive=True),
                                                           occurrence)
        source = tf.gather(first_piece, tf.gather(index, occurrence)) + within
        first_of_row = tf.math.unsorted_segment_min(tf.range(tf.size(word_rows)), word_rows, tf.size(normalized))
        offset = tf.cumsum(word_bytes, exclusive=True)
        offset -= tf.gather(offset, tf.gather(first_of_row, word_rows))
        shift = tf.gather(offset, occurrence)
        pieces = (tf.gather(word_rows, occurrence), tf.gather(begin, source) + shift, tf.gather(end, source) + shift,
                  tf.gather(ids, source))
        return pieces, whole

    def _encode(self, normalized):
        """`encode`: normalized strings [B] -> (pieces [B, (n)] strings, ids [B, (n)] int32)."""
        if self.wordwise:
            pieces, whole = self._wordwise(normalized)
            kept = tf.gather(~whole, pieces[0])
            exact = self._path(*self._search(tf.where(whole, normalized, ""))[:3])  # none unless flagged
            pieces = [tf.concat([tf.boolean_mask(w, kept), e], axis=0) for w, e in zip(pieces, exact)]
            order = tf.argsort(pieces[0], stable=True)  # by string, each string's pieces in order
            rows, begin, end, ids = (tf.gather(x, order) for x in pieces)
        else:
            rows, begin, end, ids = self._path(*self._search(normalized)[:3])
        # Consecutive unknown pieces are one piece (sentencepiece's Encode merges them).
        unknown = tf.equal(ids, self.unk_id)
        none = tf.zeros_like(unknown[:1])  # [False], or [] when there is no piece at all
        after_unknown = tf.concat([none, unknown[:-1] & tf.equal(rows[1:], rows[:-1])], axis=0)
        keep = ~(unknown & after_unknown)
        last = tf.boolean_mask(end, tf.concat([keep[1:], ~none], axis=0))  # where each kept piece's run ends
        rows, begin, ids = tf.boolean_mask(rows, keep), tf.boolean_mask(begin, keep), tf.boolean_mask(ids, keep)
        pieces = tf.strings.substr(tf.gather(normalized, rows), begin, last - begin)
        rows, batch = tf.cast(rows, tf.int64), tf.size(normalized, out_type=tf.int64)
        return (tf.RaggedTensor.from_value_rowids(pieces, rows, nrows=batch, validate=False),
                tf.RaggedTensor.from_value_rowids(ids, rows, nrows=batch, validate=False))
