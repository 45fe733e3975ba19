"""Choosing among options on raw text, once, in TensorFlow ops: what `AlbertMultipleChoice.choose`
(albert.tasks.race.answering) and run_race.py's serving SavedModel (albert.tasks.race.serving) both run.

Each option is packed as albert.tasks.race.examples.convert_example packs it for run_race.py (albert.tasks.race.rows,
the original's algorithm over the `sentencepiece` package, which the runner's features keep): the option fills the
blanks `_` of the normalised question, else follows it after a space (option_text); the LAST max_qa_length pieces of
that text are kept, and the article's first pieces fill what is left of max_seq_length after [CLS], [SEP] and [SEP];
segment 0 through the first [SEP]; zero padding. A batch is computed up to its longest row's length bucket.

Bad requests are refused by the graph with one line (`assertion failed: [options: ...]`, an InvalidArgumentError):
inputs of different batch sizes, options that are not `num_choices` per question, an empty option, an empty article.
"""

import tensorflow as tf

from albert.data.buckets import cut_to_bucket
from albert.export.savedmodel import first_row, refuse_unless
from albert.text.graph_tokenizer import InGraphTokenizer


def checked_request(article, question, options, num_choices: int) -> tuple:
    """The three inputs, computed after the checks of their shapes (so that a bad request fails on its message)."""
    rows = tf.shape(article)[0]
    questions, option_rows, per_question = tf.shape(question)[0], tf.shape(options)[0], tf.shape(options)[1]
    checks = [
        refuse_unless(tf.equal(questions, rows), "question: {} questions for {} articles; send one article and one "
                      "question per row", questions, rows),
        refuse_unless(tf.equal(option_rows, rows), "options: {} rows of options for {} articles; send one row of "
                      f"{num_choices} options per question", option_rows, rows),
        refuse_unless(tf.equal(per_question, num_choices), "options: {} options per question; this model chooses "
                      f"among {num_choices} (options is [batch, {num_choices}])", per_question)]
    with tf.control_dependencies(checks):
        return tf.identity(article), tf.identity(question), tf.identity(options)


def option_texts(question, options):
    """albert.tasks.race.rows.option_text for every option: [B] normalised questions, [B, C] options -> [B*C] texts (the
    option replaces every `_` of the question; without one it follows the question after a space)."""
    choices = tf.shape(options)[1]
    question = tf.repeat(question, choices)
    option = tf.reshape(options, [-1])
    parts = tf.strings.split(question, "_")  # [B*C, (k)]: k > 1 where the question has a blank
    last = tf.ragged.range(parts.row_lengths()).flat_values == tf.gather(parts.row_lengths() - 1,
                                                                         parts.value_rowids())
    joined = tf.where(last, parts.flat_values, parts.flat_values + tf.gather(option, parts.value_rowids()))
    filled = tf.strings.reduce_join(parts.with_flat_values(joined), axis=1)
    return tf.where(parts.row_lengths() > 1, filled, question + " " + option)


def race_features(tokenizer: InGraphTokenizer, article, question, options, seq_length: int, max_qa_length: int):
    """[B] articles, [B] questions, [B, C] options -> input_ids, input_mask, segment_ids [B, C, seq_length] int32,
    as albert.tasks.race.examples.convert_example builds them (see the module's docstring)."""
    rows, choices = tf.shape(options, out_type=tf.int64)[0], tf.shape(options, out_type=tf.int64)[1]
    context = tokenizer.tokenize(article)  # [B, (n)]
    refuse_unless(tf.reduce_all(context.row_lengths() > 0), "article: row {} is empty; send the text the question "
                  "is about", first_row(context.row_lengths() == 0))
    empty = tf.strings.length(tf.reshape(tokenizer.normalize(options), [-1])) == 0
    refuse_unless(~tf.reduce_any(empty), "options: row {} has an empty option; every question takes as many "
                  "options as the model chooses among, none empty", first_row(empty) // tf.maximum(choices, 1))
    # option_text normalises the question before the blank is looked for; tokenizing normalises the text again
    ending = tokenizer.tokenize(option_texts(tokenizer.normalize(question), options))  # [B*C, (m)]
    kept = tf.minimum(ending.row_lengths(), max_qa_length)
    ending = tf.ragged.boolean_mask(ending, tf.ragged.range(ending.row_lengths())
                                    >= (ending.row_lengths() - kept)[:, None])  # the last max_qa_length pieces
    context = tf.gather(context, tf.repeat(tf.range(rows), choices))
    room = tf.maximum(tf.cast(seq_length - 3, tf.int64) - kept, 0)
    context = tf.ragged.boolean_mask(context, tf.ragged.range(context.row_lengths()) < room[:, None])
    count = rows * choices
    cls = tf.RaggedTensor.from_tensor(tf.fill([count, 1], tf.constant(tokenizer.cls_id, tf.int32)))
    sep = tf.RaggedTensor.from_tensor(tf.fill([count, 1], tf.constant(tokenizer.sep_id, tf.int32)))
    ids = tf.concat([cls, context, sep, ending, sep], axis=1)
    types = tf.concat([tf.zeros_like(cls), tf.zeros_like(context), tf.zeros_like(sep), tf.ones_like(ending),
                       tf.ones_like(sep)], axis=1)
    shape = tf.stack([count, seq_length])
    packed = {"input_ids": ids.to_tensor(0, shape=shape), "input_mask": tf.ones_like(ids).to_tensor(0, shape=shape),
              "segment_ids": types.to_tensor(0, shape=shape)}
    return {k: tf.reshape(v, tf.stack([rows, choices, seq_length])) for k, v in packed.items()}


def chooser(model, tokenizer: InGraphTokenizer, seq_length: int, max_qa_length: int, bounds: tuple | None):
    """`choose(article [B], question [B], options [B, C])` -> {`probabilities` [B, C] float32, `logits` [B, C],
    `choice` [B] int32} of `model` (a fine-tuned AlbertMultipleChoice), each batch cut to its length bucket."""
    num_choices = model.num_choices

    def choose(article, question, options):
        article, question, options = checked_request(article, question, options, num_choices)
        features = race_features(tokenizer, article, question, options, seq_length, max_qa_length)
        logits = model(cut_to_bucket(features, bounds), training=False)
        return {"probabilities": tf.nn.softmax(logits, -1), "logits": logits,
                "choice": tf.argmax(logits, -1, output_type=tf.int32)}

    return choose
