"""Fill-mask on raw text, without TensorFlow: texts holding `[MASK]` -> the masked-LM head's inputs, and its logits
-> each mask's top-k pieces with their words, probabilities and the text filled (`AlbertPretrainer.fill_mask`).

The text between masks is tokenized as a text of its own (normalised as the original does, a word start after each
mask), which is how Hugging Face's tokenizer splits at its `[MASK]` token: the ids equal transformers'
`pipeline("fill-mask")`'s except beside the symbols the SentencePiece model keeps whole (`( ) " - . – £ €`), where
Hugging Face's tokenizer splits the text too (`2.5`: `▁2 . 5` here, as pretraining saw it; `▁2 . ▁5` there). A
prediction is what `pipeline("fill-mask")` returns: `token` (the piece's id),
`token_str` (its word: the piece without SentencePiece's word-start mark), `score` (the softmax probability over the
whole vocabulary) and `sequence` -- here the text as written with that one mask replaced by `token_str` (transformers
decodes its ids instead, so its `sequence` is lower-cased and re-spaced).

`AlbertPretrainer.fill_mask` (albert.tasks.pretraining.model) runs it; the fill-mask SavedModel does the same in the
graph (albert.tasks.pretraining.serving).
"""

import dataclasses
import re

import numpy as np

from albert.data.instances import Options
from albert.ground.errors import AlbertError, shown
from albert.text.tokenization import SPIECE_UNDERLINE

MASK = "[MASK]"
# The masked positions a pretrained model was built for: the original's --max_predictions_per_seq default.
MAX_MASKS = Options.max_predictions_per_seq


@dataclasses.dataclass(frozen=True)
class MaskedTexts:
    """The packed inputs of B texts: `features` (`input_ids`, `input_mask`, `segment_ids` [B,T], cut to the longest
    text, and `masked_lm_positions` [B,P], P the most masks of a text, padded with 0), and per text the character
    spans of its masks."""

    features: dict
    spans: tuple


def mask_pattern(tokenizer) -> re.Pattern:
    """`[MASK]` and the tokenizer's own spelling of its mask piece, as one pattern."""
    spellings = {MASK} | {piece for piece in tokenizer.vocab
                          if piece[:1] in "[<" and piece[-1:] in "]>" and piece[1:-1].lower() == "mask"}
    return re.compile("|".join(re.escape(s) for s in sorted(spellings, key=len, reverse=True)))


def masked_inputs(texts, tokenizer, seq_length: int, max_masks: int = MAX_MASKS, k: int = 1) -> MaskedTexts:
    """Texts (strings: the caller's check, albert.ground.arguments, as of `k`, top_k, within the vocabulary) holding
    masks -> MaskedTexts; one AlbertError line for an empty text, a text with no mask or more than `max_masks`, or
    one longer than `seq_length` pieces with [CLS] and [SEP]."""
    if MASK not in tokenizer.vocab:
        raise AlbertError(f"fill_mask: the vocabulary has no {MASK} piece; use the SentencePiece model the model was "
                          "pretrained with")
    cls_id, sep_id, mask_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]", MASK])
    pattern = mask_pattern(tokenizer)
    rows, spans = [], []
    for number, text in enumerate(texts, 1):
        if not text.strip():
            raise AlbertError(f"fill_mask: text {number} is empty; give a text with {MASK} where a word is missing")
        found = list(pattern.finditer(text))
        if not found:
            raise AlbertError(f"fill_mask: text {number} ({shown(text)}) has no {MASK}; write {MASK} where the "
                              "word to fill is")
        if len(found) > max_masks:
            raise AlbertError(f"fill_mask: text {number} has {len(found)} masks, more than the {max_masks} masked "
                              f"positions the model was built for (max_predictions_per_seq); use at most {max_masks}")
        ids, start, where = [cls_id], 0, []
        for match in found:
            ids += tokenizer.tokenize_to_ids(text[start:match.start()])
            where.append(len(ids))
            ids.append(mask_id)
            start = match.end()
        ids += tokenizer.tokenize_to_ids(text[start:]) + [sep_id]
        if len(ids) > seq_length:
            raise AlbertError(f"fill_mask: text {number} ({shown(text)}) is {len(ids)} pieces with [CLS] and [SEP], "
                              f"more than the preprocessor's seq_length {seq_length}; shorten it")
        rows.append((ids, where))
        spans.append(tuple(match.span() for match in found))
    if not rows:
        raise AlbertError("fill_mask: no texts; give a list of strings holding [MASK]")
    length, masks = max(len(ids) for ids, _ in rows), max(map(len, spans))
    input_ids, input_mask = np.zeros((len(rows), length), np.int32), np.zeros((len(rows), length), np.int32)
    positions = np.zeros((len(rows), masks), np.int32)
    for b, (ids, where) in enumerate(rows):
        input_ids[b, :len(ids)], input_mask[b, :len(ids)], positions[b, :len(where)] = ids, 1, where
    features = {"input_ids": input_ids, "input_mask": input_mask, "segment_ids": np.zeros_like(input_ids),
                "masked_lm_positions": positions}
    return MaskedTexts(features, tuple(spans))


def piece_word(piece: str) -> str:
    """The text a piece stands for, as transformers' `token_str`: without SentencePiece's word-start mark."""
    return piece.replace(SPIECE_UNDERLINE, " ").strip(" ") if piece != SPIECE_UNDERLINE else ""


def top_k(logits: np.ndarray, k: int) -> tuple:
    """logits [M,V] -> (ids [M,k], softmax probabilities over V [M,k]), most probable first (a tie: the lower id)."""
    logits = np.asarray(logits, np.float64)
    shifted = np.exp(logits - logits.max(-1, keepdims=True))
    probabilities = shifted / shifted.sum(-1, keepdims=True)
    ids = np.argsort(-probabilities, axis=-1, kind="stable")[:, :k]
    return ids, np.take_along_axis(probabilities, ids, -1)


def predictions(texts, masked: MaskedTexts, logits, k: int, tokenizer) -> list:
    """Per text, per mask, the top-k predictions as `pipeline("fill-mask")`'s dicts: a text with one mask gives a
    list of k dicts, a text with several a list of such lists (one per mask, in order)."""
    logits = np.asarray(logits)
    answers = []
    for b, (text, spans) in enumerate(zip(texts, masked.spans)):
        ids, scores = top_k(logits[b, :len(spans)], k)
        per_mask = []
        for (start, end), row, row_scores in zip(spans, ids, scores):
            words = [piece_word(p) for p in tokenizer.convert_ids_to_tokens(row)]
            per_mask.append([{"score": float(s), "token": int(i), "token_str": w,
                              "sequence": text[:start] + w + text[end:]}
                             for i, s, w in zip(row, row_scores, words)])
        answers.append(per_mask[0] if len(per_mask) == 1 else per_mask)
    return answers
