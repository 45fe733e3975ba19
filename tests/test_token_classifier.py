"""AlbertTokenClassifier (albert.tasks.ner.model): Hugging Face's AlbertForTokenClassification fixture read with its
classifier (logits vs transformers: tests/test_weights_formats.py), and Keras fit / predict on lists of words: each
word read at its first piece, sentences longer than a window in windows, tag names set by fit."""

import os

import keras
import numpy as np
import pytest

import albert
from albert.tasks.ner.windows import word_pieces
from albert.text.tokenization import FullTokenizer
from tests.helpers import ROOT

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "weights", "hf_token")
WORDS = [["the", "a", "of"], "two three four five six seven eight nine ten one the a of and".split()]


def test_predict_on_words_reads_each_words_first_piece():
    model = albert.AlbertTokenClassifier.from_pretrained(FIXTURE, num_labels=5, seq_length=12)
    assert model.load_report.missing == ["bert/pooler/dense/bias", "bert/pooler/dense/kernel"]  # HF has no pooler
    tokenizer = FullTokenizer(None, True, os.path.join(FIXTURE, "spiece.model"))
    pieces = word_pieces(tokenizer, WORDS[0])
    ids = [tokenizer.convert_tokens_to_ids(["[CLS]"])[0], *[p for w in pieces for p in w],
           tokenizer.convert_tokens_to_ids(["[SEP]"])[0]]
    logits = np.asarray(model({"input_ids": np.array([ids]), "input_mask": np.ones((1, len(ids)), np.int32),
                               "segment_ids": np.zeros((1, len(ids)), np.int32)}))[0]
    firsts = 1 + np.cumsum([0] + [len(p) for p in pieces])[:-1]
    assert model.predict(WORDS[:1], verbose=0) == [list(logits[firsts].argmax(-1))]
    long = model.predict(WORDS, verbose=0)  # the second sentence needs windows of 10 pieces
    assert [len(t) for t in long] == [3, 14]
    model.labels = ("O", "B-LOC", "I-LOC", "B-PER", "I-PER")
    assert model.predict(WORDS[:1], verbose=0) == [[model.labels[i] for i in logits[firsts].argmax(-1)]]


def test_fit_on_words_and_tag_names_learns_them():
    keras.utils.set_random_seed(1)
    model = albert.AlbertTokenClassifier(albert.AlbertConfig.from_json_file(os.path.join(FIXTURE, "config.json")),
                                         num_labels=3)
    model.preprocessor = albert.AlbertPreprocessor(os.path.join(FIXTURE, "spiece.model"), seq_length=12)
    model.compile(optimizer=keras.optimizers.Adam(3e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    tags = [["O", "B-PER", "O"], ["O"] * 5 + ["B-PER", "I-PER"] + ["O"] * 7]
    history = model.fit(WORDS, tags, epochs=60, batch_size=4, verbose=0)
    assert model.labels == ("O", "B-PER", "I-PER")
    assert history.history["loss"][-1] < 0.2 * history.history["loss"][0]
    assert model.predict(WORDS, verbose=0) == tags


def test_predict_checks_each_word_and_no_sentences_are_no_tags():
    """issue 71: predict on words checks them first (albert.ground.arguments), one AlbertError line naming the
    position; no sentences give no tags; the window stride is a whole number of at least 1 (0 was the default,
    silently; a negative one looped for ever on a sentence longer than a window)."""
    model = albert.AlbertTokenClassifier(albert.AlbertConfig.from_json_file(os.path.join(FIXTURE, "config.json")),
                                         num_labels=3)
    model.preprocessor = albert.AlbertPreprocessor(os.path.join(FIXTURE, "spiece.model"), seq_length=12)
    assert model.predict([]) == []
    for x, keywords, message in [
            ([["the", None]], {}, "AlbertTokenClassifier.predict: x[0][1] is None, not a string"),
            (["EU rejects"], {}, "AlbertTokenClassifier.predict: x[0] is the string 'EU rejects', not a sentence as "
                                 "a list of words; pass [text.split() for text in texts] (one tag per word comes "
                                 "back)"),
            ([["the"], "a of"], {}, "AlbertTokenClassifier.predict: x[1] is 'a of', not a list of strings"),
            ([["the"]], {"batch_size": 0}, "AlbertTokenClassifier.predict: batch_size must be a whole number of at "
                                           "least 1 (or None: the default), got 0")]:
        with pytest.raises(albert.AlbertError) as caught:
            model.predict(x, **keywords)
        assert str(caught.value) == message
    for stride in (0, -1):
        model.doc_stride = stride
        with pytest.raises(albert.AlbertError) as caught:
            model.predict(WORDS[:1], verbose=0)
        assert str(caught.value) == ("AlbertTokenClassifier: doc_stride must be a whole number of at least 1 (or "
                                     f"None: the default), got {stride}")
