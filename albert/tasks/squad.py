"""SQuAD 1.1 / 2.0 data: reading, SentencePiece-to-character alignment, doc-span features (spec §10.1-10.2).

- `read_examples`: questions of a SQuAD JSON file; training answers are checked against their `answer_start`.
- `align`: maps every SentencePiece piece of the normalised paragraph back to the characters of the ORIGINAL
  paragraph (accents, case, curly quotes and whitespace runs included), so that a predicted span of pieces gives
  back the exact original text. A two-pointer walk aligns the usual case in linear time; where it cannot (the
  normaliser or SentencePiece changed characters), a longest-matching-blocks alignment takes over. A paragraph
  with under 80% of its characters aligned is flagged: its questions are kept, predicted empty, and counted.
- `convert_examples`: `[CLS] query [SEP] doc span [SEP]` features with `--doc_stride` spans, `p_mask`,
  max-context flags and training targets, as the original builds them.
- `write_features`: the TFRecord of the original's keys, and beside it the decoder's metadata as JSON (per
  paragraph piece-to-character maps, per feature its span and max-context flags): a portable file, not a pickle.
"""

import dataclasses
import difflib
import json
import os

from albert.ground import userfiles
from albert.ground.atomic import replacing_files
from albert.data import cache
from albert.data.example_proto import serialize_examples
from albert.data.features import PACKED_INPUTS, squad_features
from albert.data.tfrecord import TFRecordWriter
from albert.ground.errors import AlbertError, shown
from albert.text.tokenization import SPIECE_UNDERLINE, encode_ids, encode_pieces, preprocess_text

MIN_ALIGNED = 0.8
FIRST_UNIQUE_ID = 1000000000
METADATA_FORMAT = "albert-squad-features/1"


@dataclasses.dataclass(frozen=True)
class SquadExample:
    qas_id: str
    question_text: str
    paragraph_text: str
    orig_answer_text: str = ""
    start_position: int = -1  # character offset of the training answer in paragraph_text
    is_impossible: bool = False


def load_json(path: str, what: str = "SQuAD file"):
    return userfiles.load_json(path, what)


def read_examples(path: str, is_training: bool, data: dict | None = None) -> list:
    """SquadExamples of a SQuAD v1.1 / v2.0 JSON file, in file order (`data`: the file's JSON, when already
    loaded)."""
    data = load_json(path) if data is None else data
    name = userfiles.where(path)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise AlbertError(f"{name}: not a SQuAD file (no top-level \"data\" list)")
    examples = []
    for article in data["data"]:
        paragraphs = article.get("paragraphs", []) if isinstance(article, dict) else None
        if not isinstance(paragraphs, list) or not all(isinstance(p, dict) for p in paragraphs):
            raise AlbertError(f"{name}: an article of \"data\" is an object whose \"paragraphs\" is a list of "
                              "objects")
        for paragraph in paragraphs:
            context, questions = paragraph.get("context"), paragraph.get("qas", [])
            if not isinstance(context, str):
                title = article.get("title", "?")
                raise AlbertError(f"{name}: a paragraph of {shown(title, 60)} has no \"context\" text")
            if not isinstance(questions, list) or not all(isinstance(qa, dict) for qa in questions):
                raise AlbertError(f"{name}: the \"qas\" of the paragraph starting {shown(context[:30])} is a list of "
                                  "objects")
            for qa in questions:
                examples.append(_example(path, qa, context, is_training))
    if not examples:
        raise AlbertError(f"{name}: no questions")
    return examples


def _example(path: str, qa: dict, context: str, is_training: bool) -> SquadExample:
    qid, name = qa.get("id"), userfiles.where(path)
    if not isinstance(qid, str) or not isinstance(qa.get("question"), str):
        raise AlbertError(f"{name}: a question of the paragraph starting {shown(context[:30])} lacks \"id\" or "
                          "\"question\"")
    if not is_training:
        return SquadExample(qid, qa["question"], context)
    impossible = bool(qa.get("is_impossible", False))
    if impossible:
        return SquadExample(qid, qa["question"], context, is_impossible=True)
    answers = qa.get("answers") or []
    if not isinstance(answers, list) or len(answers) != 1 or not isinstance(answers[0], dict):
        count = len(answers) if isinstance(answers, list) else 0
        raise AlbertError(f"{name}: question {shown(qid)}: a training question needs exactly one answer object, "
                          f"found {count}")
    text, start = answers[0].get("text"), answers[0].get("answer_start")
    if not isinstance(text, str) or not isinstance(start, int) or isinstance(start, bool):
        raise AlbertError(f"{name}: question {shown(qid)}: the answer needs a \"text\" string and an integer "
                          "\"answer_start\"")
    if start < 0 or context[start:start + len(text)] != text:
        found = context[max(start, 0):max(start, 0) + len(text)]
        raise AlbertError(f"{name}: question {shown(qid)}: answer {shown(text)} does not occur at answer_start "
                          f"{start} of its context (found {shown(found)})")
    return SquadExample(qid, qa["question"], context, text, start)


# --------------------------------------------------------------------------------------------------- alignment
@dataclasses.dataclass
class Alignment:
    pieces: list  # SentencePiece pieces of the normalised paragraph
    tok_start_to_orig: list  # per piece: original character offset of its first aligned character
    tok_end_to_orig: list  # per piece: original character offset of its last aligned character
    orig_to_tok: list  # per original character: the piece holding it (None when unaligned)
    aligned_fraction: float

    @property
    def ok(self) -> bool:
        return self.aligned_fraction >= MIN_ALIGNED

    def text(self, start: int, end: int, paragraph_text: str) -> str:
        """The original text of pieces start..end (inclusive)."""
        return paragraph_text[self.tok_start_to_orig[start]:self.tok_end_to_orig[end] + 1].strip()


def _char_matches(expanded: str, target: str) -> list:
    """Pairs (i, j) with expanded[i] == target[j], increasing in both: a two-pointer walk skipping whitespace on
    either side, or, when that meets two different non-space characters, difflib's matching blocks."""
    pairs, i, j = [], 0, 0
    while i < len(expanded) and j < len(target):
        a, b = expanded[i], target[j]
        if a == b:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif a == " ":
            i += 1
        elif b == " ":
            j += 1
        else:
            break
    else:
        if all(c == " " for c in expanded[i:]):
            return pairs
    matcher = difflib.SequenceMatcher(None, expanded, target, autojunk=False)
    return [(block.a + k, block.b + k) for block in matcher.get_matching_blocks() for k in range(block.size)]


def align(sp_model, paragraph_text: str, lower: bool) -> Alignment:
    pieces = encode_pieces(sp_model, preprocess_text(paragraph_text, lower=lower))
    surface = "".join(p.replace(SPIECE_UNDERLINE, " ") for p in pieces)
    piece_of_char = [k for k, p in enumerate(pieces) for _ in range(len(p))]
    # Each original character normalised on its own (as the original aligns), whitespace of any kind as a space.
    expanded, origin = [], []
    for i, c in enumerate(paragraph_text):
        for n in preprocess_text(c, remove_space=False, lower=lower):
            expanded.append(" " if n.isspace() else n)
            origin.append(i)
    expanded = "".join(expanded)
    to_orig = [None] * len(surface)
    orig_to_tok = [None] * len(paragraph_text)
    matched = 0
    for i, j in _char_matches(expanded, surface):
        if expanded[i] != " ":
            to_orig[j] = origin[i]
            matched += 1
            if orig_to_tok[origin[i]] is None:
                orig_to_tok[origin[i]] = piece_of_char[j]
    wanted = sum(1 for c in expanded if c != " ")
    fraction = matched / wanted if wanted else 1.0
    # Piece k covers surface[offset_k : offset_k + len_k]; its text runs from the first aligned character at or
    # after its start to the last aligned character at or before its end.
    next_aligned, nxt = [len(paragraph_text)] * (len(surface) + 1), len(paragraph_text)
    for j in range(len(surface) - 1, -1, -1):
        nxt = to_orig[j] if to_orig[j] is not None else nxt
        next_aligned[j] = nxt
    prev_aligned, prev = [-1] * len(surface), -1
    for j in range(len(surface)):
        prev = to_orig[j] if to_orig[j] is not None else prev
        prev_aligned[j] = prev
    starts, ends, offset = [], [], 0
    for piece in pieces:
        starts.append(next_aligned[offset])
        ends.append(prev_aligned[offset + len(piece) - 1] if piece else -1)
        offset += len(piece)
    return Alignment(pieces, starts, ends, orig_to_tok, fraction)


def answer_pieces(alignment: Alignment, start: int, text: str):
    """(first piece, last piece) of the answer at characters start..start+len(text)-1, or None when none of
    its characters is aligned."""
    inside = [alignment.orig_to_tok[i] for i in range(start, start + len(text))
              if alignment.orig_to_tok[i] is not None]
    return (inside[0], inside[-1]) if inside else None


# ---------------------------------------------------------------------------------------------------- features
def doc_spans(num_pieces: int, max_tokens_for_doc: int, doc_stride: int) -> list:
    """(start, length) windows over the paragraph pieces, each advancing by min(length, doc_stride)."""
    spans, start = [], 0
    while start < num_pieces:
        length = min(num_pieces - start, max_tokens_for_doc)
        spans.append((start, length))
        if start + length == num_pieces:
            break
        start += min(length, doc_stride)
    return spans


def max_context_flags(spans: list, index: int) -> list:
    """Per piece of span `index`: 1 where this span gives the piece its most context (BERT's rule: the smaller of
    left and right context, plus 0.01 x span length; the first best span wins)."""
    flags = []
    start, length = spans[index]
    for position in range(start, start + length):
        best, best_score = None, None
        for k, (s, n) in enumerate(spans):
            if s <= position < s + n:
                score = min(position - s, s + n - 1 - position) + 0.01 * n
                if best_score is None or score > best_score:
                    best, best_score = k, score
        flags.append(int(best == index))
    return flags


@dataclasses.dataclass
class Settings:
    max_seq_length: int
    doc_stride: int
    max_query_length: int
    do_lower_case: bool

    def check(self):
        if self.max_seq_length <= self.max_query_length + 3:
            raise AlbertError(f"--max_seq_length {self.max_seq_length} must exceed --max_query_length "
                              f"{self.max_query_length} + 3 (room for [CLS], two [SEP] and the document)")
        if self.doc_stride < 1:
            raise AlbertError(f"--doc_stride must be at least 1, got {self.doc_stride}")


def convert_examples(examples: list, sp_model, settings: Settings, is_training: bool, log=print) -> tuple:
    """Features of the examples: (arrays for the TFRecord, metadata for the decoder, counts).

    Training features of an answer outside their span, and of impossible questions, point at [CLS] (0, 0) with
    is_impossible 1, as in the original (v1 keeps them). Questions whose paragraph did not align are counted;
    in training they are left out (their answer has no pieces), at prediction they stay and are predicted empty.
    """
    cls_id, sep_id = sp_model.PieceToId("[CLS]"), sp_model.PieceToId("[SEP]")
    t = settings.max_seq_length
    rows = {k: [] for k in ("unique_ids", *PACKED_INPUTS, "p_mask")}
    if is_training:
        rows.update(start_positions=[], end_positions=[], is_impossible=[])
    paragraphs, paragraph_index, meta_examples, meta_features = [], {}, [], []
    counts = {"examples": len(examples), "features": 0, "misaligned": 0, "unlocated_answers": 0}
    for example_index, example in enumerate(examples):
        if example.paragraph_text not in paragraph_index:
            alignment = align(sp_model, example.paragraph_text, settings.do_lower_case)
            paragraph_index[example.paragraph_text] = len(paragraphs)
            paragraphs.append(alignment)
        p = paragraph_index[example.paragraph_text]
        alignment = paragraphs[p]
        meta_examples.append({"qas_id": example.qas_id, "paragraph": p})
        if not alignment.ok:
            counts["misaligned"] += 1
            log(f"SQuAD: question {example.qas_id}: only {alignment.aligned_fraction:.0%} of its paragraph aligned "
                "with the SentencePiece pieces; " + ("left out of training" if is_training else "predicted empty"))
            if is_training:
                continue
        target = None
        if is_training and not example.is_impossible:
            target = answer_pieces(alignment, example.start_position, example.orig_answer_text)
            if target is None:
                counts["unlocated_answers"] += 1
                log(f"SQuAD: question {example.qas_id}: no character of the answer aligned; left out of training")
                continue
        query = encode_ids(sp_model, preprocess_text(example.question_text, lower=settings.do_lower_case))
        query = query[:settings.max_query_length]
        spans = doc_spans(len(alignment.pieces), t - len(query) - 3, settings.doc_stride)
        for span_index, (start, length) in enumerate(spans):
            doc_ids = [sp_model.PieceToId(piece) for piece in alignment.pieces[start:start + length]]
            ids = [cls_id, *query, sep_id, *doc_ids, sep_id]
            padding = t - len(ids)
            unique_id = FIRST_UNIQUE_ID + counts["features"]
            counts["features"] += 1
            rows["unique_ids"].append([unique_id])
            rows["input_ids"].append(ids + [0] * padding)
            rows["input_mask"].append([1] * len(ids) + [0] * padding)
            rows["segment_ids"].append([0] * (len(query) + 2) + [1] * (length + 1) + [0] * padding)
            rows["p_mask"].append([0] + [1] * (len(query) + 1) + [0] * length + [1] * (1 + padding))
            meta_features.append({"unique_id": unique_id, "example": example_index, "span_start": start,
                                  "span_length": length, "doc_offset": len(query) + 2,
                                  "max_context": "".join(map(str, max_context_flags(spans, span_index)))})
            if is_training:
                inside = target is not None and start <= target[0] and target[1] < start + length
                first, last = (target[0] - start + len(query) + 2, target[1] - start + len(query) + 2) if inside \
                    else (0, 0)
                rows["start_positions"].append([first])
                rows["end_positions"].append([last])
                rows["is_impossible"].append([int(not inside)])
    metadata = {
        "format": METADATA_FORMAT, "settings": dataclasses.asdict(settings),
        "paragraphs": [{"start": a.tok_start_to_orig, "end": a.tok_end_to_orig, "aligned": a.ok}
                       for a in paragraphs],
        "examples": meta_examples, "features": meta_features}
    return rows, metadata, counts


def write_features(examples: list, sp_model, settings: Settings, is_training: bool, record_path: str,
                   metadata_path: str, log=print, cache_key: dict | None = None) -> dict:
    """Features -> the TFRecord (original keys) and the metadata JSON, each under a temporary name then renamed,
    so that an interrupted run never leaves a partial file. Returns the counts (and the metadata written)."""
    import numpy as np

    rows, metadata, counts = convert_examples(examples, sp_model, settings, is_training, log)
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
            for record in serialize_examples(arrays):
                writer.write(record)
        if cache_key is not None:
            metadata["cache_key"] = dict(cache_key, record_bytes=os.path.getsize(tmp_record))
        with open(tmp_metadata, "w", encoding="utf-8") as f:
            json.dump(metadata, f, separators=(",", ":"))
    return counts


def cached_features(examples: list, sp_model, settings: Settings, is_training: bool, record_path: str,
                    metadata_path: str, log=print, resumed_run: str | None = None) -> dict:
    """The metadata of the feature files, built once: reused while the examples as read (answers included), the
    SentencePiece model, the settings and the record (its size) are the ones it was built from; else rebuilt, and
    the reason logged (albert.data.cache's key, stored in the metadata; `resumed_run`: cache.refuse_rebuild)."""
    key = {"settings": dataclasses.asdict(settings), "training": is_training, "examples": len(examples),
           "examples_sha256": cache.examples_digest(examples),
           "tokenizer_sha256": cache.tokenizer_digest(sp_model)}
    if os.path.exists(record_path) and os.path.exists(metadata_path):
        try:
            metadata = load_json(metadata_path, "SQuAD feature metadata")
        except AlbertError:
            metadata = {}
        stored = metadata.get("cache_key") if metadata.get("format") == METADATA_FORMAT else None
        reason = cache.stale_reason(record_path, stored, key)
        if reason is None:
            return metadata
        cache.refuse_rebuild(record_path, reason, resumed_run)
        log(f"rebuilding {record_path}: {reason}")
    counts = write_features(examples, sp_model, settings, is_training, record_path, metadata_path, log, key)
    log(f"SQuAD features: {counts['examples']} questions -> {counts['features']} features in {record_path}"
        f" ({counts['misaligned']} questions of misaligned paragraphs, {counts['unlocated_answers']} answers not "
        "located)")
    return counts["metadata"]


# ------------------------------------------------------------------------------------------- model interface
def model_inputs(version_2: bool) -> tuple:
    """The feature keys the SQuAD models read at prediction (2.0 adds p_mask)."""
    return PACKED_INPUTS + (("p_mask",) if version_2 else ())


def prediction_outputs(version_2: bool) -> tuple:
    """The outputs decoding needs (and the serving export returns)."""
    if version_2:
        return "start_top_log_probs", "start_top_index", "end_top_log_probs", "end_top_index", "cls_logits"
    return "start_logits", "end_logits"


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
