"""run_squad.py's serving SavedModel on raw text, computed in float32 and tokenized in the graph (loading it needs
`import tensorflow_text`).

`serving_default(question: [B] string, context: [B] string)` -> per question `answer` (the text as written in the
context, "" when none), `start` / `end` (int32 character offsets: answer == context[start:end]; -1 / -1 when none)
and `score` (float32: the span's start + end logits for 1.1, its start + end log-probabilities for 2.0; 0.0 when
none); a 2.0 model adds `null_score` (float32: the smallest no-answer logit over the question's windows, 1e6 when
the context has no piece) and `has_answer` (bool: null_score <= the threshold given at export and a span found;
where it is false the answer is "").

Everything run_squad.py does to a question is done in the graph, so the answers are `AlbertSquadV1/V2.answer`'s
(and `predictions.json`'s) on the same model: the question's first max_query_length pieces; the context's pieces
in windows doc_stride pieces apart (albert.tasks.squad.windows.doc_spans); `[CLS] question [SEP] window [SEP]`
with p_mask; each position read in the window where it has most context (max_context_flags); the model over every
window of the request at once, cut to the length bucket of the longest; the spans of albert.tasks.squad.predictions
(1.1: the n_best_size best starts x ends of the real positions; 2.0: the model's start x end beam), kept when both
ends lie in the window's context, the start has its most context there, start <= end and the span is at most
max_answer_length pieces; the best by start + end score whose text is not empty (ties: the earlier start, then the
earlier end).

The pieces are mapped back to the characters of the context as albert.tasks.squad.windows.align maps them: through
the tokenizer's offsets (InGraphTokenizer.piece_characters, the graph's albert.text.offsets.piece_characters), in
every script.

Bad requests are refused by the graph with one line (`assertion failed: [context: row 1 is empty; ...]`, an
InvalidArgumentError; TensorFlow Serving answers it as a 400): inputs of different batch sizes, an empty (or
whitespace-only) context or question.
"""

import numpy as np
import tensorflow as tf

from albert.data.buckets import cut_to_bucket
from albert.data.features import boundaries
from albert.tasks.squad.windows import Windows, model_inputs, prediction_outputs
from albert.export.serving import export_packed
from albert.export.savedmodel import first_row, refuse_unless, save, text_root
from albert.text.graph_tokenizer import InGraphTokenizer

NO_PIECES_NULL_SCORE = 1e6  # albert.tasks.squad.predictions.nbest_answers: a question without windows
BIG = 2 ** 62


def _row_starts(ragged):
    return ragged.row_splits[:-1]


# --------------------------------------------------------------------------------------------- the windows
def window_layout(query_length, pieces, seq_length: int, doc_stride: int) -> dict:
    """The doc_spans windows of every context ([B] question and context lengths in pieces), flattened: per window
    its `row` (question), `index` (among its question's), `start` and `length` in the context's pieces and `offset`
    (its first context position: after [CLS], the question and [SEP]); per question `count` (windows), `pieces`,
    `room` (context pieces a window holds) and `step` (between window starts)."""
    room = seq_length - 3 - query_length  # at least 1: seq_length > max_query_length + 3, checked at export
    step = tf.minimum(room, doc_stride)
    count = tf.where(pieces > 0, 1 + (tf.maximum(pieces - room, 0) + step - 1) // step, 0)
    row = tf.repeat(tf.range(tf.size(pieces, out_type=tf.int64)), count)
    index = tf.ragged.range(count).values
    start = index * tf.gather(step, row)
    length = tf.minimum(tf.gather(pieces, row) - start, tf.gather(room, row))
    return {"row": row, "index": index, "start": start, "length": length,
            "offset": tf.gather(query_length, row) + 2, "count": count, "pieces": pieces, "room": room,
            "step": step}


def pack(tokenizer: InGraphTokenizer, query, doc_ids, layout: dict, seq_length: int, version_2: bool) -> dict:
    """`[CLS] question [SEP] window [SEP]` of every window, [N, seq_length] int32, as convert_examples packs it
    (2.0 adds p_mask: 0 on [CLS] and the window, 1 on the question, the [SEP]s and the padding)."""
    row = layout["row"]
    at = tf.ragged.range(layout["start"], layout["start"] + layout["length"]) + tf.gather(_row_starts(doc_ids),
                                                                                          row)[:, None]
    doc = tf.gather(doc_ids.values, at)
    query = tf.gather(query, row)
    zero = tf.RaggedTensor.from_tensor(tf.zeros([tf.size(row), 1], tf.int32))
    one, zeros = tf.ones_like, tf.zeros_like
    ids = tf.concat([zero + tokenizer.cls_id, query, zero + tokenizer.sep_id, doc, zero + tokenizer.sep_id], axis=1)
    shape = tf.stack([tf.size(row, out_type=tf.int64), seq_length])
    features = {"input_ids": ids.to_tensor(0, shape=shape), "input_mask": one(ids).to_tensor(0, shape=shape),
                "segment_ids": tf.concat([zero, zeros(query), zero, one(doc), one(zero)], 1).to_tensor(0, shape=shape)}
    if version_2:
        p_mask = tf.concat([zero, one(query), one(zero), zeros(doc), one(zero)], axis=1)
        features["p_mask"] = p_mask.to_tensor(1, shape=shape)
    return features


def most_context(layout: dict, window, position):
    """Whether piece `position` of its context has its most context in `window` (int64 tensors of one shape), by
    max_context_flags' rule: the smaller of its left and right context plus 0.01 x the window's length, the first
    best window winning. Only the few windows that can hold the piece are scored."""
    row = tf.gather(layout["row"], window)
    step, room, pieces, count = (tf.gather(layout[k], row)[..., None] for k in ("step", "room", "pieces", "count"))
    band = tf.reduce_max(tf.concat([layout["room"] // layout["step"], [0]], 0)) + 2
    position = position[..., None]
    index = position // step - tf.range(band)  # [..., band]: the windows that may hold the piece
    start = index * step
    length = tf.minimum(pieces - start, room)
    inside = (index >= 0) & (index < count) & (start <= position) & (position < start + length)
    score = (tf.cast(tf.minimum(position - start, start + length - 1 - position), tf.float64)
             + 0.01 * tf.cast(length, tf.float64))
    score = tf.where(inside, score, -np.inf)
    best = tf.reduce_max(score, -1, keepdims=True)
    first = tf.reduce_min(tf.where(inside & tf.equal(score, best), index, BIG), -1)
    return tf.equal(first, tf.gather(layout["index"], window))


def span_candidates(outputs: dict, layout: dict, version_2: bool, n_best_size: int, beam: tuple) -> tuple:
    """(start, end, start score, end score) [N, C] of every window, as albert.tasks.squad.predictions._spans: 1.1
    the n_best_size best of the real positions for each end; 2.0 the start x end beam."""
    if version_2:
        ends = beam[1]
        return (tf.repeat(tf.cast(outputs["start_top_index"], tf.int64), ends, axis=1),
                tf.cast(outputs["end_top_index"], tf.int64),
                tf.repeat(outputs["start_top_log_probs"], ends, axis=1), outputs["end_top_log_probs"])
    length = tf.shape(outputs["start_logits"])[1]
    real = layout["offset"] + layout["length"] + 1  # [CLS] question [SEP] window [SEP]
    padding = tf.range(length, dtype=tf.int64)[None, :] >= real[:, None]
    k = tf.minimum(n_best_size, length)
    start_scores, starts = tf.math.top_k(tf.where(padding, -np.inf, outputs["start_logits"]), k)
    end_scores, ends = tf.math.top_k(tf.where(padding, -np.inf, outputs["end_logits"]), k)
    return (tf.repeat(tf.cast(starts, tf.int64), k, axis=1), tf.tile(tf.cast(ends, tf.int64), [1, k]),
            tf.repeat(start_scores, k, axis=1), tf.tile(end_scores, [1, k]))


def best_spans(layout: dict, candidates: tuple, piece_starts, piece_ends, max_answer_length: int, rows) -> tuple:
    """Per question (found [B] bool, first character, last character, score float64) of the best valid span whose
    text is not empty, as albert.tasks.squad.predictions.nbest_answers ranks them: by start + end score, then by the
    earlier start and end piece."""
    start, end, start_score, end_score = candidates
    window = tf.broadcast_to(tf.range(tf.shape(start, out_type=tf.int64)[0])[:, None], tf.shape(start, tf.int64))
    offset, length, span_start = (tf.gather(layout[k], window) for k in ("offset", "length", "start"))
    valid = ((offset <= start) & (start < offset + length) & (offset <= end) & (end < offset + length)
             & (start <= end) & (end - start + 1 <= max_answer_length))
    first_piece, last_piece = span_start + start - offset, span_start + end - offset
    valid &= most_context(layout, window, first_piece)
    row = tf.gather(layout["row"], window)
    base = tf.gather(_row_starts(piece_starts), row)
    last_index = tf.maximum(tf.gather(layout["pieces"], row) - 1, 0)
    first = tf.gather(piece_starts.values, base + tf.clip_by_value(first_piece, 0, last_index))
    last = tf.gather(piece_ends.values, base + tf.clip_by_value(last_piece, 0, last_index))
    total = tf.cast(start_score, tf.float64) + tf.cast(end_score, tf.float64)
    kept = valid & (first <= last)  # a span whose text is empty is passed over
    flat = lambda x: tf.reshape(x, [-1])  # noqa: E731
    kept, total, row, first_piece, last_piece = map(flat, (kept, total, row, first_piece, last_piece))
    found = tf.math.unsorted_segment_max(tf.cast(kept, tf.int32), row, rows) > 0
    best = tf.math.unsorted_segment_max(tf.where(kept, total, -np.inf), row, rows)
    chosen = kept & tf.equal(total, tf.gather(best, row))
    earliest = tf.math.unsorted_segment_min(tf.where(chosen, first_piece, BIG), row, rows)
    chosen &= tf.equal(first_piece, tf.gather(earliest, row))
    earliest = tf.math.unsorted_segment_min(tf.where(chosen, last_piece, BIG), row, rows)
    chosen &= tf.equal(last_piece, tf.gather(earliest, row))
    size = tf.size(row, out_type=tf.int64)
    pick = tf.where(found, tf.math.unsorted_segment_min(tf.where(chosen, tf.range(size), BIG), row, rows), size)
    take = lambda x, empty: tf.gather(tf.concat([flat(x), [empty]], 0), pick)  # noqa: E731
    return found, take(first, tf.constant(0, tf.int64)), take(last, tf.constant(-1, tf.int64)), \
        take(total, tf.constant(0.0, tf.float64))


# ------------------------------------------------------------------------------------------------ the request
def checked_request(tokenizer: InGraphTokenizer, question, context) -> tuple:
    """The two inputs, computed after the checks (so that a bad request fails on its message)."""
    rows, questions = tf.shape(context)[0], tf.shape(question)[0]
    blank = f"{tokenizer._space}*"
    empty_context = tf.strings.regex_full_match(context, blank)
    empty_question = tf.strings.regex_full_match(question, blank)
    checks = [
        refuse_unless(tf.equal(questions, rows), "question: {} questions for {} contexts; send one question and one "
                      "context per row", questions, rows),
        refuse_unless(~tf.reduce_any(empty_context), "context: row {} is empty; send the text the answer is to be "
                      "found in", first_row(empty_context)),
        refuse_unless(~tf.reduce_any(empty_question), "question: row {} is empty; send the question to answer",
                      first_row(empty_question))]
    with tf.control_dependencies(checks):
        return tf.identity(question), tf.identity(context)


def export_squad_text(model, sp_model_file: str, do_lower_case: bool, seq_length: int, doc_stride: int,
                      max_query_length: int, n_best_size: int, max_answer_length: int, path: str,
                      null_score_diff_threshold: float = 0.0, length_boundaries: tuple | None = None) -> str:
    """The raw-text serving SavedModel of a fine-tuned AlbertSquadV1 / AlbertSquadV2 at `path` (see the module's
    docstring), with run_squad.py's settings; `null_score_diff_threshold`: 2.0's no-answer threshold;
    `length_boundaries` as albert.tasks.classification.serving.export_classifier's."""
    Windows(seq_length, doc_stride, max_query_length, do_lower_case).check()
    version_2 = bool(model.version_2)
    beam = (model.start_n_top, model.end_n_top) if version_2 else None
    bounds = length_boundaries or boundaries(seq_length)
    root, model = text_root(model, sp_model_file, do_lower_case)
    tokenizer = root.tokenizer
    threshold = float(null_score_diff_threshold)

    def answer(question, context):
        question, context = checked_request(tokenizer, question, context)
        rows = tf.shape(context, out_type=tf.int64)[0]
        # one tokenizer in the graph for both; the context's pieces with the characters they hold
        both, starts, ends = tokenizer.piece_characters(tf.concat([question, context], 0))
        ids = both.with_values(tf.cast(tokenizer.sentencepiece.string_to_id(both.values), tf.int32))
        query, doc_ids, pieces = ids[:rows][:, :max_query_length], ids[rows:], both[rows:]
        layout = window_layout(query.row_lengths(), pieces.row_lengths(), seq_length, doc_stride)
        features = pack(tokenizer, query, doc_ids, layout, seq_length, version_2)
        outputs = model(cut_to_bucket(features, bounds), training=False)
        found, first, last, score = best_spans(layout, span_candidates(outputs, layout, version_2, n_best_size, beam),
                                               starts[rows:], ends[rows:], max_answer_length, rows)
        served = {}
        if version_2:
            null_score = tf.math.unsorted_segment_min(outputs["cls_logits"], layout["row"], rows)
            null_score = tf.where(layout["count"] > 0, null_score, NO_PIECES_NULL_SCORE)
            found &= tf.cast(null_score, tf.float64) <= threshold
            served.update(null_score=null_score, has_answer=found)
        text = tf.strings.substr(context, first, last + 1 - first, unit="UTF8_CHAR")
        served.update(answer=tf.where(found, text, ""), start=tf.cast(tf.where(found, first, -1), tf.int32),
                      end=tf.cast(tf.where(found, last + 1, -1), tf.int32),
                      score=tf.cast(tf.where(found, score, 0.0), tf.float32))
        return served

    # traced once (the function is not an attribute of root, which would have it traced again when saved)
    serve = tf.function(answer, autograph=False).get_concrete_function(
        tf.TensorSpec([None], tf.string, name="question"), tf.TensorSpec([None], tf.string, name="context"))
    root.sp_model_file = tf.saved_model.Asset(sp_model_file)
    return save(root, path, {"serving_default": serve})


def export_squad(model, version_2: bool, path: str, seq_length: int | None, quantization: str = "none",
                 described=None, onnx_export: str = "none") -> dict:
    """A fine-tuned SQuAD model over packed inputs (`input_ids`, `input_mask`, `segment_ids`, and `p_mask` for
    2.0) -> `start_logits`, `end_logits` (1.1) or the beam outputs and `cls_logits` (2.0); with its model.tflite."""
    return export_packed(model, model_inputs(version_2), prediction_outputs(version_2), path, seq_length,
                         quantization, described=described, onnx_export=onnx_export)
