"""RACE: reading the data in both layouts, and 4-option features (spec §11).

Layouts: the official release (one JSON object per article file under RACE/<split>/<level>/*.txt) and the
original script's `all.txt` (one JSON object per line, same keys: id, article, questions, options, answers). Both
give the same examples. `high_only` / `middle_only` restrict the levels.
"""

import dataclasses
import glob
import os

from albert.ground.atomic import replacing_file
from albert.data.example_proto import serialize_examples
from albert.data.features import PACKED_INPUTS
from albert.data.tfrecord import TFRecordWriter
from albert.ground import user_json, userfiles
from albert.tasks.race.rows import choice_rows
from albert.ground.errors import AlbertError, shown

LEVELS = ("middle", "high")
NUM_CHOICES = 4
LETTERS = "ABCD"  # an answer: the letter of its option
_KEYS = ("id", "article", "questions", "options", "answers")


@dataclasses.dataclass(frozen=True)
class RaceExample:
    example_id: str
    level: str
    context: str
    question: str
    options: tuple
    label: int


def _articles(path: str):
    """(line number, JSON object) of a file: one object per line (all.txt) or one object in the whole file."""
    return user_json.json_values(userfiles.read_text(path, "RACE file"), path)


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _examples_of(article, level: str, path: str, lineno: int) -> list:
    out = []
    place = userfiles.where(path, lineno)
    if not isinstance(article, dict) or any(key not in article for key in _KEYS):
        missing = [key for key in _KEYS if not isinstance(article, dict) or key not in article]
        raise AlbertError(f"{place}: an article is an object with id, article, questions, options and answers "
                          f"({', '.join(missing)} missing)")
    article_id, context = article["id"], article["article"]
    questions, options, answers = article["questions"], article["options"], article["answers"]
    if not isinstance(article_id, (str, int)) or isinstance(article_id, bool) or not isinstance(context, str):
        raise AlbertError(f"{place}: an article's id is a string and its article a text")
    if not (_strings(questions) and _strings(answers) and isinstance(options, list)):
        raise AlbertError(f"{place}: article {shown(article_id)}: questions and answers are lists of strings, options "
                          "a list of lists of strings")
    if not len(questions) == len(options) == len(answers):
        raise AlbertError(f"{place}: article {shown(article_id)} has {len(questions)} questions, {len(options)} "
                          f"option lists and {len(answers)} answers; each question needs its options and answer")
    for i, (question, choices, answer) in enumerate(zip(questions, options, answers)):
        example_id = f"{article_id}-{i}"
        if not _strings(choices):
            raise AlbertError(f"{place}: question {shown(example_id)} has options {userfiles.described(choices)}; "
                              f"write a list of {NUM_CHOICES} option texts")
        if len(choices) != NUM_CHOICES:
            raise AlbertError(f"{place}: question {shown(example_id)} has {len(choices)} options; RACE needs 4")
        if answer.strip() not in LETTERS:
            raise AlbertError(f"{place}: question {shown(example_id)} has answer {shown(answer)}; use A, B, C or D")
        out.append(RaceExample(example_id, level, context, question, tuple(choices), LETTERS.index(answer.strip())))
    return out


def read_examples(data_dir: str, split: str, high_only: bool = False, middle_only: bool = False) -> list:
    """Examples of RACE/<split>/<level>/ in either layout (all.txt is used when present); an article id given
    twice in the split is refused (predictions are keyed by it)."""
    levels = ["high"] if high_only else ["middle"] if middle_only else list(LEVELS)
    examples, seen = [], {}
    for level in levels:
        directory = os.path.join(data_dir, "RACE", split, level)
        if not os.path.isdir(directory):
            raise AlbertError(f"{directory}: not found; --data_dir must hold RACE/{split}/{level}/")
        combined = os.path.join(directory, "all.txt")
        files = [combined] if os.path.exists(combined) else sorted(glob.glob(os.path.join(directory, "*.txt")))
        for path in files:
            for lineno, article in _articles(path):
                found = _examples_of(article, level, path, lineno)
                place = userfiles.where(path, lineno)
                first = seen.setdefault(str(article["id"]), place)
                if first != place:
                    raise AlbertError(f"{place}: article id {shown(article['id'])} is given twice (first at {first}); "
                                      "give each article its own id (predictions are keyed by it)")
                examples.extend(found)
    if not examples:
        raise AlbertError(f"{os.path.join(data_dir, 'RACE', split)}: no questions in the {split} split")
    return examples


def convert_example(example: RaceExample, tokenizer, max_seq_length: int, max_qa_length: int) -> dict:
    """The example's four rows (albert.tasks.race.rows.choice_rows) and its label."""
    rows = choice_rows(example.context, example.question, example.options, tokenizer, max_seq_length, max_qa_length)
    rows["label"] = example.label
    return rows


def write_features(examples: list, tokenizer, max_seq_length: int, max_qa_length: int, path: str):
    """Examples -> a TFRecord file of the original RACE records (temporary name, then rename)."""
    import numpy as np

    rows = [convert_example(e, tokenizer, max_seq_length, max_qa_length) for e in examples]
    arrays = {key: np.array([np.ravel(r[key]) for r in rows], np.int64)
              for key in PACKED_INPUTS}
    arrays["label_ids"] = np.array([[r["label"]] for r in rows], np.int64)
    arrays["is_real_example"] = np.ones((len(rows), 1), np.int64)
    with replacing_file(path) as tmp, TFRecordWriter(tmp) as writer:
        for record in serialize_examples(arrays):
            writer.write(record)


def race_loss(model, batch, training):
    """Mean cross-entropy over the four options; metrics: loss and accuracy."""
    import tensorflow as tf

    logits = model({k: batch[k] for k in PACKED_INPUTS}, training=training)
    labels = tf.cast(tf.reshape(batch["label_ids"], [-1]), tf.int32)
    real = tf.cast(tf.reshape(batch["is_real_example"], [-1]), tf.float32)
    nll = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    correct = tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), labels), tf.float32)
    count = tf.reduce_sum(real)
    total = tf.reduce_sum(real * nll)
    return [(total, count, 0.0)], {"accuracy": (tf.reduce_sum(real * correct), count)}  # of the training batches


def accuracy_by_level(examples: list, predictions) -> dict:
    """Accuracy overall and for middle and high separately (levels absent from the split are left out)."""
    out = {}
    groups = {"eval_accuracy": list(range(len(examples)))}
    for level in LEVELS:
        groups[f"{level}_accuracy"] = [i for i, e in enumerate(examples) if e.level == level]
    for name, indices in groups.items():
        if indices:
            out[name] = sum(int(predictions[i]) == examples[i].label for i in indices) / len(indices)
    return out
