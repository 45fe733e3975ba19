"""albert.text.device_spm: the released 30k-clean SentencePiece model with the original's preprocessing compiled into
its normalizer gives FullTokenizer's pieces on raw text -- every text of the real GLUE dev sets (../shared/glue_real)
and cased / accented / quoted / CJK / emoji / whitespace text -- which plain SentencePiece does not; the residue a
per-character map cannot express is shown exactly."""

import os

import pytest
import sentencepiece as spm

from albert.tasks.classification.glue import get_task, read_examples
from albert.text.device_spm import preprocessing_model, preprocessing_rules
from albert.text.tokenization import FullTokenizer, ends_in_digit_comma
from albert.ground.wire import fields
from tests.helpers import shared_directory

SPM = os.path.join(shared_directory(), "albert_30k_clean", "30k-clean.model")
GLUE = os.path.join(shared_directory(), "glue_real")
VARIED = ["``Hi'' said AMÉLIE, ‘quoted’ “twice”", "Crème BRÛLÉE façade naïve Ångström", "ｆｕｌｌ-width ＡＢＣ ½ ﬁ ²",
          "日本語のテキスト 中文 한국어", "emoji 😀👍🏽 ok ❤️", "İstanbul straße ǅ Ω", "tab\there\u00a0nbsp\u2003em \u200b zw",
          "e\u0301 combining a\u0308\u0301", "45,000 and 3,5, x 1,2,3, R$ 1,50, ok", "  leading   and trailing  ",
          "x\u00adsoft \ufeffbom \x01ctrl", "Ⅻ ㎏ ℃ ™"]


@pytest.fixture(scope="module")
def tokenizers():
    with open(SPM, "rb") as f:
        proto = f.read()
    device = spm.SentencePieceProcessor(model_proto=preprocessing_model(proto, True))
    return device, spm.SentencePieceProcessor(model_file=SPM), FullTokenizer(None, True, SPM)


def dev_texts():
    for task in ("sst-2", "cola", "rte", "qnli"):
        for example in read_examples(get_task(task), GLUE, "dev"):
            yield example.text_a
            if example.text_b is not None:
                yield example.text_b


def test_every_real_glue_dev_text_gets_the_original_pieces_from_sentencepiece_alone(tokenizers):
    device, plain, full = tokenizers
    texts = list(dev_texts()) + VARIED
    differing = [t for t in texts if device.EncodeAsPieces(t) != full.tokenize(t)]
    plain_differing = sum(plain.EncodeAsPieces(t) != full.tokenize(t) for t in texts)
    comma = sum(any(ends_in_digit_comma(p) for p in plain.EncodeAsPieces(t.lower())) for t in texts)
    print(f"{len(texts)} texts: device model differs on {len(differing)}, plain SentencePiece on {plain_differing}; "
          f"{comma} need the digit-comma rule")
    assert len(texts) == 13395 + len(VARIED)
    assert differing == []
    assert plain_differing > 600
    assert comma > 400  # the preprocessing and the digit-comma rule are both exercised
    assert [device.PieceToId(p) for p in device.EncodeAsPieces(VARIED[0])] == full.tokenize_to_ids(VARIED[0])


def test_the_residue_is_what_one_character_alone_cannot_say(tokenizers):
    """Compositions across characters: separate Hangul jamo (NFKC composes them into a syllable) and Greek final
    sigma (`str.lower` of a word-final Σ is ς)."""
    device, _, full = tokenizers
    jamo, sigma = "\u1100\u1161\u11a8", "ΟΔΥΣΣΕΥΣ"
    assert full.tokenize(jamo) == ["▁", "각"]
    assert device.EncodeAsPieces(jamo) == ["▁", "\u1100\u1161\u11a8"]
    assert full.tokenize(sigma) == ["▁", "οδυσσευς"] != device.EncodeAsPieces(sigma) == ["▁", "οδυσσευσ"]


def test_the_model_keeps_every_piece_id_and_score_and_marks_only_digit_comma_pieces_unused():
    with open(SPM, "rb") as f:
        proto = f.read()
    changed = preprocessing_model(proto, True)
    before, after = spm.SentencePieceProcessor(model_proto=proto), spm.SentencePieceProcessor(model_proto=changed)
    assert before.GetPieceSize() == after.GetPieceSize() == 30000
    unused = [i for i in range(30000) if after.IsUnused(i)]
    assert unused == [i for i in range(30000) if ends_in_digit_comma(before.IdToPiece(i))]
    assert len(unused) > 100
    assert all(before.IdToPiece(i) == after.IdToPiece(i) and before.GetScore(i) == after.GetScore(i)
               for i in range(30000))
    spec = dict(fields(dict(fields(changed))[3]))
    assert spec[1] == b"albert_preprocess_text(lower)+nmt_nfkc"
    assert spec[3] == 1
    assert spec[4] == 1


def test_the_rules_are_derived_not_listed_and_a_cased_model_keeps_case():
    with open(SPM, "rb") as f:
        proto = f.read()
    lower, cased = dict(preprocessing_rules(proto, True)), dict(preprocessing_rules(proto, False))
    assert lower["É"] == "e"
    assert cased["É"] == "E"
    assert lower["Z"] == "z"
    assert "Z" not in cased
    assert lower["\u0301"] == ""
    assert lower["\u3000"] == " "
    assert lower["ﬁ"] == "fi"
    assert lower["１"] == "1"
    assert len(lower) > 5000
    assert len(cased) > 4000
