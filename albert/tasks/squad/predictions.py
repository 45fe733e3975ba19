"""SQuAD predictions: running the model over feature records, and decoding spans back to original text
(spec §10.3, §10.4).

v1.1: the n-best starts and ends of each feature, kept when both lie in the document part of the span, the
start has its maximum context there, end >= start and the span is at most `max_answer_length` pieces; the same
span seen from overlapping features has its scores averaged; texts are de-duplicated; probabilities are a softmax
over the kept scores. v2.0: the start beam x end beam of the XLNet-style head, scored by summed log
probabilities, and per question the no-answer score `score_null` = the smallest answer-class logit of its
features (a higher logit means "no answer"). A question predicts "" where score_null > the threshold.

Questions that have no feature (a context of no piece) are predicted "" (the original dropped a question whose
paragraph it could not align).

One owner for run_squad.py's predictions (albert.tasks.squad.job) and `AlbertSquadV1.answer` / `AlbertSquadV2.answer` on
raw strings (albert.tasks.squad.answering): both run `run_model` over the features of albert.tasks.squad.windows and
decode with `nbest_answers`.
"""

import math

import numpy as np

from albert.tasks.squad.windows import Alignment, model_inputs, prediction_outputs


def run_model(model, batches, version_2: bool, step=None) -> dict:
    """{unique_id: {output name: numpy array}} of every feature of `batches` (a finite dataset of feature batches,
    e.g. albert.data.readers.prediction_batches: grouped by length, cut to it); `step`: model_step's, when kept."""
    step = step or model_step(model, version_2)
    return keyed_outputs(lambda inputs: {k: v.numpy() for k, v in step(inputs).items()}, batches, version_2)


def model_step(model, version_2: bool):
    """The graph function of one prediction batch: model inputs -> the outputs decoding needs."""
    import tensorflow as tf

    names = prediction_outputs(version_2)

    @tf.function(reduce_retracing=True)
    def step(inputs):
        outputs = model(inputs, training=False)
        return {name: outputs[name] for name in names}

    return step


def keyed_outputs(step, batches, version_2: bool) -> dict:
    """{unique_id: {output name: numpy array}} of `step` (a batch's model inputs -> {name: array}, e.g. a
    model.tflite's albert.export.litert.tflite_runner) over `batches`."""
    keys = model_inputs(version_2)
    results = {}
    for batch in batches:
        outputs = step({k: batch[k] for k in keys})
        for row, unique_id in enumerate(batch["unique_ids"].numpy().reshape(-1)):
            results[int(unique_id)] = {k: v[row] for k, v in outputs.items()}
    return results


def _paragraph_alignments(metadata: dict) -> list:
    return [Alignment([], p["start"], p["end"], []) for p in metadata["paragraphs"]]


def _valid(feature: dict, start: int, end: int, max_answer_length: int) -> bool:
    """Both positions inside the document part of the span, start with maximum context, a short forward span."""
    first, length = feature["doc_offset"], feature["span_length"]
    if not (first <= start < first + length and first <= end < first + length):
        return False
    return feature["max_context"][start - first] == "1" and start <= end and end - start + 1 <= max_answer_length


def _softmax(scores: list) -> list:
    if not scores:
        return []
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    return [e / sum(exps) for e in exps]


def _nbest(candidates: dict, alignment: Alignment, paragraph_text: str, n_best_size: int) -> list:
    """{(start piece, end piece): [(start score, end score), ...]} -> n-best entries, best first, unique texts."""
    scored = []
    for (start, end), scores in candidates.items():
        s = sum(x for x, _ in scores) / len(scores)
        e = sum(y for _, y in scores) / len(scores)
        scored.append((s + e, start, end, s, e))
    scored.sort(key=lambda c: (-c[0], c[1], c[2]))
    entries, texts = [], set()
    for total, start, end, s, e in scored:
        text, first, last = alignment.span(start, end, paragraph_text)
        if not text or text in texts:
            continue
        texts.add(text)
        entries.append((text, s, e, first, last))
        if len(entries) == n_best_size:
            break
    probabilities = _softmax([s + e for _, s, e, _, _ in entries])  # the original's key order, then the offsets
    return [{"text": text, "probability": p, "start_log_prob": s, "end_log_prob": e, "start": first, "end": last}
            for (text, s, e, first, last), p in zip(entries, probabilities)]


def _group_features(metadata: dict) -> dict:
    grouped = {}
    for feature in metadata["features"]:
        grouped.setdefault(feature["example"], []).append(feature)
    return grouped


def decode(examples: list, metadata: dict, results: dict, n_best_size: int, max_answer_length: int,
           version_2: bool) -> tuple:
    """(predictions {qid: text}, nbest {qid: [entries]}, null_odds {qid: score_null} (v2; empty for v1)): the files
    run_squad.py writes, the entries without their character offsets.

    v2 predictions are the best non-null texts (no threshold applied); see `apply_null_threshold`."""
    predictions, nbest, null_odds = {}, {}, {}
    for example, (entries, null_score) in zip(examples, nbest_answers(examples, metadata, results, n_best_size,
                                                                      max_answer_length, version_2)):
        predictions[example.qas_id] = entries[0]["text"]
        nbest[example.qas_id] = [{k: v for k, v in entry.items() if k not in ("start", "end")} for entry in entries]
        if version_2:
            null_odds[example.qas_id] = null_score
    return predictions, nbest, null_odds


def nbest_answers(examples: list, metadata: dict, results: dict, n_best_size: int, max_answer_length: int,
                  version_2: bool) -> list:
    """Per example (in order): (its n-best entries, best first, each {"text", "probability", "start_log_prob",
    "end_log_prob", "start", "end"}, where text == paragraph_text[start:end]; its score_null (v2), else None).
    A question with no span has the one entry "" with start = end = -1."""
    alignments = _paragraph_alignments(metadata)
    grouped = _group_features(metadata)
    answers = []
    for index, example in enumerate(examples):
        meta = metadata["examples"][index]
        alignment = alignments[meta["paragraph"]]
        features = [f for f in grouped.get(index, []) if f["unique_id"] in results]
        candidates = {}
        for feature in features:
            out = results[feature["unique_id"]]
            real = feature["doc_offset"] + feature["span_length"] + 1  # [CLS] question [SEP] span [SEP]
            for start, end, s, e in _spans(out, n_best_size, version_2, real):
                if _valid(feature, start, end, max_answer_length):
                    key = (feature["span_start"] + start - feature["doc_offset"],
                           feature["span_start"] + end - feature["doc_offset"])
                    candidates.setdefault(key, []).append((s, e))
        entries = _nbest(candidates, alignment, example.paragraph_text, n_best_size)
        if not entries:
            entries = [{"text": "", "start_log_prob": -1e6 if version_2 else 0.0,
                        "end_log_prob": -1e6 if version_2 else 0.0, "probability": 1.0, "start": -1, "end": -1}]
        null_score = min((float(results[f["unique_id"]]["cls_logits"]) for f in features), default=1e6) \
            if version_2 else None
        answers.append((entries, null_score))
    return answers


def _spans(out: dict, n_best_size: int, version_2: bool, real: int):
    """(start position, end position, start score, end score) candidates of one feature's outputs. v1: the
    `n_best_size` best of the `real` (unpadded) positions, so the candidates do not depend on how far a batch was
    padded (the original ranked padded positions too, which can never be answers, and so could see fewer)."""
    if version_2:
        start_n = len(out["start_top_index"])
        end_n = len(out["end_top_index"]) // start_n
        for i in range(start_n):
            for j in range(end_n):
                yield (int(out["start_top_index"][i]), int(out["end_top_index"][i * end_n + j]),
                       float(out["start_top_log_probs"][i]), float(out["end_top_log_probs"][i * end_n + j]))
        return
    starts = np.argsort(-out["start_logits"][:real], kind="stable")[:n_best_size]
    ends = np.argsort(-out["end_logits"][:real], kind="stable")[:n_best_size]
    for start in starts:
        for end in ends:
            yield int(start), int(end), float(out["start_logits"][start]), float(out["end_logits"][end])


def apply_null_threshold(predictions: dict, null_odds: dict, threshold: float) -> dict:
    """"" wherever the no-answer score exceeds the threshold (the official scorer's rule)."""
    return {qid: "" if null_odds[qid] > threshold else text for qid, text in predictions.items()}
