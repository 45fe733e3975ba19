"""Answers on raw strings: `AlbertSquadV1.answer` / `AlbertSquadV2.answer` and `AlbertMultipleChoice.choose`.

Both build the features run_squad.py / run_race.py build (albert.data.squad_windows, albert.data.race_rows), batch
them as their prediction does (grouped by length, each batch cut to its longest row: albert.data.buckets) and read
the outputs with the runners' own post-processing (albert.data.squad_predictions), so an answer here is the
runner's answer on the same model and text.
"""

import numpy as np
import tensorflow as tf

from albert.data.buckets import grouped_batches, in_original_order
from albert.data.features import PACKED_INPUTS, step_boundaries
from albert.data.race_rows import choice_rows, default_max_qa_length
from albert.data.squad_predictions import apply_null_threshold, model_step, nbest_answers, run_model
from albert.data.squad_windows import Question, Windows, convert_examples, default_doc_stride, default_max_query_length
from albert.ground import arguments
from albert.ground.errors import AlbertError
from albert.text.tokenization import FullTokenizer

# run_squad.py's and run_race.py's defaults (albert.jobs.settings: SquadRun, RaceRun; a test holds them equal).
SQUAD_MAX_SEQ_LENGTH, N_BEST_SIZE, MAX_ANSWER_LENGTH = 384, 20, 30
RACE_MAX_SEQ_LENGTH = 512


def _step(model, make):
    """The model's prediction step, traced once for all its calls (kept out of Keras' attribute tracking)."""
    if "_answer_step" not in model.__dict__:
        object.__setattr__(model, "_answer_step", make())
    return model.__dict__["_answer_step"]


def _seq_length(model, asked: int | None, default: int, where: str) -> int:
    """The asked length (checked by the caller), else the runner's default cut to the model's positions; beyond them
    an error."""
    positions = model.config.max_position_embeddings
    if asked is None:
        return min(default, positions)
    if asked > positions:
        raise AlbertError(f"{where}: max_seq_length {asked} exceeds the model's "
                          f"max_position_embeddings {positions}; pass max_seq_length={positions} or less")
    return asked


def _tokenizer(model) -> FullTokenizer:
    model._require_preprocessor()
    p = model.preprocessor
    return FullTokenizer(None, p.do_lower_case, p.spm_model_file)


def _batches(rows: dict, batch_size: int, max_seq_length: int):
    """Rows as run_squad.py / run_race.py's prediction batches them (int32, grouped by length, cut to it)."""
    arrays = {k: np.asarray(v, np.int32) for k, v in rows.items()}
    return grouped_batches(tf.data.Dataset.from_tensor_slices(arrays), batch_size, step_boundaries(max_seq_length))


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
    tokenizer = _tokenizer(model)
    if not asked:
        return []
    length = _seq_length(model, max_seq_length, SQUAD_MAX_SEQ_LENGTH, where)
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
    results = run_model(model, _batches(rows, batch_size, settings.max_seq_length), version_2,
                        _step(model, lambda: model_step(model, version_2)))
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


def choice_inputs(model, articles, questions, options) -> tuple:
    """(articles, questions, options per question, one question given): `choose`'s arguments, checked."""
    name = f"{type(model).__name__}.choose"
    questions, single = arguments.texts(name, "questions", questions)
    if single:  # one question: its article and its list of options
        articles = [arguments.text(name, "articles", articles)]
        options = [arguments.texts(name, "options", options, single=False)[0]]
    else:
        articles = arguments.texts(name, "articles", articles, single=False)[0]
        options = arguments.text_lists(name, "options", options)
    if not len(articles) == len(questions) == len(options):
        raise AlbertError(f"{name}: {len(articles)} articles, {len(questions)} questions and {len(options)} option "
                          "lists; pass one article and one options list per question")
    for index, article in enumerate(articles):
        if not article.strip():
            raise AlbertError(f"{name}: article {index} is empty; pass the text the question is about")
    for index, choices in enumerate(options):
        if len(choices) != len(options[0]):
            raise AlbertError(f"{name}: question {index} has {len(choices)} options and question 0 has "
                              f"{len(options[0])}; every question needs the same number ({model.num_choices})")
    if options and len(options[0]) != model.num_choices:
        raise AlbertError(f"{name}: {len(options[0])} options per question; this model chooses among "
                          f"num_choices={model.num_choices}")
    return articles, questions, options, single


def race_choices(model, articles, questions, options, max_seq_length: int | None = None,
                 qa_length: int | None = None, batch_size: int = 32):
    """See AlbertMultipleChoice.choose."""
    where = f"{type(model).__name__}.choose"
    articles, questions, options, single = choice_inputs(model, articles, questions, options)
    max_seq_length = arguments.whole(where, "max_seq_length", max_seq_length, 4, optional=True)
    qa_length = arguments.whole(where, "max_qa_length", qa_length, 1, optional=True)
    batch_size = arguments.whole(where, "batch_size", batch_size, 1)
    if not questions:
        return []
    tokenizer = _tokenizer(model)
    length = _seq_length(model, max_seq_length, RACE_MAX_SEQ_LENGTH, where)
    qa_length = default_max_qa_length(length) if qa_length is None else qa_length
    if qa_length > length - 3:
        raise AlbertError(f"{where}: max_qa_length {qa_length} leaves no room in max_seq_length {length} for [CLS] "
                          f"and two [SEP]; pass max_qa_length={max(1, length - 3)} or less, or a longer "
                          "max_seq_length")
    packed = [choice_rows(a, q, o, tokenizer, length, qa_length) for a, q, o in zip(articles, questions, options)]
    rows = {k: [p[k] for p in packed] for k in PACKED_INPUTS}
    step = _step(model, lambda: tf.function(lambda inputs: model(inputs, training=False), reduce_retracing=True))
    positions, logits = [], []
    for batch in _batches(rows, batch_size, length):
        logits.append(step({k: batch[k] for k in PACKED_INPUTS}).numpy())
        positions.append(batch["position"].numpy())
    logits = in_original_order(positions, logits).astype(np.float64)
    probabilities = np.exp(logits - logits.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    chosen = [{"index": int(row.argmax()), "option": choices[int(row.argmax())], "probabilities": row.tolist()}
              for row, choices in zip(probabilities, options)]
    return chosen[0] if single else chosen
