"""The contract every task model keeps (as keras-hub's run_task_test holds each of its models to one): built from a
config, called on raw text through its preprocessor equal to the call on the packed features, saved to a `.keras`
file and read back with the same outputs (the SentencePiece model inside the file), exported, and its SavedModel's
`serve` equal to the model on the same features (and `serve_text` equal to the model on the raw text, where the
model takes one text per row). Every task model of the package is in the table: a new one that is not fails here."""

import os

import keras
import numpy as np
import pytest

import albert

CONFIG = dict(vocab_size=300, embedding_size=8, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
              intermediate_size=32, max_position_embeddings=32)
TEXTS = ["Hello WORLD, 1,024 times.", "naïve café", "the cat sat on the mat"]
QUESTIONS = (["who sat on the mat?", "what is naïve?", "how many times?"], TEXTS)
CONTRACT = {  # task model class -> (constructor arguments, what it reads on raw text)
    "AlbertClassifier": ({"num_labels": 3}, TEXTS),
    "AlbertPretrainer": ({}, TEXTS),
    "AlbertTokenClassifier": ({"num_labels": 5}, TEXTS),
    "AlbertSquadV1": ({}, QUESTIONS),
    "AlbertSquadV2": ({"start_n_top": 2, "end_n_top": 2}, QUESTIONS),
    "AlbertMultipleChoice": ({"num_choices": 2}, (TEXTS, [["on the mat", "in a hat"], ["café", "tea"],
                                                          ["1,024", "twice"]])),
}


def arrays(outputs) -> dict:
    return {k: np.asarray(v) for k, v in outputs.items()} if isinstance(outputs, dict) else {"": np.asarray(outputs)}


def assert_same(got, expected, what: str):
    got, expected = arrays(got), arrays(expected)
    assert sorted(got) == sorted(expected), what
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], atol=1e-5, err_msg=f"{what} {key}")


def test_every_task_model_is_in_the_contract():
    from albert.tasks.loading import CLASSES

    assert sorted(CONTRACT) == sorted(cls.__name__ for cls in CLASSES
                                      if cls.__module__.startswith("albert.tasks."))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_a_task_model_keeps_the_contract(name, spm_model, tmp_path):
    import tensorflow as tf

    keras.mixed_precision.set_global_policy("float32")
    keras.utils.set_random_seed(11)
    arguments, given = CONTRACT[name]
    text = tuple(map(tf.constant, given)) if isinstance(given, tuple) else tf.constant(given)
    model = getattr(albert, name)(albert.AlbertConfig(**CONFIG), **arguments)
    model.preprocessor = albert.AlbertPreprocessor(spm_model, seq_length=16)
    features = {k: np.asarray(v) for k, v in model.features_from_text(text).items()}
    expected = model(features, training=False)
    assert_same(model(text, training=False), expected, f"{name} on raw text")

    path = str(tmp_path / f"{name}.keras")
    model.save(path)
    os.rename(spm_model, spm_model + ".moved")  # the .keras file carries the SentencePiece model itself
    try:
        reloaded = albert.load_model(path)
        assert type(reloaded) is type(model)
        assert_same(reloaded(text, training=False), expected, f"{name} reloaded, on raw text")
    finally:
        os.rename(spm_model + ".moved", spm_model)

    model.export(str(tmp_path / "export"), verbose=False)
    served = tf.saved_model.load(str(tmp_path / "export"))
    assert_same(served.serve({k: tf.constant(v) for k, v in features.items()}), expected, f"{name} served")
    if isinstance(given, list):  # one text per row: the export serves raw strings too
        assert_same(served.serve_text(text), expected, f"{name} served on raw text")
