"""The SQuAD scorer against results worked out by hand with the official scripts' rules."""

import json
import subprocess
import sys

import pytest

from albert.tasks.squad import evaluate as squad_eval
from tests.helpers import ROOT

QUESTIONS = [  # (id, gold answers, prediction, no-answer probability)
    ("exact", ["The Eiffel Tower", "Eiffel Tower"], "eiffel tower!", 0.1),  # normalised equal: EM 1, F1 1
    ("partial", ["Paris, France"], "in Paris", 0.5),  # 1 common token of 2 and 2: EM 0, F1 0.5
    ("wrong", ["1889"], "1890", 0.7),  # EM 0, F1 0
    ("empty", ["Gustave Eiffel"], "", 0.2),  # EM 0, F1 0
    ("no_answer_right", [], "", 0.9),  # gold [""]: EM 1, F1 1
    ("no_answer_wrong", [], "Seine", 0.8),  # EM 0, F1 0
]


def dataset(version="v2.0", questions=QUESTIONS):
    qas = [{"id": qid, "question": "?", "answers": [{"text": a, "answer_start": 0} for a in golds]}
           for qid, golds, _, _ in questions]
    return {"version": version, "data": [{"title": "t", "paragraphs": [{"context": "c", "qas": qas}]}]}


PREDICTIONS = {qid: prediction for qid, _, prediction, _ in QUESTIONS}
NA_PROBS = {qid: p for qid, _, _, p in QUESTIONS}


def test_normalisation_and_token_f1():
    assert squad_eval.normalize_answer("  The  Eiffel-Tower, an  icon!") == "eiffeltower icon"
    assert squad_eval.f1_v2("Paris, France", "in Paris") == 0.5
    assert squad_eval.f1_v2("the", "") == 1.0  # both normalise to nothing
    assert squad_eval.f1_v1("the", "") == 0.0  # v1.1 has no special case
    assert squad_eval.f1_v2("x b c", "b c d e") == pytest.approx(2 * (2 / 4) * (2 / 3) / (2 / 4 + 2 / 3))


def test_v2_scores_breakdown_and_best_thresholds():
    results = squad_eval.evaluate_v2(dataset()["data"], PREDICTIONS, NA_PROBS)
    expected = {
        "exact": 100 * 2 / 6, "f1": 100 * 2.5 / 6, "total": 6,
        "HasAns_exact": 25.0, "HasAns_f1": 37.5, "HasAns_total": 4,
        "NoAns_exact": 50.0, "NoAns_f1": 50.0, "NoAns_total": 2,
        # Sweep in order of probability: answering `exact` (+1) then `partial` (+0.5) helps; the rest do not.
        "best_exact": 100 * 3 / 6, "best_exact_thresh": 0.1,
        "best_f1": 100 * 3.5 / 6, "best_f1_thresh": 0.5,
    }
    assert list(results) == list(expected)
    assert results == pytest.approx(expected, abs=1e-9)


def test_v2_no_answer_threshold():
    results = squad_eval.evaluate_v2(dataset()["data"], PREDICTIONS, NA_PROBS, na_prob_thresh=0.6)
    # wrong (0.7), no_answer_right (0.9) and no_answer_wrong (0.8) now count as "no answer".
    assert results["exact"] == pytest.approx(100 * 3 / 6)
    assert results["f1"] == pytest.approx(100 * 3.5 / 6)
    assert results["NoAns_exact"] == 100.0
    assert results["HasAns_f1"] == 37.5


def test_v1_scores_and_unanswered_questions(capsys):
    questions = [q for q in QUESTIONS if q[1]] + [("missing", ["x"], None, 0)]
    predictions = {qid: p for qid, _, p, _ in questions if p is not None}
    results = squad_eval.evaluate(dataset("1.1", questions), predictions)
    assert results == pytest.approx({"exact_match": 100 * 1 / 5, "f1": 100 * 1.5 / 5})
    assert capsys.readouterr().err == "Unanswered question missing will receive score 0.\n"


def test_command_line_prints_the_official_keys(tmp_path):
    (tmp_path / "data.json").write_text(json.dumps(dataset()))
    (tmp_path / "pred.json").write_text(json.dumps(PREDICTIONS))
    (tmp_path / "na.json").write_text(json.dumps(NA_PROBS))
    result = subprocess.run([sys.executable, "-m", "albert.tasks.squad.evaluate", str(tmp_path / "data.json"),
                             str(tmp_path / "pred.json"), "--na-prob-file", str(tmp_path / "na.json"),
                             "--out-file", str(tmp_path / "eval.json")],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert list(printed) == ["exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total", "NoAns_exact",
                             "NoAns_f1", "NoAns_total", "best_exact", "best_exact_thresh", "best_f1",
                             "best_f1_thresh"]
    assert printed["best_f1_thresh"] == 0.5
    assert json.loads((tmp_path / "eval.json").read_text()) == printed
    (tmp_path / "bad.json").write_text('{"a": 1,}')
    result = subprocess.run([sys.executable, "-m", "albert.tasks.squad.evaluate", str(tmp_path / "data.json"),
                             str(tmp_path / "bad.json")], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"squad_eval: error: {tmp_path / 'bad.json'}:1: not JSON (Expecting property "
                                     "name enclosed in double quotes at column 9)")


def _files(tmp_path, answers, version, predictions):
    data = {"version": version, "data": [{"title": "t", "paragraphs": [{"context": "Red fox.", "qas": [
        {"id": "q1", "question": "Who?", "answers": answers}]}]}]}
    (tmp_path / "data.json").write_text(json.dumps(data))
    (tmp_path / "pred.json").write_text(json.dumps(predictions))
    return str(tmp_path / "data.json"), str(tmp_path / "pred.json")


def test_an_empty_answer_list_is_a_question_without_answer_in_2_0_as_the_official_script_reads_it(tmp_path):
    """evaluate-v2.0.py: gold [""] and has_ans False; the prediction "" is right, "fox" wrong."""
    for prediction, score in (("", 100.0), ("fox", 0.0)):
        data, predictions = _files(tmp_path, [], "v2.0", {"q1": prediction})
        assert squad_eval.score_files(data, predictions) == {
            "exact": score, "f1": score, "total": 1, "NoAns_exact": score, "NoAns_f1": score, "NoAns_total": 1}


@pytest.mark.parametrize("answers,version,predictions,message", [
    ([], "1.1", {"q1": "fox"}, "{data}: question 'q1' has no answer (\"answers\": []), which SQuAD 1.1 scoring cannot "
     "score; give its answers, or score the file as SQuAD 2.0 (\"version\": \"v2.0\")"),
    ([{"text": 12, "answer_start": 0}], "v2.0", {"q1": "fox"}, "{data}: question 'q1': answer 1 has \"text\" 12 (a "
     "number); write the answer's text as a string, in quotes"),
    (None, "1.1", {"q1": "fox"}, "{data}: question 'q1': \"answers\" is null; write a list of answer objects "
     "[{\"text\": ..., \"answer_start\": ...}] ([] for none)"),
    ([{"text": "fox", "answer_start": 4}], "v2.0", {"q9": "fox"}, "{pred}: no prediction is for a question of "
     "{data}; the predictions map the data file's question ids to answer texts"),
])
def test_what_the_official_scripts_crash_on_is_one_line_exit_2(tmp_path, answers, version, predictions, message):
    """evaluate-v1.1.py raises ValueError on `"answers": []` (max of nothing), both scripts fail on a number as an
    answer's text (AttributeError) and on null answers (TypeError), and evaluate-v2.0.py divides by zero when no
    prediction is for a question of the file: here each is one line, exit status 2."""
    data, pred = _files(tmp_path, answers, version, predictions)
    result = subprocess.run([sys.executable, "-m", "albert.tasks.squad.evaluate", data, pred], capture_output=True,
                            text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 2
    expected = message.replace("{data}", data).replace("{pred}", pred)
    assert result.stderr.splitlines() == [f"squad_eval: error: {expected}"]
    assert result.stdout == ""


def test_an_article_without_paragraphs_or_a_paragraph_without_questions_holds_none(tmp_path):
    """As run_squad.py reads the file (albert.tasks.squad.file_format), not a KeyError (the fuzz campaign found it: a
    paragraph's "qas" key misspelt); the official scripts index both keys and fail."""
    question = {"id": "q1", "question": "Who?", "answers": [{"text": "fox", "answer_start": 4}]}
    data = {"version": "v2.0", "data": [{"title": "none"}, {"paragraphs": [{"context": "c", "qa": []},
                                                                          {"context": "Red fox.", "qas": [question]}]}]}
    (tmp_path / "data.json").write_text(json.dumps(data))
    (tmp_path / "pred.json").write_text(json.dumps({"q1": "fox"}))
    assert squad_eval.score_files(str(tmp_path / "data.json"), str(tmp_path / "pred.json")) == {
        "exact": 100.0, "f1": 100.0, "total": 1, "HasAns_exact": 100.0, "HasAns_f1": 100.0, "HasAns_total": 1}
