"""SQuAD windows: a question and its paragraph to the model's features, as the original builds them (spec §10.2).

- `align`: maps every SentencePiece piece of the normalised paragraph back to the characters of the ORIGINAL
  paragraph (accents, case, curly quotes and whitespace runs included), so that a predicted span of pieces gives
  back the exact original text. A two-pointer walk aligns the usual case in linear time (characters that
  SentencePiece's normaliser deletes, such as a backspace, are left out of it: `vanishing`); where it cannot (the
  normaliser or SentencePiece changed characters), a longest-matching-blocks alignment takes over. A paragraph
  with under 80% of its characters aligned is flagged: its questions are kept, predicted empty, and counted.
- `convert_examples`: `[CLS] query [SEP] doc span [SEP]` features with `doc_stride` spans, `p_mask`,
  max-context flags and training targets, and the decoder's metadata (per paragraph the piece-to-character maps,
  per feature its span and max-context flags).

Here, below the model, because both run_squad.py (albert.tasks.squad writes these features to a TFRecord) and
`AlbertSquadV1.answer` / `AlbertSquadV2.answer` on raw strings build them.
"""

import dataclasses
import difflib
import sys

from albert.data.features import PACKED_INPUTS
from albert.ground.errors import AlbertError
from albert.text.tokenization import SPIECE_UNDERLINE, encode_ids, encode_pieces, preprocess_text

MIN_ALIGNED = 0.8
FIRST_UNIQUE_ID = 1000000000
METADATA_FORMAT = "albert-squad-features/2"  # 2: characters SentencePiece deletes left out of the alignment


@dataclasses.dataclass(frozen=True)
class Question:
    """What prediction needs of a question (albert.tasks.squad.SquadExample has these fields too)."""
    qas_id: str
    question_text: str
    paragraph_text: str
    is_impossible: bool = False


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


def _vanishes(normalized: str) -> bool:
    """Whether SentencePiece's normalisation of one character (`normalized`) leaves nothing but whitespace."""
    return not normalized.replace(SPIECE_UNDERLINE, " ").strip()


def vanishing(sp_model, chars) -> set:
    """The characters of `chars` that SentencePiece's normaliser deletes or turns into whitespace, so that no piece
    holds them (the 30k-clean model: the control characters U+0001-0008, U+000E-001B, U+007F, U+008F and U+009F,
    which it deletes, and U+200B-200F, U+2581, U+FEFF and U+FFFD, which become spaces; U+0000 and the other C1
    controls stay, as pieces of their own). Asked of the model once per character (remembered on `sp_model`)."""
    memo = getattr(sp_model, "_albert_vanishing", None)
    if memo is None:
        memo = {}
        sp_model._albert_vanishing = memo
    new = sorted(c for c in set(chars) if c not in memo)
    if new:
        memo.update(zip(new, map(_vanishes, sp_model.normalize(new))))
    return {c for c in chars if memo[c]}


def vanishing_characters(sp_model) -> set:
    """`vanishing` over every code point (about a second; for the in-graph alignment of the serving export)."""
    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    return {c for c, n in zip(chars, sp_model.normalize(chars)) if _vanishes(n)}


def expanded_characters(paragraph_text: str, lower: bool, gone) -> tuple:
    """(expanded, origin): each original character normalised on its own (as the original aligns), whitespace of
    any kind as a space, the normalised characters in `gone` (a set, or a function of the characters giving one:
    `vanishing`) left out; origin[i] is the original character of expanded[i]."""
    normalized = [preprocess_text(c, remove_space=False, lower=lower) for c in paragraph_text]
    if callable(gone):
        gone = gone({n for text in normalized for n in text if not n.isspace()})
    expanded, origin = [], []
    for i, text in enumerate(normalized):
        for n in text:
            if n not in gone:
                expanded.append(" " if n.isspace() else n)
                origin.append(i)
    return "".join(expanded), origin


def align(sp_model, paragraph_text: str, lower: bool) -> Alignment:
    pieces = encode_pieces(sp_model, preprocess_text(paragraph_text, lower=lower))
    surface = "".join(p.replace(SPIECE_UNDERLINE, " ") for p in pieces)
    piece_of_char = [k for k, p in enumerate(pieces) for _ in range(len(p))]
    expanded, origin = expanded_characters(paragraph_text, lower, lambda chars: vanishing(sp_model, chars))
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


# ------------------------------------------------------------------------------------------- model interface
def model_inputs(version_2: bool) -> tuple:
    """The feature keys the SQuAD models read at prediction (2.0 adds p_mask)."""
    return PACKED_INPUTS + (("p_mask",) if version_2 else ())


def prediction_outputs(version_2: bool) -> tuple:
    """The outputs decoding needs (and the serving export returns)."""
    if version_2:
        return "start_top_log_probs", "start_top_index", "end_top_log_probs", "end_top_index", "cls_logits"
    return "start_logits", "end_logits"
