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
from albert.data.race_rows import choice_rows
from albert.data.squad_predictions import apply_null_threshold, model_step, nbest_answers, run_model
from albert.data.squad_windows import Question, Settings, convert_examples
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


def doc_stride(max_seq_length: int) -> int:
    """run_squad.py's --doc_stride when not given: a third of the length (128 at 384)."""
    return max(1, max_seq_length // 3)


def max_query_length(max_seq_length: int) -> int:
    """run_squad.py's --max_query_length when not given: 64, or half the length below 128."""
    return max(1, min(64, max_seq_length // 2))


def max_qa_length(max_seq_length: int) -> int:
    """run_race.py's --max_qa_length when not given: 128, or half the length below 256."""
    return max(1, min(128, max_seq_length // 2))


def _texts(value) -> list | None:
    """A string as a list of one, a list / tuple / array of strings as a list; anything else None."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple, np.ndarray)) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _seq_length(model, asked: int | None, default: int) -> int:
    """The asked length, else the runner's default cut to the model's positions; beyond them an error."""
    positions = model.config.max_position_embeddings
    if asked is None:
        return min(default, positions)
    if asked > positions:
        raise AlbertError(f"{type(model).__name__}: max_seq_length {asked} exceeds the model's "
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


def squad_questions(name: str, questions, contexts) -> tuple:
    """(questions, contexts, one pair given): the checked strings of `answer`'s arguments."""
    single = isinstance(questions, str)
    asked, given = _texts(questions), _texts(contexts) if contexts is not None else None
    if asked is None:
        raise AlbertError(f"{name}.answer: questions is a string or a list of strings; pass answer(question, context)")
    if given is None:
        raise AlbertError(f"{name}.answer: {len(asked)} question(s) without a context: pass answer(questions, "
                          "contexts), one context string per question")
    if len(given) != len(asked):
        raise AlbertError(f"{name}.answer: {len(asked)} questions and {len(given)} contexts; pass one context per "
                          "question")
    for index, context in enumerate(given):
        if not context.strip():
            raise AlbertError(f"{name}.answer: context {index} is empty; pass the text the answer is to be found in")
    return asked, given, single and isinstance(contexts, str)


def squad_answers(model, questions, contexts, version_2: bool, stride: int | None = None,
                  max_seq_length: int | None = None, query_length: int | None = None,
                  n_best_size: int = N_BEST_SIZE, max_answer_length: int = MAX_ANSWER_LENGTH,
                  null_score_diff_threshold: float = 0.0, return_nbest: bool = False, batch_size: int = 32):
    """See AlbertSquadV1.answer."""
    name = type(model).__name__
    asked, given, single = squad_questions(name, questions, contexts)
    tokenizer = _tokenizer(model)
    if not asked:
        return []
    length = _seq_length(model, max_seq_length, SQUAD_MAX_SEQ_LENGTH)
    settings = Settings(length, stride or doc_stride(length), query_length or max_query_length(length),
                        model.preprocessor.do_lower_case)
    settings.check()
    examples = [Question(str(i), q, c) for i, (q, c) in enumerate(zip(asked, given))]
    rows, metadata, _ = convert_examples(examples, tokenizer.sp_model, settings, False, log=lambda _: None)
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
                  "score": best["probability"] if best["text"] else 0.0}
        if version_2:
            answer.update(has_answer=bool(best["text"]), null_score=null_score)
        if return_nbest:
            answer["nbest"] = [{"answer": e["text"], "start": e["start"], "end": e["end"], "score": e["probability"],
                                "start_log_prob": e["start_log_prob"], "end_log_prob": e["end_log_prob"]}
                               for e in entries if e["text"]]
        answers.append(answer)
    return answers[0] if single else answers


def choice_inputs(model, articles, questions, options) -> tuple:
    """(articles, questions, options per question, one question given): `choose`'s arguments, checked."""
    name = f"{type(model).__name__}.choose"
    single = isinstance(questions, str)
    if single:
        articles, questions, options = [articles], [questions], [options]
    articles, questions = _texts(articles), _texts(questions)
    if articles is None or questions is None or not isinstance(options, (list, tuple)) or not all(
            _texts(o) is not None and not isinstance(o, str) for o in options):
        raise AlbertError(f"{name}: pass choose(article, question, options) with strings and a list of option "
                          "strings, or lists of them (one article and one options list per question)")
    options = [_texts(o) for o in options]
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
    if len(options[0]) != model.num_choices:
        raise AlbertError(f"{name}: {len(options[0])} options per question; this model chooses among "
                          f"num_choices={model.num_choices}")
    return articles, questions, options, single


def race_choices(model, articles, questions, options, max_seq_length: int | None = None,
                 qa_length: int | None = None, batch_size: int = 32):
    """See AlbertMultipleChoice.choose."""
    if isinstance(questions, (list, tuple)) and not questions and not articles and not options:
        return []
    articles, questions, options, single = choice_inputs(model, articles, questions, options)
    tokenizer = _tokenizer(model)
    length = _seq_length(model, max_seq_length, RACE_MAX_SEQ_LENGTH)
    qa_length = qa_length or max_qa_length(length)
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
