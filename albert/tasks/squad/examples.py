"""SQuAD 1.1 / 2.0 data: reading, SentencePiece-to-character alignment, doc-span features (spec §10.1-10.2).

- `read_examples`: questions of a SQuAD JSON file (its layout and fields checked: albert.tasks.squad.file_format);
  training answers are checked against their `answer_start`.
- `align`, `convert_examples` (albert.tasks.squad.windows): the piece-to-character alignment and the
  `[CLS] query [SEP] doc span [SEP]` features with `--doc_stride` spans.
- `write_features`: the TFRecord of the original's keys, and beside it the decoder's metadata as JSON (per
  paragraph piece-to-character maps, per feature its span and max-context flags): a portable file, not a pickle.
"""

import dataclasses
import json
import os

from albert.ground import user_json, userfiles
from albert.ground.atomic import replacing_files
from albert.data import cache
from albert.data.example_proto import serialize_examples
from albert.data.features import PACKED_INPUTS, squad_features
from albert.tasks.squad.windows import METADATA_FORMAT, Windows, convert_examples, unplaced_line
from albert.data.tfrecord import TFRecordWriter
from albert.ground.errors import AlbertError, shown
from albert.tasks.squad import file_format as squad_file


@dataclasses.dataclass(frozen=True)
class SquadExample:
    qas_id: str
    question_text: str
    paragraph_text: str
    orig_answer_text: str = ""
    start_position: int = -1  # character offset of the training answer in paragraph_text
    is_impossible: bool = False


def load_json(path: str, what: str = "SQuAD file"):
    return user_json.load_json(path, what)


def read_examples(path: str, is_training: bool, data: dict | None = None, version_2: bool | None = None) -> list:
    """SquadExamples of a SQuAD v1.1 / v2.0 JSON file, in file order (`data`: the file's JSON, when already
    loaded), its layout and fields checked (albert.tasks.squad.file_format). Training: each question has one answer,
    found in its context at its answer_start, or is impossible. `version_2` False (a SQuAD 1.1 run): a predict file
    whose questions all have answers is scored as SQuAD 1.1, which needs at least one for each."""
    data = load_json(path) if data is None else data
    found = squad_file.questions(data, path)
    if version_2 is False and not is_training and all(q.answers is not None for q in found):
        empty = next((q for q in found if not q.answers), None)
        if empty is not None:
            raise AlbertError(f"{userfiles.where(path)}: question {shown(empty.qid)} has no answer (\"answers\": []), "
                              "which SQuAD 1.1 scoring cannot score; for a SQuAD 2.0 file pass "
                              "--version_2_with_negative, else give the question its answers")
    return [_example(path, q) if is_training else SquadExample(q.qid, q.question, q.context) for q in found]


def _example(path: str, q: squad_file.Question) -> SquadExample:
    """A training example: impossible, or its one answer where its answer_start says."""
    place = f"{userfiles.where(path)}: question {shown(q.qid)}"
    if q.is_impossible:
        return SquadExample(q.qid, q.question, q.context, is_impossible=True)
    answers = q.answers or ()
    if len(answers) != 1:
        raise AlbertError(f"{place}: a training question needs exactly one answer object, found {len(answers)}; keep "
                          "the one to train on (or, for a question without one, \"is_impossible\": true)")
    text, start = answers[0].text, answers[0].start
    if start is None:
        raise AlbertError(f"{place}: the answer has no \"answer_start\"; give the character offset of the answer in "
                          "its context (0-based)")
    if not 0 <= start <= len(q.context) - len(text):
        raise AlbertError(f"{place}: answer_start {start} of answer {shown(text)} is outside its context "
                          f"({len(q.context)} characters); give the offset of the answer's first character "
                          "(0-based)")
    if q.context[start:start + len(text)] != text:
        found = q.context[start:start + len(text)]
        raise AlbertError(f"{place}: answer {shown(text)} does not occur at answer_start {start} of its context "
                          f"(found {shown(found)}); give the offset of the answer's first character (0-based)")
    return SquadExample(q.qid, q.question, q.context, text, start)


def write_features(examples: list, sp_model, settings: Windows, is_training: bool, record_path: str,
                   metadata_path: str, cache_key: dict | None = None, source: str = "") -> dict:
    """Features -> the TFRecord (original keys) and the metadata JSON, each under a temporary name then renamed,
    so that an interrupted run never leaves a partial file. Returns the counts (and the metadata written).
    Training answers no piece holds are listed in the metadata ("answers", "unplaced"); where that is every answer,
    nothing is written and the AlbertError is `unplaced_line`'s line (`source`: the file they come from)."""
    import numpy as np

    rows, metadata, counts = convert_examples(examples, sp_model, settings, is_training)
    if is_training:
        metadata.update(answers=counts["answers"], unplaced=counts["unplaced"])
        if counts["unplaced"] and len(counts["unplaced"]) == counts["answers"]:
            raise AlbertError(unplaced_message(metadata, source))
    metadata["num_features"] = counts["features"]
    counts["metadata"] = metadata
    spec = squad_features(settings.max_seq_length, is_training)
    arrays = {k: np.array(v, np.int64).reshape(len(v), spec[k][1]) for k, v in rows.items()}
    assert set(arrays) == set(spec)
    for path in (record_path, metadata_path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    # The metadata is renamed into place last: its key stamps the record.
    with replacing_files([record_path, metadata_path]) as (tmp_record, tmp_metadata):
        with TFRecordWriter(tmp_record) as writer:
            for record in serialize_examples(arrays) if counts["features"] else ():  # no context with a piece
                writer.write(record)
        if cache_key is not None:
            metadata["cache_key"] = dict(cache_key, record_bytes=os.path.getsize(tmp_record))
        with open(tmp_metadata, "w", encoding="utf-8") as f:
            json.dump(metadata, f, separators=(",", ":"))
    return counts


def unplaced_message(metadata: dict, source: str = "") -> str | None:
    """The line naming the training answers of the feature metadata that no piece holds, or None when every
    answer is placed (`source`: the training file, named first)."""
    if not metadata.get("unplaced"):
        return None
    return (f"{source}: " if source else "") + unplaced_line(metadata["answers"], metadata["unplaced"])


def cached_features(examples: list, sp_model, settings: Windows, is_training: bool, record_path: str,
                    metadata_path: str, log=print, resumed_run: str | None = None, source: str = "") -> dict:
    """The metadata of the feature files, built once: reused while the examples as read (answers included), the
    SentencePiece model, the settings and the record (its size) are the ones it was built from; else rebuilt, and
    the reason logged (albert.data.cache's key, stored in the metadata; `resumed_run`: cache.refuse_rebuild).
    Training: the training answers no piece holds are named in one line (`unplaced_message`), built or reused; when
    no answer is placed, that line is the AlbertError and nothing is written."""
    key = {"settings": dataclasses.asdict(settings), "training": is_training, "examples": len(examples),
           "examples_sha256": cache.examples_digest(examples),
           "tokenizer_sha256": cache.tokenizer_digest(sp_model)}
    metadata = None
    if os.path.exists(record_path) and os.path.exists(metadata_path):
        try:
            metadata = load_json(metadata_path, "SQuAD feature metadata")
        except AlbertError:
            metadata = {}
        stored = metadata.get("cache_key") if metadata.get("format") == METADATA_FORMAT else None
        reason = cache.stale_reason(record_path, stored, key)
        if reason is not None:
            cache.refuse_rebuild(record_path, reason, resumed_run)
            log(f"rebuilding {record_path}: {reason}")
            metadata = None
    if metadata is None:
        counts = write_features(examples, sp_model, settings, is_training, record_path, metadata_path, key, source)
        log(f"SQuAD features: {counts['examples']} questions -> {counts['features']} features in {record_path}")
        metadata = counts["metadata"]
    if is_training and unplaced_message(metadata, source):
        log(unplaced_message(metadata, source))
    return metadata


# ------------------------------------------------------------------------------------------------------ losses
def squad_v1_loss(model, batch, training):
    """The original v1 loss: (cross-entropy of the start + of the end over all positions) / 2, per feature."""
    import tensorflow as tf

    outputs = model({k: batch[k] for k in PACKED_INPUTS}, training=training)
    starts = tf.reshape(batch["start_positions"], [-1])
    ends = tf.reshape(batch["end_positions"], [-1])
    start_nll = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=starts, logits=outputs["start_logits"])
    end_nll = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ends, logits=outputs["end_logits"])
    count = tf.cast(tf.shape(starts)[0], tf.float32)
    total = tf.reduce_sum(start_nll + end_nll) / 2.0
    hit = tf.cast(tf.argmax(outputs["start_logits"], -1, output_type=tf.int32) == starts, tf.float32)
    return [(total, count, 0.0)], {"loss": (total, count), "start_accuracy": (tf.reduce_sum(hit), count)}


def squad_v2_loss(model, batch, training):
    """The original v2 loss: (start + end cross-entropy) / 2 + answerability sigmoid cross-entropy / 2, with the
    end conditioned on the gold start."""
    import tensorflow as tf

    inputs = {k: batch[k] for k in PACKED_INPUTS + ("p_mask",)}
    starts = tf.reshape(batch["start_positions"], [-1])
    ends = tf.reshape(batch["end_positions"], [-1])
    outputs = model(dict(inputs, start_positions=starts), training=training)
    start_nll = -tf.gather(outputs["start_log_probs"], starts, batch_dims=1)
    end_nll = -tf.gather(outputs["end_log_probs"], ends, batch_dims=1)
    impossible = tf.cast(tf.reshape(batch["is_impossible"], [-1]), tf.float32)
    class_nll = tf.nn.sigmoid_cross_entropy_with_logits(labels=impossible, logits=outputs["cls_logits"])
    count = tf.cast(tf.shape(starts)[0], tf.float32)
    total = tf.reduce_sum((start_nll + end_nll) * 0.5 + 0.5 * class_nll)
    correct = tf.cast((outputs["cls_logits"] > 0) == (impossible > 0.5), tf.float32)
    return [(total, count, 0.0)], {"loss": (total, count), "answerable_accuracy": (tf.reduce_sum(correct), count)}
