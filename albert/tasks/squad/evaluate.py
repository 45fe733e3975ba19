"""SQuAD scoring, written to give exactly the official evaluate-v1.1.py and evaluate-v2.0.py results.

Answer normalisation (lower case, punctuation and the articles a/an/the removed, whitespace collapsed), exact
match and token F1 against the best of the gold answers, and for 2.0 the HasAns / NoAns breakdown, the no-answer
threshold (`--na-prob-thresh`) and the best-threshold search. Usable alone, as the official scripts are:

    python -m albert.tasks.squad.evaluate dev-v2.0.json predictions.json --na-prob-file null_odds.json

A file whose `version` is "1.1" is scored as evaluate-v1.1.py does (keys `exact_match`, `f1`); any other as
evaluate-v2.0.py does.

One deliberate difference: where evaluate-v2.0.py crashes (a KeyError in the HasAns / NoAns breakdown when a
question has no prediction), these functions score that question 0 in the breakdown; the overall figures, like the
official ones, leave out the questions without a prediction (each one is reported on stderr). The files are read
and checked first (`score_files`): where the official scripts crash on a data file (a question without "answers",
`"answers": null`, an answer's text a number, no question at all; for 1.1, `"answers": []`) or on predictions for
none of its questions (2.0), the command line says so in one line; `"answers": []` in 2.0 is a question without an
answer, as evaluate-v2.0.py reads it.
"""

import collections
import json
import math
import re
import string
import sys

from albert.ground.atomic import write_text
from albert.ground.cli import ArgumentParser
from albert.ground.validators import check_output_path
from albert.ground.errors import AlbertError, shown
from albert.ground.user_json import load_json
from albert.ground.userfiles import where
from albert.tasks.squad import file_format as squad_file

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    text = "".join(c for c in text.lower() if c not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def answer_tokens(text: str) -> list:
    return normalize_answer(text).split() if text else []


def exact(gold: str, prediction: str) -> int:
    return int(normalize_answer(gold) == normalize_answer(prediction))


def f1_v1(gold: str, prediction: str) -> float:
    """evaluate-v1.1 token F1 (no special case for empty answers)."""
    return _f1(normalize_answer(gold).split(), normalize_answer(prediction).split())


def f1_v2(gold: str, prediction: str) -> float:
    """evaluate-v2.0 token F1: an empty gold or prediction scores 1 only when both are empty."""
    gold_tokens, prediction_tokens = answer_tokens(gold), answer_tokens(prediction)
    if not gold_tokens or not prediction_tokens:
        return float(gold_tokens == prediction_tokens)
    return _f1(gold_tokens, prediction_tokens)


def _f1(gold_tokens: list, prediction_tokens: list) -> float:
    same = sum((collections.Counter(gold_tokens) & collections.Counter(prediction_tokens)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(prediction_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def _questions(dataset: list):
    """The question objects of a data file's "data" (checked: albert.tasks.squad.file_format; an article without
    "paragraphs" or a paragraph without "qas" holds none, as every SQuAD reader here reads it)."""
    for article in dataset:
        for paragraph in article.get("paragraphs", []):
            yield from paragraph.get("qas", [])


def evaluate_v1(dataset: list, predictions: dict, log=None) -> dict:
    """evaluate-v1.1.py: {"exact_match", "f1"} in percent; a question without a prediction scores 0."""
    em = f1 = total = 0
    for qa in _questions(dataset):
        total += 1
        if qa["id"] not in predictions:
            print(f"Unanswered question {qa['id']} will receive score 0.", file=log or sys.stderr)
            continue
        golds = [a["text"] for a in qa["answers"]]
        em += max(exact(g, predictions[qa["id"]]) for g in golds)
        f1 += max(f1_v1(g, predictions[qa["id"]]) for g in golds)
    return {"exact_match": 100.0 * em / total, "f1": 100.0 * f1 / total}


def raw_scores(dataset: list, predictions: dict, log=None) -> tuple:
    """evaluate-v2.0.py get_raw_scores: ({qid: exact}, {qid: f1}) of the questions with a prediction."""
    exact_scores, f1_scores = {}, {}
    for qa in _questions(dataset):
        golds = [a["text"] for a in qa["answers"] if normalize_answer(a["text"])] or [""]
        if qa["id"] not in predictions:
            print(f"Missing prediction for {qa['id']}", file=log or sys.stderr)
            continue
        prediction = predictions[qa["id"]]
        exact_scores[qa["id"]] = max(exact(g, prediction) for g in golds)
        f1_scores[qa["id"]] = max(f1_v2(g, prediction) for g in golds)
    return exact_scores, f1_scores


def apply_no_answer_threshold(scores: dict, na_probs: dict, has_answer: dict, threshold: float) -> dict:
    """A question whose no-answer probability exceeds the threshold counts as answered "no answer"."""
    return {qid: float(not has_answer[qid]) if na_probs[qid] > threshold else score for qid, score in scores.items()}


def _summary(exact_scores: dict, f1_scores: dict, qids=None) -> dict:
    qids = list(exact_scores) if qids is None else qids
    total = len(qids)
    if not total:
        return {"exact": 0.0, "f1": 0.0, "total": 0}
    return collections.OrderedDict([
        ("exact", 100.0 * sum(exact_scores.get(k, 0) for k in qids) / total),
        ("f1", 100.0 * sum(f1_scores.get(k, 0) for k in qids) / total),
        ("total", total)])


def best_threshold(predictions: dict, scores: dict, na_probs: dict, has_answer: dict) -> tuple:
    """evaluate-v2.0.py find_best_thresh: (best score in percent, the threshold that gives it)."""
    current = best = sum(1 for k in has_answer if not has_answer[k])
    threshold = 0.0
    for qid in sorted(na_probs, key=lambda k: na_probs[k]):
        if qid not in scores:
            continue
        if has_answer[qid]:
            diff = scores[qid]
        else:
            diff = -1 if predictions[qid] else 0
        current += diff
        if current > best:
            best, threshold = current, na_probs[qid]
    return 100.0 * best / len(scores), threshold


def evaluate_v2(dataset: list, predictions: dict, na_probs: dict | None = None, na_prob_thresh: float = 1.0,
                log=None) -> dict:
    """evaluate-v2.0.py: exact, f1, total, HasAns_*, NoAns_* and, with `na_probs`, best_exact(_thresh),
    best_f1(_thresh)."""
    has_answer = {qa["id"]: bool(qa["answers"]) for qa in _questions(dataset)}
    probabilities = na_probs if na_probs is not None else {k: 0.0 for k in predictions}
    exact_raw, f1_raw = raw_scores(dataset, predictions, log)
    for qid in exact_raw:
        if qid not in probabilities:
            raise KeyError(f"no no-answer probability for question {qid}")
    exact_scores = apply_no_answer_threshold(exact_raw, probabilities, has_answer, na_prob_thresh)
    f1_scores = apply_no_answer_threshold(f1_raw, probabilities, has_answer, na_prob_thresh)
    out = _summary(exact_scores, f1_scores)
    for prefix, wanted in (("HasAns", True), ("NoAns", False)):
        qids = [k for k, v in has_answer.items() if v == wanted]
        if qids:
            out.update({f"{prefix}_{k}": v for k, v in _summary(exact_scores, f1_scores, qids).items()})
    if na_probs is not None:
        out["best_exact"], out["best_exact_thresh"] = best_threshold(predictions, exact_raw, na_probs, has_answer)
        out["best_f1"], out["best_f1_thresh"] = best_threshold(predictions, f1_raw, na_probs, has_answer)
    return dict(out)


def evaluate(dataset_json: dict, predictions: dict, na_probs: dict | None = None, na_prob_thresh: float = 1.0,
             log=None) -> dict:
    """Score by the data file's version: "1.1" as evaluate-v1.1.py (unless no-answer probabilities are given),
    anything else as evaluate-v2.0.py."""
    if dataset_json.get("version") == "1.1" and na_probs is None:
        return evaluate_v1(dataset_json["data"], predictions, log)
    return evaluate_v2(dataset_json["data"], predictions, na_probs, na_prob_thresh, log)


def _load(path: str, what: str, kind: type):
    """The JSON file `path`, which must hold a `kind` (dict: an object, list: an array)."""
    value = load_json(path, what)
    if not isinstance(value, kind):
        raise AlbertError(f"{where(path)}: the {what} must be a JSON {'object' if kind is dict else 'array'}, not a "
                          f"{type(value).__name__}")
    return value


def check_gold(dataset_json: dict, path: str, version_1: bool):
    """The data file holds what scoring reads: its layout and fields as every SQuAD reader checks them
    (albert.tasks.squad.file_format), every question's answers, and for SQuAD 1.1 scoring at least one answer a question
    (evaluate-v1.1.py fails on an empty list, evaluate-v2.0.py takes it for a question without an answer)."""
    for question in squad_file.questions(dataset_json, path):
        if question.answers is None:
            raise AlbertError(f"{where(path)}: question {shown(question.qid)} has no \"answers\"; the data file to "
                              "score gives every question's answers ([] for none, in SQuAD 2.0)")
        if version_1 and not question.answers:
            raise AlbertError(f"{where(path)}: question {shown(question.qid)} has no answer (\"answers\": []), which "
                              "SQuAD 1.1 scoring cannot score; give its answers, or score the file as SQuAD 2.0 "
                              "(\"version\": \"v2.0\")")


def score_files(data_file: str, pred_file: str, na_prob_file: str | None = None, na_prob_thresh: float = 1.0,
                log=None) -> dict:
    """The official scores of a predictions file against a SQuAD data file, each file read and checked first:
    any mistake is one line naming the file (and the question)."""
    dataset_json = _load(data_file, "SQuAD data", dict)
    predictions = _load(pred_file, "predictions", dict)
    wrong = next((k for k, v in predictions.items() if not isinstance(v, str)), None)
    if wrong is not None:
        raise AlbertError(f"{where(pred_file)}: the prediction for {shown(wrong)} is not a string; the predictions "
                          "map question ids to answer texts")
    na_probs = _load(na_prob_file, "no-answer probabilities", dict) if na_prob_file else None
    wrong = next((k for k, v in (na_probs or {}).items() if isinstance(v, bool) or
                  not isinstance(v, (int, float)) or not math.isfinite(v)), None)
    if wrong is not None:
        raise AlbertError(f"{where(na_prob_file)}: the no-answer probability of {shown(wrong)} is not a finite number")
    version_1 = dataset_json.get("version") == "1.1" and na_probs is None
    check_gold(dataset_json, data_file, version_1)
    if not version_1 and not any(qa["id"] in predictions for qa in _questions(dataset_json["data"])):
        raise AlbertError(f"{where(pred_file)}: no prediction is for a question of {where(data_file)}; the "
                          "predictions map the data file's question ids to answer texts")
    try:
        return evaluate(dataset_json, predictions, na_probs, na_prob_thresh, log)
    except KeyError as e:  # a question without its no-answer probability
        if na_prob_file is None:
            raise
        raise AlbertError(f"{where(na_prob_file)}: {e.args[0]}") from None


def main(argv=None):
    parser = ArgumentParser(prog="squad_eval", description="Official SQuAD 1.1 / 2.0 scoring.")
    parser.add_argument("data_file", help="SQuAD JSON with the gold answers")
    parser.add_argument("pred_file", help="predictions JSON {question id: answer text}")
    parser.add_argument("--out-file", "-o", help="also write the JSON results here")
    parser.add_argument("--na-prob-file", "-n", help="JSON {question id: no-answer probability}")
    parser.add_argument("--na-prob-thresh", "-t", type=float, default=1.0,
                        help="predict no answer where the probability exceeds this (default 1.0)")
    args = parser.parse_args(argv)
    try:
        if args.out_file:
            check_output_path("out-file", args.out_file, (args.data_file, args.pred_file, args.na_prob_file))
        results = score_files(args.data_file, args.pred_file, args.na_prob_file, args.na_prob_thresh)
        text = json.dumps(results, indent=2)
        if args.out_file:
            write_text(args.out_file, text + "\n")
    except AlbertError as e:
        print(f"squad_eval: error: {e}", file=sys.stderr)
        return 2
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
