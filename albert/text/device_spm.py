"""A SentencePiece model that does the original's text preprocessing itself, for runtimes that feed raw text to
SentencePiece (MediaPipe Tasks, the TFLite Task Library: the tokenizer in a model.tflite's metadata).

The original tokenizes `encode_pieces(sp, preprocess_text(text, lower=do_lower_case))`: whitespace collapsed, NFKD,
combining marks dropped, lower-cased, then SentencePiece's own normalization (`nmt_nfkc` for the released models).
A runtime that only runs SentencePiece would skip the preprocessing (accents kept: `amélie` -> `▁am é lie`, upper case
-> `<unk>`). Here the model's normalizer is replaced by one that maps every character to what the two steps make of
it: a rule per Unicode code point, derived from Python's Unicode data and the model's own normalizer (nothing is
listed by hand), compiled by the sentencepiece package into the model's `precompiled_charsmap`.

The digit-comma rule (albert.text.tokenization.split_digit_commas: a piece `▁45,` becomes `▁45` `,`) acts on
pieces, not text: the pieces it splits are marked unused, so SentencePiece segments such text without them, which is
the original's result where the best segmentation without them is the digits' own (measured on the real GLUE dev
sets by tests/test_device_spm.py). What a per-character map cannot express:
- compositions across characters of SentencePiece's NFKC (e.g. separate Hangul jamo composed into a syllable): the
  rules map each character alone.
The exact path stays `FullTokenizer` and the in-graph preprocessor (albert.text.graph_tokenizer) for servers.
"""

import functools
import sys
import unicodedata

import sentencepiece as spm

from albert.text.tokenization import ends_in_digit_comma, preprocess_text
from albert.ground.wire import fields, length_delimited, replace_field, rewrite_fields, varint_field

MODEL_PIECES, MODEL_NORMALIZER_SPEC = 1, 3  # ModelProto.pieces, ModelProto.normalizer_spec
PIECE_TEXT, PIECE_TYPE, UNUSED = 1, 3, 5  # ModelProto.SentencePiece.piece, .type, Type.UNUSED
SPEC_NAME, SPEC_CHARSMAP = 1, 2  # NormalizerSpec.name, NormalizerSpec.precompiled_charsmap
UNCHANGED = ("Cn", "Co")  # unassigned and private-use code points: no decomposition, no case, not combining


def _characters():
    return [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]


def _preprocessed(c: str, do_lower_case: bool) -> str:
    if c.isspace():  # preprocess_text drops a lone whitespace character; in a text it becomes one space
        return " "
    if unicodedata.category(c) in UNCHANGED:
        return c
    return preprocess_text(c, remove_space=False, lower=do_lower_case)


def preprocessing_rules(sp_model: bytes, do_lower_case: bool) -> list:
    """[(character, what the original makes of it)] for every code point the original changes: `preprocess_text`
    (any whitespace -> one space, NFKD, combining marks dropped, lower case if `do_lower_case`), then the
    normalization of the SentencePiece model `sp_model` (serialized), whitespace handling aside."""
    spm.set_min_log_level(2)
    own = spm.SentencePieceNormalizer(model_proto=sp_model, add_dummy_prefix=False, escape_whitespaces=False,
                                      remove_extra_whitespaces=False)
    characters = _characters()
    preprocessed = [_preprocessed(c, do_lower_case) for c in characters]
    return [(c, final) for c, final in zip(characters, own.normalize(preprocessed)) if final != c]


@functools.lru_cache(maxsize=4)
def preprocessing_model(sp_model: bytes, do_lower_case: bool) -> bytes:
    """The SentencePiece model `sp_model` (serialized) with a normalizer that does the original's preprocessing and
    the model's own normalization, and its pieces that end in a digit and a comma marked unused (the original splits
    them off: albert.text.tokenization.ends_in_digit_comma); every piece keeps its id and score, every other setting
    unchanged."""
    spec = dict(fields(sp_model)).get(MODEL_NORMALIZER_SPEC, b"")
    name = dict(fields(spec)).get(SPEC_NAME, b"identity").decode()
    compiled = spm.SentencePieceNormalizer(norm_map=preprocessing_rules(sp_model, do_lower_case))
    charsmap = dict(fields(compiled.serialized_normalizer_spec()))[SPEC_CHARSMAP]
    label = f"albert_preprocess_text({'lower' if do_lower_case else 'cased'})+{name}"
    spec = replace_field(spec, SPEC_CHARSMAP, length_delimited(SPEC_CHARSMAP, charsmap))
    spec = replace_field(spec, SPEC_NAME, length_delimited(SPEC_NAME, label.encode()))
    model = replace_field(sp_model, MODEL_NORMALIZER_SPEC, length_delimited(MODEL_NORMALIZER_SPEC, spec))
    return rewrite_fields(model, MODEL_PIECES, _unused_if_digit_comma)


def _unused_if_digit_comma(piece: bytes):
    if not ends_in_digit_comma(dict(fields(piece))[PIECE_TEXT].decode()):
        return None
    return length_delimited(MODEL_PIECES, replace_field(piece, PIECE_TYPE, varint_field(PIECE_TYPE, UNUSED)))
