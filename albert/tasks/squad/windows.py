"""SQuAD windows: a question and its paragraph to the model's features, as the original builds them (spec §10.2).

- `align`: maps every SentencePiece piece of the normalised paragraph back to the characters of the ORIGINAL
  paragraph (accents, case, curly quotes, whitespace runs, any script), so that a predicted span of pieces gives
  back the exact original text, through the tokenizer's own offsets (albert.text.offsets.piece_characters: the map
  preprocessing makes from the paragraph to its normalised text, and SentencePiece's from that to the pieces). Every
  piece is placed; a training answer none of whose characters any piece holds (whitespace, or characters
  SentencePiece deletes) is counted and named (`unplaced_line`), and left out of training.
- `convert_examples`: `[CLS] query [SEP] doc span [SEP]` features with `doc_stride` spans, `p_mask`,
  max-context flags and training targets, and the decoder's metadata (per paragraph the piece-to-character maps,
  per feature its span and max-context flags).

One builder for both run_squad.py (albert.tasks.squad.examples writes these features to a TFRecord) and
`AlbertSquadV1.answer` / `AlbertSquadV2.answer` on raw strings (albert.tasks.squad.answering).
"""

import dataclasses

from albert.data.features import PACKED_INPUTS
from albert.ground.errors import AlbertError, shown
from albert.text.offsets import piece_characters
from albert.text.tokenization import encode_ids, preprocess_text

FIRST_UNIQUE_ID = 1000000000
# 2: characters SentencePiece deletes left out of the alignment; 3: the tokenizer's offsets (every paragraph aligns,
# an accent written as a combining mark stays with its letter; no "aligned" flag)
METADATA_FORMAT = "albert-squad-features/3"
SHOWN_IDS = 20  # the unplaced answers' line names this many question ids, then counts the rest


@dataclasses.dataclass(frozen=True)
class Question:
    """What prediction needs of a question (albert.tasks.squad.examples.SquadExample has these fields too)."""
    qas_id: str
    question_text: str
    paragraph_text: str
    is_impossible: bool = False


# --------------------------------------------------------------------------------------------------- alignment
@dataclasses.dataclass
class Alignment:
    pieces: list  # SentencePiece pieces of the normalised paragraph
    tok_start_to_orig: list  # per piece: original character offset of its first character
    tok_end_to_orig: list  # per piece: original character offset of its last character
    orig_to_tok: list  # per original character: the piece holding it (None when no piece does)

    def text(self, start: int, end: int, paragraph_text: str) -> str:
        """The original text of pieces start..end (inclusive)."""
        return self.span(start, end, paragraph_text)[0]

    def span(self, start: int, end: int, paragraph_text: str) -> tuple:
        """(text, first character, past its last character) of pieces start..end (inclusive) in the original text,
        its surrounding whitespace left out: text == paragraph_text[first:past]; ("", -1, -1) when nothing is left."""
        first = self.tok_start_to_orig[start]
        raw = paragraph_text[first:self.tok_end_to_orig[end] + 1]
        text = raw.strip()
        if not text:
            return "", -1, -1
        first += len(raw) - len(raw.lstrip())
        return text, first, first + len(text)


def align(sp_model, paragraph_text: str, lower: bool) -> Alignment:
    found = piece_characters(sp_model, paragraph_text, lower)
    return Alignment(found.pieces, found.starts, found.ends, found.owner)


def answer_pieces(alignment: Alignment, start: int, text: str):
    """(first piece, last piece) of the answer at characters start..start+len(text)-1, or None when no piece holds
    any of its characters."""
    inside = [alignment.orig_to_tok[i] for i in range(start, start + len(text))
              if alignment.orig_to_tok[i] is not None]
    return (inside[0], inside[-1]) if inside else None


def alignments(examples: list, sp_model, lower: bool, known: dict | None = None) -> dict:
    """{paragraph text: Alignment} of the examples' paragraphs, each aligned once (`known`: already aligned)."""
    found = dict(known or {})
    for example in examples:
        if example.paragraph_text not in found:
            found[example.paragraph_text] = align(sp_model, example.paragraph_text, lower)
    return found


def unplaced_answers(examples: list, aligned: dict) -> tuple:
    """(answers to place, the question ids of those no piece holds) of training examples (impossible ones have no
    answer to place), `aligned` holding their paragraphs' Alignments."""
    answered = [e for e in examples if not e.is_impossible]
    return len(answered), [e.qas_id for e in answered
                           if answer_pieces(aligned[e.paragraph_text], e.start_position, e.orig_answer_text) is None]


def unplaced_line(total: int, unplaced: list) -> str:
    """The one line naming the training answers no piece holds (SHOWN_IDS ids, then how many more)."""
    names = ", ".join(shown(qid) for qid in unplaced[:SHOWN_IDS])
    more = f" and {len(unplaced) - SHOWN_IDS} more" if len(unplaced) > SHOWN_IDS else ""
    return f"{len(unplaced)} of {total} answers could not be placed in the tokens: ids {names}{more}"


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


def default_doc_stride(max_seq_length: int) -> int:
    """--doc_stride when not given (run_squad.py, answer(), the serving export): a third of the length (128 at 384)."""
    return max(1, max_seq_length // 3)


def default_max_query_length(max_seq_length: int) -> int:
    """--max_query_length when not given: 64, or half the length below 128."""
    return max(1, min(64, max_seq_length // 2))


@dataclasses.dataclass
class Windows:
    """How a question and its context become features: the length of a window, the stride between windows, the
    question's pieces kept, lower-casing (run_squad.py's settings of the same names)."""

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


def convert_examples(examples: list, sp_model, settings: Windows, is_training: bool,
                     aligned: dict | None = None) -> tuple:
    """Features of the examples: (arrays for the TFRecord, metadata for the decoder, counts); `aligned`: the
    Alignments of some paragraphs (`alignments`), the others are aligned here.

    Training features of an answer outside their span, and of impossible questions, point at [CLS] (0, 0) with
    is_impossible 1, as in the original (v1 keeps them). A training answer no piece holds is left out of training
    and its question id listed in counts["unplaced"] (of counts["answers"]: `unplaced_line`).
    """
    cls_id, sep_id = sp_model.PieceToId("[CLS]"), sp_model.PieceToId("[SEP]")
    t = settings.max_seq_length
    rows = {k: [] for k in ("unique_ids", *PACKED_INPUTS, "p_mask")}
    if is_training:
        rows.update(start_positions=[], end_positions=[], is_impossible=[])
    aligned = alignments(examples, sp_model, settings.do_lower_case, aligned)
    paragraphs, paragraph_index, meta_examples, meta_features = [], {}, [], []
    counts = {"examples": len(examples), "features": 0, "answers": 0, "unplaced": []}
    for example_index, example in enumerate(examples):
        if example.paragraph_text not in paragraph_index:
            paragraph_index[example.paragraph_text] = len(paragraphs)
            paragraphs.append(aligned[example.paragraph_text])
        p = paragraph_index[example.paragraph_text]
        alignment = paragraphs[p]
        meta_examples.append({"qas_id": example.qas_id, "paragraph": p})
        target = None
        if is_training and not example.is_impossible:
            counts["answers"] += 1
            target = answer_pieces(alignment, example.start_position, example.orig_answer_text)
            if target is None:
                counts["unplaced"].append(example.qas_id)
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
        "paragraphs": [{"start": a.tok_start_to_orig, "end": a.tok_end_to_orig} for a in paragraphs],
        "examples": meta_examples, "features": meta_features}
    return rows, metadata, counts


# ------------------------------------------------------------------------------------------- model interface
def model_inputs(version_2: bool) -> tuple:
    """The feature keys the SQuAD models read at prediction (2.0 adds p_mask)."""
    return PACKED_INPUTS + (("p_mask",) if version_2 else ())


def prediction_outputs(version_2: bool) -> tuple:
    """The outputs decoding needs (and the serving export returns)."""
    if version_2:
        return "start_top_log_probs", "start_top_index", "end_top_log_probs", "end_top_index", "cls_logits"
    return "start_logits", "end_logits"
