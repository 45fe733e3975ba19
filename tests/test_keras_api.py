"""The Keras API as Keras 3 users write it: `.keras` files of every model, reloaded in a fresh process
(`albert.load_model`, or `keras.models.load_model` after `import albert.tasks.loading`), give the same outputs; a
failed save leaves nothing behind."""

import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest

import albert
from tests.helpers import ROOT

CONFIG = dict(vocab_size=50, embedding_size=8, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
              intermediate_size=32, max_position_embeddings=16, num_hidden_groups=2, inner_group_num=1)
IDS = np.array([[2, 5, 6, 7, 3, 0], [2, 9, 3, 11, 12, 3]], "int32")
BASE = {"input_ids": IDS, "input_mask": (IDS > 0).astype("int32"), "segment_ids": np.array([[0] * 6, [0, 0, 0, 1, 1, 1]],
                                                                                          "int32")}
MODELS = {  # class name -> (constructor arguments, inputs, output compared)
    "AlbertClassifier": ({"num_labels": 3}, BASE, None),
    "AlbertPretrainer": ({}, {**BASE, "masked_lm_positions": np.array([[1, 2], [3, 4]], "int32")}, "mlm_logits"),
    "AlbertSquadV1": ({}, BASE, "start_logits"),
    "AlbertSquadV2": ({"start_n_top": 2, "end_n_top": 2},
                      {**BASE, "p_mask": np.array([[1, 1, 0, 0, 1, 1]] * 2, "int32")}, "cls_logits"),
    "AlbertMultipleChoice": ({"num_choices": 2}, {k: np.stack([v, v[::-1]], 1) for k, v in BASE.items()}, None),
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    directory = tmp_path_factory.mktemp("keras_files")
    keras.mixed_precision.set_global_policy("float32")
    config = albert.AlbertConfig(**CONFIG)
    expected = {}
    for name, (arguments, inputs, key) in MODELS.items():
        keras.utils.set_random_seed(1)
        model = getattr(albert, name)(config, **arguments)
        outputs = model(inputs)
        expected[name] = np.asarray(outputs[key] if key else outputs)
        model.save(str(directory / f"{name}.keras"))
        np.savez(directory / f"{name}.npz", **inputs)
    # The encoder as a layer of a functional model.
    keras.utils.set_random_seed(2)
    inputs = {k: keras.Input((None,), dtype="int32", name=k) for k in BASE}
    pooled = albert.AlbertEncoder(config)(inputs)["pooled_output"]
    functional = keras.Model(inputs, keras.layers.Dense(2, name="probe")(pooled))
    expected["functional"] = np.asarray(functional(BASE))
    functional.save(str(directory / "functional.keras"))
    np.savez(directory / "functional.npz", **BASE)
    return directory, expected


def test_keras_files_reload_in_a_fresh_process_with_the_same_outputs(saved):
    directory, expected = saved
    code = textwrap.dedent(f"""
        import numpy as np
        import keras
        import albert
        import albert.tasks.loading        # the documented import that lets keras.models.load_model find the classes
        outputs = {{}}
        for i, (name, key) in enumerate({[(n, m[2]) for n, m in MODELS.items()] + [("functional", None)]!r}):
            # key None: a tensor; every other file through keras.models.load_model itself
            model = (albert.load_model if i % 2 else keras.models.load_model)(f"{{name}}.keras")
            out = model(dict(np.load(f"{{name}}.npz")))
            outputs[name] = np.asarray(out[key] if key else out)
            outputs[name + "_class"] = np.array(type(model).__name__)
        np.savez("reloaded.npz", **outputs)
    """)
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", code], cwd=directory, capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    reloaded = np.load(directory / "reloaded.npz")
    for name in MODELS:
        assert str(reloaded[name + "_class"]) == name
        np.testing.assert_allclose(reloaded[name], expected[name], atol=1e-6, err_msg=name)
    assert str(reloaded["functional_class"]) == "Functional"
    np.testing.assert_allclose(reloaded["functional"], expected["functional"], atol=1e-6)


def test_the_config_dict_round_trips(saved):
    config = albert.AlbertConfig(**CONFIG)
    model = albert.AlbertSquadV2(config, start_n_top=3, end_n_top=4, dropout_prob=0.2)
    clone = albert.AlbertSquadV2.from_config(model.get_config())
    assert clone.get_config() == model.get_config()
    assert model.get_config()["config"] == config.to_dict()
    assert (clone.start_n_top, clone.end_n_top, clone.dropout_prob) == (3, 4, 0.2)


def test_a_failed_save_leaves_no_file(tmp_path, monkeypatch):
    model = albert.AlbertClassifier(albert.AlbertConfig(**CONFIG), num_labels=2)

    def broken(*args, **kwargs):
        open(args[1] if len(args) > 1 else kwargs["filepath"], "wb").write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(keras.Model, "save", broken)
    with pytest.raises(OSError, match="disk full"):
        model.save(str(tmp_path / "m.keras"))
    assert os.listdir(tmp_path) == []


def test_export_without_a_call_serves_the_same_outputs(tmp_path):
    import tensorflow as tf

    config = albert.AlbertConfig(**CONFIG)
    for name, (arguments, inputs, key) in MODELS.items():
        keras.utils.set_random_seed(3)
        model = getattr(albert, name)(config, **arguments)
        model.export(str(tmp_path / name), verbose=False)  # never called: the signature is the model's own
        reloaded = tf.saved_model.load(str(tmp_path / name))  # kept: its variables live as long as it does
        served = reloaded.serve({k: tf.constant(v) for k, v in inputs.items()})
        expected = model(inputs)
        if key is None:
            np.testing.assert_allclose(served.numpy(), np.asarray(expected), atol=1e-6, err_msg=name)
        else:
            assert sorted(served) == sorted(expected), name  # the task outputs, nothing else
            for output in expected:
                np.testing.assert_allclose(served[output].numpy(), np.asarray(expected[output]), atol=1e-6,
                                           err_msg=f"{name} {output}")


def toy_task(rows=96, length=8, seed=0):
    """Label 1 when token 7 occurs in the sequence: learnable in a few epochs by a tiny model."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(8, 50, (rows, length)).astype("int32")
    labels = (rng.random(rows) < 0.5).astype("int32")
    ids[labels == 1, rng.integers(1, length, int(labels.sum()))] = 7
    ids[:, 0] = 2
    return {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}, labels


def test_fit_evaluate_predict_with_stock_losses_and_metrics():
    keras.utils.set_random_seed(4)
    x, y = toy_task()
    model = albert.AlbertClassifier(albert.AlbertConfig(**CONFIG), num_labels=2)
    model.compile(optimizer=keras.optimizers.Adam(3e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x, y, epochs=12, batch_size=16, verbose=0).history
    assert history["loss"][-1] < 0.5 * history["loss"][0] and history["accuracy"][-1] >= 0.9, history
    loss, accuracy = model.evaluate(x, y, verbose=0)
    assert accuracy >= 0.9
    assert loss < history["loss"][0]
    predictions = model.predict(x, verbose=0)
    assert isinstance(predictions, np.ndarray)
    assert predictions.shape == (len(y), 2)  # only the logits
    np.testing.assert_allclose(predictions, np.asarray(model(x)), atol=1e-5)


def test_squad_v1_fits_with_a_loss_per_output():
    keras.utils.set_random_seed(5)
    x, _ = toy_task(rows=64)
    starts = np.argmax(x["input_ids"] == 7, axis=1).astype("int32")  # 0 ([CLS]) where there is no 7
    model = albert.AlbertSquadV1(albert.AlbertConfig(**CONFIG))
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss={"start_logits": loss, "end_logits": loss},
                  metrics={"start_logits": ["accuracy"]})
    history = model.fit(x, {"start_logits": starts, "end_logits": starts}, epochs=10, batch_size=16,
                        verbose=0).history
    assert history["loss"][-1] < 0.5 * history["loss"][0], history
    assert sorted(model.predict(x, verbose=0)) == ["end_logits", "start_logits"]


# ------------------------------------------------------------------------------------------------ optimizers
OPTIMIZER_SCRIPT = r"""
import json, sys
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras
import albert
from albert.train.optimizers import create_optimizer
from albert.tasks.classification.features import classification_loss
from albert.train.loop import Trainer
from albert.train.settings import LoopConfig

config = albert.AlbertConfig(**json.loads(sys.argv[1]))
rng = np.random.default_rng(0)
ids = rng.integers(5, 50, (24, 8)).astype("int32")  # repeated tokens: the embedding gradient has duplicate rows
x = {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)}
y = (ids[:, 1] > 27).astype("int32")
results = {}


def build(strategy, kind):
    with strategy.scope():
        keras.utils.set_random_seed(7)
        model = albert.AlbertClassifier(config, num_labels=2, dropout_prob=0.0)
        optimizer = create_optimizer(3e-3, 10, 2, kind, model=model)
    return model, optimizer


for kind in ("adamw", "lamb"):
    one = tf.distribute.OneDeviceStrategy("/cpu:0")
    model, optimizer = build(one, kind)  # the project's training loop, 3 steps of 8
    trainer = Trainer(one, model, optimizer, classification_loss,
                      LoopConfig(output_dir=sys.argv[2], num_train_steps=3, global_batch_size=8, steps_per_loop=3,
                                 save_checkpoints_steps=3))
    batches = tf.data.Dataset.from_tensor_slices(dict(x, label_ids=y[:, None], is_real_example=np.ones((24, 1),
                                                                                                      "int64")))
    trainer.train_steps(iter(batches.batch(8)), 3)
    reference = [w.numpy() for w in model.weights]
    for name, strategy in (("fit", one), ("fit_mirrored", tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))):
        model, optimizer = build(strategy, kind)
        with strategy.scope():
            model.compile(optimizer=optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
        results[f"{kind}_{name}"] = max(float(np.abs(w.numpy() - r).max()) for w, r in zip(model.weights, reference))
        results[f"{kind}_{name}_moved"] = max(float(np.abs(r - w0).max()) for r, w0 in
                                              zip(reference, [w.numpy() for w in build(one, kind)[0].weights]))
print("RESULT " + json.dumps(results))
"""


@pytest.mark.slow
def test_the_projects_optimizers_in_fit_equal_the_training_loop_on_one_device_and_mirrored(tmp_path):
    """create_optimizer's AdamW and LAMB in compile/fit: IndexedSlices gradients, the all-reduce under
    MirroredStrategy and the global-norm clipping as the training loop does them: weights after 3 steps equal."""
    import json

    result = subprocess.run([sys.executable, "-c", OPTIMIZER_SCRIPT, json.dumps(CONFIG), str(tmp_path)],
                            capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    values = json.loads(result.stdout.split("RESULT ")[1])
    for kind in ("adamw", "lamb"):
        for name in ("fit", "fit_mirrored"):
            assert values[f"{kind}_{name}"] < 1e-5, (kind, name, values)
            assert values[f"{kind}_{name}_moved"] > 1e-3  # the weights did move


# --------------------------------------------------------------------------------------------- preprocessor
def test_preprocessor_ids_equal_the_python_path_on_varied_strings(spm_model):
    import random

    import tensorflow as tf

    from albert.tasks.classification.glue import InputExample, convert_example, get_task
    from albert.text.tokenization import FullTokenizer
    from tests.export_helpers import random_strings

    rng = random.Random(11)
    texts = random_strings(rng, 100)
    pairs = [(rng.choice(texts), rng.choice(texts)) for _ in range(100)]
    tokenizer, task = FullTokenizer(None, True, spm_model), get_task("mrpc")
    for length in (12, 32):
        pre = albert.AlbertPreprocessor(spm_model, seq_length=length)
        for batch in (pairs, [(t, None) for t in texts]):
            a = tf.constant([p[0] for p in batch])
            got = pre((a, tf.constant([p[1] for p in batch]))) if batch[0][1] is not None else pre(a)
            for i, (text_a, text_b) in enumerate(batch):
                want = convert_example(InputExample("g", text_a, text_b, "0"), task, length, tokenizer)
                assert got["input_ids"][i].numpy().tolist() == want.input_ids, (length, text_a, text_b)
                assert got["segment_ids"][i].numpy().tolist() == want.segment_ids
                assert got["input_mask"][i].numpy().tolist() == want.input_mask
    truncated = sum(len(tokenizer.tokenize(a)) + len(tokenizer.tokenize(b)) > 9 for a, b in pairs)
    assert truncated > 30  # the truncation rule was exercised
    mapped = tf.data.Dataset.from_tensor_slices([p[0] for p in pairs]).batch(8).map(
        albert.AlbertPreprocessor(spm_model, seq_length=12))
    assert next(iter(mapped))["input_ids"].shape == (8, 12)


@pytest.mark.slow
def test_a_model_on_raw_strings_keeps_its_preprocessor_in_the_keras_file(spm_model, tmp_path):
    import tensorflow as tf

    keras.utils.set_random_seed(6)
    config = albert.AlbertConfig(**dict(CONFIG, vocab_size=300))
    texts = keras.Input((), dtype="string")
    model = keras.Model(texts, albert.AlbertClassifier(config, num_labels=2)(
        albert.AlbertPreprocessor(spm_model, seq_length=12)(texts)))
    sentences = ["Hello WORLD, 1,024 times.", "naïve café", "the cat sat on the mat"]
    expected = model.predict(tf.constant(sentences), verbose=0)
    model.save(str(tmp_path / "strings.keras"))
    os.rename(spm_model, spm_model + ".moved")  # the .keras file must carry the SentencePiece model itself
    try:
        code = textwrap.dedent(f"""
            import albert, keras, numpy as np, tensorflow as tf
            model = albert.load_model("strings.keras")
            np.save("reloaded.npy", model.predict(tf.constant({sentences!r}), verbose=0))
        """)
        result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                                env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"), timeout=300)
    finally:
        os.rename(spm_model + ".moved", spm_model)
    assert result.returncode == 0, result.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "reloaded.npy"), expected, atol=1e-6)


def test_preprocessor_get_config_carries_its_sentencepiece_model(spm_model, tmp_path):
    """from_config(get_config()) tokenizes as the original layer (the config names the SentencePiece file); where
    that file is gone, the layer says so when called, and a `.keras` file's own copy is what loads (above)."""
    import shutil

    import tensorflow as tf

    original = albert.AlbertPreprocessor(spm_model, seq_length=12)
    config = original.get_config()
    assert config["spm_model_file"] == os.path.abspath(spm_model)
    again = albert.AlbertPreprocessor.from_config(config)
    texts = tf.constant(["Hello WORLD, 1,024 times.", "naïve café"])
    for key, value in original(texts).items():
        np.testing.assert_array_equal(again(texts)[key], value)
    moved = str(tmp_path / "elsewhere.model")
    shutil.copy(spm_model, moved)
    config = albert.AlbertPreprocessor(moved, seq_length=12).get_config()
    os.remove(moved)
    orphan = albert.AlbertPreprocessor.from_config(config)
    with pytest.raises(albert.AlbertError, match=f"{moved} is gone"):
        orphan(texts)


PREDICT_MISTAKES = [  # issue 71: (method, x, keywords, the one line); each was a KeyError, Keras' ValueError or silent
    ("predict", None, {}, "AlbertClassifier.predict: x is None, not a list of strings, a pair (texts_a, texts_b) of "
                          "them, feature arrays or a tf.data.Dataset"),
    ("predict", 7, {}, "AlbertClassifier.predict: x is 7, not a list of strings, a pair (texts_a, texts_b) of them, "
                       "feature arrays or a tf.data.Dataset"),
    ("predict", "a cat", {}, "AlbertClassifier.predict: x is one string, 'a cat'; pass a list of strings (a batch)"),
    ("predict", ["a cat", None], {}, "AlbertClassifier.predict: x[1] is None, not a string"),
    ("predict", [["a", "b"], ["c", 3]], {}, "AlbertClassifier.predict: x[1][1] is 3, not a string"),
    ("predict", [["a", "b"], ["c"]], {}, "AlbertClassifier.predict: x[1] holds 1 strings and x[0] 2; every row needs "
                                         "the same number"),
    ("predict", [b"caf\xe9"], {}, "AlbertClassifier.predict: x[0] is b'caf\\xe9', not UTF-8 (byte 0xe9 at 3); pass a "
                                  "str"),
    ("predict", (["a cat"], ["a dog", "a cow"]), {}, "AlbertClassifier.predict: x[0] holds 1 texts and x[1] 2; a pair "
                                                     "(texts_a, texts_b) needs one text_b per text_a"),
    ("predict", ["a cat"], {"batch_size": 0}, "AlbertClassifier.predict: batch_size must be a whole number of at "
                                              "least 1 (or None: the default), got 0"),
    ("fit", ["a cat", None], {"y": [0, 1]}, "AlbertClassifier.fit: x[1] is None, not a string"),
    ("fit", [], {"y": []}, "AlbertClassifier.fit: x holds no texts; pass at least one"),
    ("evaluate", ["a cat"], {"y": [0], "batch_size": -2}, "AlbertClassifier.evaluate: batch_size must be a whole "
                                                          "number of at least 1 (or None: the default), got -2"),
]


def test_predict_on_text_checks_each_text_and_no_texts_are_no_rows(spm_model):
    """The raw-text predict (albert.model.text_inputs) checks its texts first (albert.ground.arguments): a mistake is
    one AlbertError line naming the position; no texts give outputs of 0 rows; texts predict as before."""
    keras.utils.set_random_seed(3)
    model = albert.AlbertClassifier(albert.AlbertConfig(**dict(CONFIG, vocab_size=300)), num_labels=3)
    model.preprocessor = albert.AlbertPreprocessor(spm_model, seq_length=12)
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    empty = model.predict([])
    assert (empty.shape, empty.dtype) == ((0, 3), np.float32)
    assert model.predict(([], [])).shape == (0, 3)
    for method, x, keywords, message in PREDICT_MISTAKES:
        with pytest.raises(albert.AlbertError) as caught:
            getattr(model, method)(x, **keywords)
        assert str(caught.value) == message
    texts = ["the cat sat", "a naïve café, 1,024 times"]
    np.testing.assert_allclose(model.predict(texts, verbose=0), model.predict(np.array(texts), verbose=0), atol=1e-6)


def test_the_encoder_exports_each_block_output_by_name(tmp_path):
    """AlbertEncoder.export: a SavedModel whose `serve` (and serving_default) returns sequence, pooled and embedding
    outputs and every block application's output as encoder_outputs_<i>, equal to the encoder's (1e-6)."""
    import tensorflow as tf

    keras.utils.set_random_seed(8)
    encoder = albert.AlbertEncoder(albert.AlbertConfig(**CONFIG))
    encoder.export(str(tmp_path / "encoder"), verbose=False)
    reloaded = tf.saved_model.load(str(tmp_path / "encoder"))
    expected = encoder(BASE)
    for served in (reloaded.serve({k: tf.constant(v) for k, v in BASE.items()}),
                   reloaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in BASE.items()})):
        assert sorted(served) == ["embedding_output", "encoder_outputs_0", "encoder_outputs_1", "pooled_output",
                                  "sequence_output"]
        for i, block in enumerate(expected["encoder_outputs"]):
            np.testing.assert_allclose(served[f"encoder_outputs_{i}"], block, atol=1e-6)
        for key in ("sequence_output", "pooled_output", "embedding_output"):
            np.testing.assert_allclose(served[key], expected[key], atol=1e-6)
