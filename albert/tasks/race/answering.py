"""Choices on raw strings: `AlbertMultipleChoice.choose`, the arguments checked here and the computation the serving
model runs (albert.tasks.race.choosing), so a choice here is the served one on the same model and text.
"""

import tensorflow as tf

from albert.data.features import step_boundaries
from albert.ground import arguments
from albert.ground.errors import AlbertError
from albert.model.task_model import graph_call, sequence_length
from albert.tasks.race.choosing import chooser
from albert.tasks.race.rows import default_max_qa_length


RACE_MAX_SEQ_LENGTH = 512  # run_race.py's default (albert.tasks.race.settings.RaceRun; a test holds them equal)


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
    model._require_preprocessor()
    length = sequence_length(model, max_seq_length, RACE_MAX_SEQ_LENGTH, where)
    qa_length = default_max_qa_length(length) if qa_length is None else qa_length
    if qa_length > length - 3:
        raise AlbertError(f"{where}: max_qa_length {qa_length} leaves no room in max_seq_length {length} for [CLS] "
                          f"and two [SEP]; pass max_qa_length={max(1, length - 3)} or less, or a longer "
                          "max_seq_length")
    choose = _choice_step(model, length, qa_length)
    chosen = []
    for start in range(0, len(questions), batch_size):
        end = start + batch_size
        found = graph_call(where, choose, tf.constant(articles[start:end]), tf.constant(questions[start:end]),
                           tf.constant(options[start:end]))
        for row, picked, choices in zip(found["probabilities"].numpy(), found["choice"].numpy(), options[start:end]):
            chosen.append({"index": int(picked), "option": choices[int(picked)], "probabilities": row.tolist()})
    return chosen[0] if single else chosen


def _choice_step(model, length: int, qa_length: int):
    """albert.tasks.race.choosing.choices on this model and its preprocessor's tokenizer, traced once per lengths."""
    key = (id(model.preprocessor), length, qa_length)
    kept = model.__dict__.get("_choice_step")
    if kept is None or kept[0] != key:
        step = tf.function(chooser(model, model.preprocessor.tokenizer, length, qa_length, step_boundaries(length)),
                           input_signature=[tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.string),
                                            tf.TensorSpec([None, None], tf.string)])
        kept = (key, step)
        object.__setattr__(model, "_choice_step", kept)
    return kept[1]
