"""Where each piece of a text comes from in the text as written, through the tokenizer's own offsets.

The original tokenizes `encode_pieces(sp, preprocess_text(text))`, and both steps can say where each character
comes from:
- `preprocess_with_origin`: preprocess_text's result and, for each of its characters, the character of the text it
  comes from (a run of whitespace becomes one space, NFKD makes several characters of one, combining marks are
  dropped, lower-casing is one to one);
- SentencePiece gives each piece with the characters of its input it was normalised from (`encode(...,
  return_type="proto")`: begin and end; tensorflow-text's `tokenize_with_offsets` in the graph);
- within those, the piece's characters (`▁` aside) pair one to one with the input characters SentencePiece keeps
  (neither whitespace nor `vanishing`) when they are as many; else (a composition: Hangul jamo into a syllable)
  each of them stands for all of them. The pieces the digit-comma rule makes of one piece (`▁45,` -> `▁45` `,`)
  share out its characters the same way.

`piece_characters` gives per piece the first and the last character of the text it holds, the last one extended
over the combining marks that follow it (preprocessing drops them: an accent written as a combining mark stays with
its letter); a piece holding no character (a lone `▁`) starts at the next piece's first character and ends at the
previous piece's last one. `owner` gives per character of the text the first piece holding it. The in-graph
tokenizer (albert.text.graph_tokenizer.InGraphTokenizer.piece_characters) computes the same with TensorFlow ops; a
property test holds the two equal on every script.
"""

import dataclasses
import functools
import sys
import unicodedata

from albert.text.tokenization import SPIECE_UNDERLINE, split_digit_commas


@functools.lru_cache(maxsize=65536)
def decomposed(c: str) -> str:
    """What preprocess_text makes of one character once whitespace is handled: NFKD, combining marks dropped."""
    if c.isascii():
        return c
    return "".join(d for d in unicodedata.normalize("NFKD", c) if not unicodedata.combining(d))


def preprocess_with_origin(text: str, lower: bool = False) -> tuple:
    """(preprocess_text(text, lower=lower), origin): origin[k] is the index in `text` of the character that
    character k of the result comes from (a collapsed run of whitespace: its first character)."""
    end = len(text)
    while end and text[end - 1].isspace():
        end -= 1
    begin = 0
    while begin < end and text[begin].isspace():
        begin += 1
    chars, origin, after_space = [], [], False
    for i in range(begin, end):
        c = text[i]
        if c.isspace():
            if not after_space:
                chars.append(" ")
                origin.append(i)
            after_space = True
        else:
            chars.append(c)
            origin.append(i)
            after_space = False
    result = "".join(chars)
    if not result.isascii():
        expanded, expanded_origin = [], []
        for c, i in zip(chars, origin):
            for d in decomposed(c):
                expanded.append(d)
                expanded_origin.append(i)
        result, origin = "".join(expanded), expanded_origin
    if lower:
        result = result.lower()  # the whole text (a final capital sigma is `ς`), character for character
    return result, origin


def absorbed(c: str) -> bool:
    """Whether preprocessing drops `c` entirely (a combining mark, or a character made only of them)."""
    return not c.isspace() and not decomposed(c)


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


def all_characters() -> list:
    return [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]


def vanishing_characters(sp_model) -> set:
    """`vanishing` over every code point (about a second; for the in-graph alignment)."""
    chars = all_characters()
    return {c for c, n in zip(chars, sp_model.normalize(chars)) if _vanishes(n)}


@dataclasses.dataclass
class PieceCharacters:
    pieces: list  # encode_pieces(sp_model, preprocess_text(text, lower=lower))
    starts: list  # per piece: the index in the text of its first character (see the module's docstring)
    ends: list  # per piece: the index of its last character
    owner: list  # per character of the text: the first piece holding it, or None


def _char_index(text: str) -> list:
    """Per UTF-8 byte offset of `text` (and its end): the index of the character it falls in."""
    index = []
    for k, c in enumerate(text):
        index.extend([k] * len(c.encode("utf-8")))
    index.append(len(text))
    return index


def _shared_out(piece: str, kept: list) -> list:
    """Per character of `piece` (`▁` aside): the (first, last) input character it comes from, `kept` being the
    input characters SentencePiece kept for it: one each when they are as many, else all of them for each."""
    count = len(piece) - piece.count(SPIECE_UNDERLINE)
    if count == len(kept):
        return [(k, k) for k in kept]
    return [(kept[0], kept[-1]) if kept else None] * count


def piece_characters(sp_model, text: str, lower: bool) -> PieceCharacters:
    """The pieces of `text` and the characters of `text` each one holds (see the module's docstring)."""
    normalized, origin = preprocess_with_origin(text, lower)
    at = None if normalized.isascii() else _char_index(normalized)
    gone = vanishing(sp_model, {c for c in normalized if not c.isspace()})
    keeps = [not (c.isspace() or c in gone) for c in normalized]
    pieces, spans = [], []  # spans: per piece (first, last) index into `normalized`, or None
    for segment in sp_model.encode(normalized, return_type="proto").pieces:
        begin, end = (segment.begin, segment.end) if at is None else (at[segment.begin], at[segment.end])
        chars = _shared_out(segment.piece, [k for k in range(begin, end) if keeps[k]])
        split = split_digit_commas([segment.piece], sp_model)
        whole = [c for c in chars if c is not None]
        partition = "".join(split) == segment.piece  # else (never seen) each piece holds all of the characters
        offset = 0
        for piece in split:
            count = len(piece) - piece.count(SPIECE_UNDERLINE)
            held = [c for c in chars[offset:offset + count] if c is not None] if partition else whole
            offset += count
            pieces.append(piece)
            spans.append((held[0][0], held[-1][1]) if held else None)
    owner = [None] * len(text)
    starts, ends = [], []
    for k, span in enumerate(spans):
        if span is None:
            starts.append(None)
            ends.append(None)
            continue
        first, last = span
        for n in range(first, last + 1):
            if keeps[n] and owner[origin[n]] is None:
                owner[origin[n]] = k
        end = origin[last]
        while end + 1 < len(text) and absorbed(text[end + 1]):
            end += 1
        starts.append(origin[first])
        ends.append(end)
    following = len(text)
    for k in range(len(pieces) - 1, -1, -1):
        following = starts[k] = following if starts[k] is None else starts[k]
    previous = -1
    for k in range(len(pieces)):
        previous = ends[k] = previous if ends[k] is None else ends[k]
    return PieceCharacters(pieces, starts, ends, owner)
