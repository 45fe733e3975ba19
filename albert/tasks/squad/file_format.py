"""A SQuAD file (v1.1 and v2.0 JSON), walked and checked once for every reader of one: run_squad.py's train and
predict files (albert.tasks.squad.examples) and the scorer's data file (albert.tasks.squad.evaluate).

    layout        {"data": [{"paragraphs": [{"context": text, "qas": [question, ...]}, ...]}, ...]}, at least one
                  question.
    "id"          a string, once in the file: predictions are keyed by it, so a second question of the same id
                  would lose its prediction (or its score).
    "question"    a string.
    "answers"     where given, a list of objects, each with a string "text" and, where given, an integer
                  "answer_start" (the training reader, which uses the offsets, checks them against the context).
    "is_impossible"  where given, a JSON boolean (the string "false" is no boolean; read as Python reads it, it
                  would be true), and an impossible question has no answers (SQuAD 2.0 keeps the answers a reader
                  might guess as "plausible_answers").
Each mistake is one line naming the file and the question's id, the fix after a semicolon (AlbertError).
"""

import dataclasses

from albert.ground import userfiles
from albert.ground.errors import AlbertError, shown

@dataclasses.dataclass(frozen=True)
class Answer:
    text: str
    start: int | None  # "answer_start"; None where not given


@dataclasses.dataclass(frozen=True)
class Question:
    qid: str
    question: str
    context: str
    answers: tuple | None  # of Answer; None where the question has no "answers"
    is_impossible: bool | None  # None where not given


def questions(data, path: str) -> list:
    """The Questions of a SQuAD file's JSON `data`, in file order."""
    name = userfiles.where(path)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise AlbertError(f"{name}: not a SQuAD file (no top-level \"data\" list)")
    found, seen = [], set()
    for article in data["data"]:
        paragraphs = article.get("paragraphs", []) if isinstance(article, dict) else None
        if not isinstance(paragraphs, list) or not all(isinstance(p, dict) for p in paragraphs):
            raise AlbertError(f"{name}: an article of \"data\" is an object whose \"paragraphs\" is a list of "
                              "objects")
        for paragraph in paragraphs:
            context, qas = paragraph.get("context"), paragraph.get("qas", [])
            if not isinstance(context, str):
                title = article.get("title", "?")
                raise AlbertError(f"{name}: a paragraph of {shown(title, 60)} has no \"context\" text")
            if not isinstance(qas, list) or not all(isinstance(qa, dict) for qa in qas):
                raise AlbertError(f"{name}: the \"qas\" of the paragraph starting {shown(context[:30])} is a list of "
                                  "objects")
            for qa in qas:
                question = _question(qa, context, name)
                if question.qid in seen:
                    raise AlbertError(f"{name}: question id {shown(question.qid)} is given twice; give each question "
                                      "its own id (predictions are keyed by it)")
                seen.add(question.qid)
                found.append(question)
    if not found:
        raise AlbertError(f"{name}: no questions")
    return found


def _question(qa: dict, context: str, name: str) -> Question:
    qid = qa.get("id")
    if not isinstance(qid, str) or not isinstance(qa.get("question"), str):
        raise AlbertError(f"{name}: a question of the paragraph starting {shown(context[:30])} lacks \"id\" or "
                          "\"question\"")
    place = f"{name}: question {shown(qid)}"
    impossible = qa.get("is_impossible")
    if "is_impossible" in qa and not isinstance(impossible, bool):
        raise AlbertError(f"{place}: \"is_impossible\" is {userfiles.described(impossible)}; write true or "
                          "false, without quotes")
    answers = _answers(qa, place) if "answers" in qa else None
    if impossible and answers:
        count = f"{len(answers)} answer" + ("s" if len(answers) > 1 else "")
        raise AlbertError(f"{place}: \"is_impossible\" is true but it has {count}; keep them as \"plausible_answers\" "
                          "(\"answers\": []), or set \"is_impossible\": false")
    return Question(qid, qa["question"], context, answers, impossible)


def _answers(qa: dict, place: str) -> tuple:
    answers = qa["answers"]
    if not isinstance(answers, list):
        raise AlbertError(f"{place}: \"answers\" is {userfiles.described(answers)}; write a list of answer "
                          "objects [{\"text\": ..., \"answer_start\": ...}] ([] for none)")
    out = []
    for number, answer in enumerate(answers, 1):
        if not isinstance(answer, dict):
            raise AlbertError(f"{place}: answer {number} is {userfiles.described(answer)}; write an object "
                              "{\"text\": ..., \"answer_start\": ...}")
        text, start = answer.get("text"), answer.get("answer_start")
        if not isinstance(text, str):
            what = "has no \"text\"" if "text" not in answer else f"has \"text\" {userfiles.described(text)}"
            raise AlbertError(f"{place}: answer {number} {what}; write the answer's text as a string, in quotes")
        if "answer_start" in answer and (not isinstance(start, int) or isinstance(start, bool)):
            raise AlbertError(f"{place}: answer {number} has \"answer_start\" {userfiles.described(start)}; write "
                              "the character offset of the answer in its context as an integer")
        out.append(Answer(text, start))
    return tuple(out)
