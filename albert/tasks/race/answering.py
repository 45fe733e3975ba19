"""Choices on raw strings: `AlbertMultipleChoice.choose`, with run_race.py's rows (albert.tasks.race.rows) batched
as its prediction batches them, so a choice here is the runner's on the same model and text.
"""

import numpy as np
import tensorflow as tf

from albert.data.buckets import in_original_order
from albert.data.features import PACKED_INPUTS
from albert.ground import arguments
from albert.ground.errors import AlbertError
from albert.model.task_model import length_batches, prediction_step, python_tokenizer, sequence_length
from albert.tasks.race.rows import choice_rows, default_max_qa_length


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
    tokenizer = python_tokenizer(model)
    length = sequence_length(model, max_seq_length, RACE_MAX_SEQ_LENGTH, where)
    qa_length = default_max_qa_length(length) if qa_length is None else qa_length
    if qa_length > length - 3:
        raise AlbertError(f"{where}: max_qa_length {qa_length} leaves no room in max_seq_length {length} for [CLS] "
                          f"and two [SEP]; pass max_qa_length={max(1, length - 3)} or less, or a longer "
                          "max_seq_length")
    packed = [choice_rows(a, q, o, tokenizer, length, qa_length) for a, q, o in zip(articles, questions, options)]
    rows = {k: [p[k] for p in packed] for k in PACKED_INPUTS}
    step = prediction_step(model, lambda: tf.function(lambda inputs: model(inputs, training=False),
                                                      reduce_retracing=True))
    positions, logits = [], []
    for batch in length_batches(rows, batch_size, length):
        logits.append(step({k: batch[k] for k in PACKED_INPUTS}).numpy())
        positions.append(batch["position"].numpy())
    logits = in_original_order(positions, logits).astype(np.float64)
    probabilities = np.exp(logits - logits.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    chosen = [{"index": int(row.argmax()), "option": choices[int(row.argmax())], "probabilities": row.tolist()}
              for row, choices in zip(probabilities, options)]
    return chosen[0] if single else chosen
