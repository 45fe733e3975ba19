"""AlbertPretrainer.fill_mask (albert.tasks.pretraining.fill_mask) against transformers' `pipeline("fill-mask")`.

tests/fixtures/fill_mask/golden.json was made once by tools/make_fill_mask_golden.py: a tiny AlbertPretrainer over the
released 30k-clean SentencePiece model, every weight drawn from a fixed seed (`tiny_pretrainer`, built here again),
converted with `python -m albert.convert --to=huggingface` and filled by transformers 5.23.0's pipeline. transformers
is not needed here.
"""

import json
import os
import sys
import types

import numpy as np
import pytest
import tensorflow as tf

from albert.tasks.pretraining.fill_mask import MaskFiller, mask_pattern, piece_word
from albert.ground.errors import AlbertError
from albert.text.tokenization import FullTokenizer
from tests.helpers import FIXTURES, ROOT, shared_directory

sys.path.insert(0, os.path.join(ROOT, "tools"))
try:
    import make_fill_mask_golden as golden_tool
finally:
    sys.path.pop(0)

SPM = os.path.join(shared_directory(), "albert_30k_clean", "30k-clean.model")
with open(os.path.join(FIXTURES, "fill_mask", "golden.json"), encoding="utf-8") as _f:
    GOLDEN = json.load(_f)
# transformers' ALBERT tokenizer makes the model's user-defined symbols ( ) " - . – £ € tokens of their own: a
# space before one is dropped and the text after one starts a new word. These texts hold such a place; the others are
# tokenized alike.
SYMBOL_CASES = {0, 4}


@pytest.fixture(scope="module")
def model():
    return golden_tool.tiny_pretrainer(SPM)


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(None, True, SPM)


def top_k(logits, k):
    """The reference: logits [M,V] -> (ids [M,k], softmax probabilities [M,k]) in float64, a tie the lower id."""
    logits = np.asarray(logits, np.float64)
    probabilities = np.exp(logits - logits.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    ids = np.argsort(-probabilities, axis=-1, kind="stable")[:, :k]
    return ids, np.take_along_axis(probabilities, ids, -1)


def filler(model, tokenizer, seq_length=golden_tool.SEQ_LENGTH, max_masks=20):
    pieces = tokenizer.convert_ids_to_tokens(range(len(tokenizer.vocab)))
    return MaskFiller(model, model.preprocessor.tokenizer, pieces, seq_length, max_masks, "seq_length", "test")


def per_mask(result):
    return [result] if isinstance(result[0], dict) else result


def test_the_golden_file_is_the_tools_texts():
    assert [case["text"] for case in GOLDEN["cases"]] == golden_tool.TEXTS
    assert GOLDEN["made_by"].startswith("transformers 5.23.0, torch 2.13.0")
    assert GOLDEN["top_k"] == 5 and GOLDEN["seed"] == golden_tool.SEED


def test_fill_mask_equals_the_transformers_pipeline(model):
    results = model.fill_mask(golden_tool.TEXTS, top_k=GOLDEN["top_k"])
    compared = 0
    for number, (case, result) in enumerate(zip(GOLDEN["cases"], results)):
        assert len(per_mask(result)) == len(case["masks"])
        if number in SYMBOL_CASES:
            continue
        for theirs, ours in zip(case["masks"], per_mask(result)):
            assert [p["token"] for p in ours] == [p["token"] for p in theirs], case["text"]
            assert [p["token_str"] for p in ours] == [p["token_str"] for p in theirs], case["text"]
            np.testing.assert_allclose([p["score"] for p in ours], [p["score"] for p in theirs], rtol=1e-4,
                                       atol=1e-6)
            compared += 1
    assert compared == 6


def test_on_transformers_ids_the_scores_are_equal_for_every_text(model):
    """The texts tokenized differently: the model and the top-k on the pipeline's own ids give its answers."""
    for case in GOLDEN["cases"]:
        ids = np.array([case["input_ids"]], np.int32)
        positions = np.flatnonzero(ids[0] == 4)[None].astype(np.int32)
        features = {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids),
                    "masked_lm_positions": positions}
        top, scores = top_k(np.asarray(model(features)["mlm_logits"])[0], GOLDEN["top_k"])
        for theirs, row, row_scores in zip(case["masks"], top, scores):
            assert row.tolist() == [p["token"] for p in theirs]
            np.testing.assert_allclose(row_scores, [p["score"] for p in theirs], rtol=1e-4, atol=1e-6)


def test_the_tokenization_differs_from_transformers_only_at_the_symbols(model, tokenizer):
    features, errors, _ = filler(model, tokenizer).features(tf.constant(golden_tool.TEXTS))
    assert not any(errors.numpy())
    ours = [row[:n].tolist() for row, n in zip(features["input_ids"].numpy(),
                                               features["input_mask"].numpy().sum(1))]
    theirs = [case["input_ids"] for case in GOLDEN["cases"]]
    assert [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b] == sorted(SYMBOL_CASES)
    pieces = tokenizer.convert_ids_to_tokens
    assert pieces(ours[0])[-4:] == ["[MASK]", "\u2581", ".", "[SEP]"]  # "is [MASK] ." as the original tokenizes it
    assert pieces(theirs[0])[-3:] == ["[MASK]", ".", "[SEP]"]
    assert pieces(ours[4])[8:12] == ["\u25812", ".", "5", "\u2581and"]  # "2.5"
    assert pieces(theirs[4])[8:12] == ["\u25812", ".", "\u25815", "\u2581and"]


def test_the_shapes_and_the_filled_sequence(model):
    one = model.fill_mask("The quick brown [MASK] jumps over the lazy dog.", top_k=3)
    assert [sorted(p) for p in one] == [["score", "sequence", "token", "token_str"]] * 3
    assert [p["token_str"] for p in one] == ["cromwell", "ripped", "mitigate"]
    assert one[0]["sequence"] == "The quick brown cromwell jumps over the lazy dog."
    assert one[0]["score"] > one[1]["score"] > one[2]["score"]
    two = model.fill_mask(["she [MASK] a book about [MASK] history"], top_k=2)
    assert len(two) == 1 and len(two[0]) == 2 and len(two[0][1]) == 2
    assert two[0][0][0]["sequence"] == "she cromwell a book about [MASK] history"
    assert two[0][1][0]["sequence"] == "she [MASK] a book about mitigate history"
    batched = model.fill_mask(golden_tool.TEXTS, top_k=2, batch_size=3)  # batches of 3, cut to their longest
    assert [per_mask(r)[0][0]["token"] for r in batched] == [c["masks"][0][0]["token"] for c in GOLDEN["cases"]]


def test_words_of_pieces_and_the_mask_spellings():
    assert [piece_word(p) for p in ("\u2581cat", "s", "\u2581", "[CLS]", "<unk>")] == ["cat", "s", "", "[CLS]",
                                                                                        "<unk>"]
    assert mask_pattern(["<pad>", "<mask>", "mask", "\u2581mask", "[MASK]"]).findall("a <mask> mask [MASK] [mask]") == ["<mask>", "[MASK]"]


def test_top_k_is_the_softmax_of_the_logits(model, tokenizer):
    """A model whose masked-LM logits are [0, 2, 1, 2] over a vocabulary of 4 pieces at every mask."""
    logits = np.array([0.0, 2.0, 1.0, 2.0], np.float32)

    class Stub:
        config = types.SimpleNamespace(vocab_size=4)

        def __call__(self, features, training):
            shape = tf.shape(features["masked_lm_positions"])
            return {"mlm_logits": tf.broadcast_to(logits, tf.concat([shape, [4]], 0))}

    fill = MaskFiller(Stub(), model.preprocessor.tokenizer, ["<pad>", "[MASK]", "\u2581a", "b"], 32, 2,
                      "seq_length", "test")
    out = {k: v.numpy() for k, v in fill(tf.constant(["x [MASK] y [MASK]", "[MASK]"]), tf.constant(3)).items()}
    expected = np.exp([2.0, 2.0, 1.0]) / np.exp(logits.astype(np.float64)).sum()
    assert out["token_ids"].tolist() == [[[1, 3, 2]] * 2, [[1, 3, 2], [-1, -1, -1]]]  # a tie: the lower id first
    np.testing.assert_allclose(out["scores"][0, 0], expected, rtol=1e-7)
    assert out["token_strs"][0, 0].tolist() == [b"[MASK]", b"b", b"a"] and out["mask_counts"].tolist() == [2, 1]
    assert out["mask_offsets"].tolist() == [[[2, 8], [11, 17]], [[0, 6], [-1, -1]]]


@pytest.mark.parametrize("texts, arguments, message", [
    (["a [MASK] b", "   "], {}, "AlbertPretrainer.fill_mask: text 2 ('   '): empty text; give a text with [MASK] "
                                "where a word is missing"),
    (["no mask here"], {}, "AlbertPretrainer.fill_mask: text 1 ('no mask here'): no [MASK] in the text; write [MASK] "
                           "where the word to fill is"),
    (["[MASK] [MASK] [MASK]"], {}, "AlbertPretrainer.fill_mask: text 1 ('[MASK] [MASK] [MASK]'): 3 masks, more than "
                                   "the 2 masked positions the model was built for (max_predictions_per_seq); use at "
                                   "most 2"),
    (["[MASK]" + " word" * 40], {}, "AlbertPretrainer.fill_mask: text 1 ('[MASK]" + " word" * 38 + " wor…'): 43 "
                                    "pieces with [CLS] and [SEP], more than the preprocessor's seq_length 32; shorten "
                                    "the text"),
    (["a [MASK]"] * 3 + ["no mask"], {"batch_size": 2}, "AlbertPretrainer.fill_mask: text 4 ('no mask'): no [MASK] in "
                                                        "the text; write [MASK] where the word to fill is"),
    ([3], {}, "AlbertPretrainer.fill_mask: texts[0] is 3, not a string"),
    (["a [MASK]"], {"top_k": 0}, "AlbertPretrainer.fill_mask: top_k must be a whole number from 1 to 30000, got 0"),
    (["a [MASK]"], {"top_k": 30001}, "AlbertPretrainer.fill_mask: top_k must be a whole number from 1 to 30000, got "
                                     "30001"),
    # issue 71: each argument checked at the entry (albert.ground.arguments), one line, never another exception
    (None, {}, "AlbertPretrainer.fill_mask: texts is None, not a string or a list of strings"),  # was a TypeError
    (["a [MASK]", None], {}, "AlbertPretrainer.fill_mask: texts[1] is None, not a string"),
    (["a [MASK]"], {"batch_size": 0}, "AlbertPretrainer.fill_mask: batch_size must be a whole number of at least 1, "
                                      "got 0"),  # was range()'s ValueError
    (["a [MASK]"], {"top_k": True}, "AlbertPretrainer.fill_mask: top_k must be a whole number from 1 to 30000, got "
                                    "True"),
    ({"a [MASK]": 1}, {}, "AlbertPretrainer.fill_mask: texts is a value of type dict, not a string or a list of "
                          "strings"),
])
def test_bad_input_is_one_line(model, texts, arguments, message):
    model.max_predictions_per_seq = 2
    try:
        with pytest.raises(AlbertError) as caught:
            model.fill_mask(texts, **arguments)
    finally:
        del model.max_predictions_per_seq
    assert str(caught.value) == message


def test_no_texts_are_no_answers(model):
    """An empty list is an empty list, as answer's, choose's and predict's (it was an error, issue 71)."""
    assert model.fill_mask([]) == [] and model.fill_mask(()) == []


def test_strings_without_a_preprocessor_are_one_line():
    from albert.tasks.pretraining.model import AlbertPretrainer
    from tests.helpers import tiny_config

    with pytest.raises(AlbertError, match="^AlbertPretrainer got strings but has no preprocessor: make it with "):
        AlbertPretrainer(tiny_config()).fill_mask("a [MASK]")


def test_the_demo_fills_held_out_sentences(model, tokenizer, tmp_path, capsys):
    """tools/demo_report.py fillmask (scripts/demo.sh's step 5): the masked word of each sentence beside the top 3."""
    from albert.weights.tf_checkpoints import save_original_checkpoint

    sys.path.insert(0, os.path.join(ROOT, "tools"))
    try:
        import demo_report
    finally:
        sys.path.pop(0)
    corpus = tmp_path / "corpus_heldout.txt"
    corpus.write_text("Too short to use.\n\nReturn the number of items in the container as an integer value.\n"
                      "An x7 of 3,5 y z w v u.\nThe function returns a new list with every element of the input "
                      "sorted.\n", encoding="utf-8")
    assert demo_report.masked_sentences(str(corpus), tokenizer, 5) == [
        ("Return the number of items in the [MASK] as an integer value.", "container"),
        ("The function returns a new list [MASK] every element of the input sorted.", "with")]
    model.encoder.config.to_json_file(str(tmp_path / "albert_config.json"))
    save_original_checkpoint(model, str(tmp_path / "model" / "model.ckpt-best"))
    args = types.SimpleNamespace(albert_directory=str(tmp_path), checkpoint_name="model/model.ckpt-best",
                                 spm_model_file=SPM, heldout_corpus=str(corpus), max_seq_length=32, sentences=5)
    assert demo_report.fillmask(args)
    expected = model.fill_mask(["Return the number of items in the [MASK] as an integer value."], top_k=30000)[0]
    second = model.fill_mask("The function returns a new list [MASK] every element of the input sorted.", top_k=30000)
    ranks = [1 + [p["token_str"] for p in ranked].index(word)
             for ranked, word in ((expected, "container"), (second, "with"))]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("fill-mask on 2 held-out sentences: the word masked (its rank among the 30,000 pieces), then "
                        "the model's top 3")
    assert lines[1:3] == ["  Return the number of items in the [MASK] as an integer value.",
                          f"         container ({ranks[0]:>5,}) | " + ", ".join(f"{p['token_str']!r} {p['score']:.2f}"
                                                                           for p in expected[:3])]
    assert lines[-1] == (f"the word masked: the top guess in 0 of 2, median rank {np.median(ranks):,.0f} (a uniform "
                         "guess: 15,000)")
