"""Answers on raw strings: `AlbertSquadV1.answer` / `AlbertSquadV2.answer`.

It builds the features run_squad.py builds (albert.tasks.squad.windows), batches them as its prediction does
(grouped by length, each batch cut to its longest row: albert.data.buckets) and reads the outputs with the
runner's own post-processing (albert.tasks.squad.predictions), so an answer here is the runner's answer on the
same model and text.
"""

from albert.data.features import PACKED_INPUTS
from albert.ground import arguments
from albert.ground.errors import AlbertError
from albert.model.task_model import length_batches, prediction_step, python_tokenizer, sequence_length
from albert.tasks.squad.predictions import apply_null_threshold, model_step, nbest_answers, run_model
from albert.tasks.squad.windows import Question, Windows, convert_examples, default_doc_stride, default_max_query_length


# run_squad.py's defaults (albert.tasks.squad.settings.SquadRun; a test holds them equal).
SQUAD_MAX_SEQ_LENGTH, N_BEST_SIZE, MAX_ANSWER_LENGTH = 384, 20, 30


def _score(entry: dict) -> float:
    """A span's score, as the raw-text SavedModel's `score` output: its start + end logits (1.1), log-probabilities
    (2.0). Its probability among the n-best is `probability`."""
    return entry["start_log_prob"] + entry["end_log_prob"]


def squad_questions(name: str, questions, contexts) -> tuple:
    """(questions, contexts, one pair given): the checked strings of `answer`'s arguments."""
    where = f"{name}.answer"
    asked, single = arguments.texts(where, "questions", questions)
    if contexts is None:
        raise AlbertError(f"{name}.answer: {len(asked)} question(s) without a context: pass answer(questions, "
                          "contexts), one context string per question")
    if single:
        given = [arguments.text(where, "contexts", contexts)]
    else:
        given, _ = arguments.texts(where, "contexts", contexts, single=False)
    if len(given) != len(asked):
        raise AlbertError(f"{name}.answer: {len(asked)} questions and {len(given)} contexts; pass one context per "
                          "question")
    for index, context in enumerate(given):
        if not context.strip():
            raise AlbertError(f"{name}.answer: context {index} is empty; pass the text the answer is to be found in")
    return asked, given, single


def squad_answers(model, questions, contexts, version_2: bool, stride: int | None = None,
                  max_seq_length: int | None = None, query_length: int | None = None,
                  n_best_size: int = N_BEST_SIZE, max_answer_length: int = MAX_ANSWER_LENGTH,
                  null_score_diff_threshold: float = 0.0, return_nbest: bool = False, batch_size: int = 32):
    """See AlbertSquadV1.answer."""
    name = type(model).__name__
    where = f"{name}.answer"
    asked, given, single = squad_questions(name, questions, contexts)
    max_seq_length = arguments.whole(where, "max_seq_length", max_seq_length, 5, optional=True)
    stride = arguments.whole(where, "doc_stride", stride, 1, optional=True)
    query_length = arguments.whole(where, "max_query_length", query_length, 1, optional=True)
    n_best_size = arguments.whole(where, "n_best_size", n_best_size, 1)
    max_answer_length = arguments.whole(where, "max_answer_length", max_answer_length, 1)
    null_score_diff_threshold = arguments.finite(where, "null_score_diff_threshold", null_score_diff_threshold)
    return_nbest = arguments.flag(where, "return_nbest", return_nbest)
    batch_size = arguments.whole(where, "batch_size", batch_size, 1)
    tokenizer = python_tokenizer(model)
    if not asked:
        return []
    length = sequence_length(model, max_seq_length, SQUAD_MAX_SEQ_LENGTH, where)
    settings = Windows(length, default_doc_stride(length) if stride is None else stride,
                       default_max_query_length(length) if query_length is None else query_length,
                        model.preprocessor.do_lower_case)
    if settings.max_query_length > length - 4:
        raise AlbertError(f"{where}: max_query_length {settings.max_query_length} leaves no room in max_seq_length "
                          f"{length} for [CLS], two [SEP] and the context; pass max_query_length="
                          f"{max(1, length - 4)} or less, or a longer max_seq_length")
    examples = [Question(str(i), q, c) for i, (q, c) in enumerate(zip(asked, given))]
    rows, metadata, _ = convert_examples(examples, tokenizer.sp_model, settings, False)
    rows = {k: v for k, v in rows.items() if k in ("unique_ids", *PACKED_INPUTS, "p_mask")}
    results = run_model(model, length_batches(rows, batch_size, settings.max_seq_length), version_2,
                        prediction_step(model, lambda: model_step(model, version_2)))
    found = nbest_answers(examples, metadata, results, n_best_size, max_answer_length, version_2)
    answers = []
    for example, (entries, null_score) in zip(examples, found):
        best = entries[0]
        if version_2:
            kept = apply_null_threshold({0: best["text"]}, {0: null_score}, null_score_diff_threshold)[0]
            best = best if kept else {"text": "", "start": -1, "end": -1}
        answer = {"answer": best["text"], "start": best["start"], "end": best["end"],
                  "score": _score(best) if best["text"] else 0.0,
                  "probability": best["probability"] if best["text"] else 0.0}
        if version_2:
            answer.update(has_answer=bool(best["text"]), null_score=null_score)
        if return_nbest:
            answer["nbest"] = [{"answer": e["text"], "start": e["start"], "end": e["end"], "score": _score(e),
                                "probability": e["probability"], "start_log_prob": e["start_log_prob"],
                                "end_log_prob": e["end_log_prob"]}
                               for e in entries if e["text"]]
        answers.append(answer)
    return answers[0] if single else answers
