"""The Keras API as Keras 3 users write it: `.keras` files of every model, reloaded in a fresh process that imports
`albert` before Keras, give the same outputs; a failed save leaves nothing behind."""

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
        import albert                      # before Keras: the classes register when Keras is imported
        import numpy as np
        import keras
        outputs = {{}}
        for name, key in {[(n, m[2]) for n, m in MODELS.items()] + [("functional", None)]!r}:  # key None: a tensor
            model = keras.models.load_model(f"{{name}}.keras")
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
    assert accuracy >= 0.9 and loss < history["loss"][0]
    predictions = model.predict(x, verbose=0)
    assert isinstance(predictions, np.ndarray) and predictions.shape == (len(y), 2)  # only the logits
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
from albert.optimization import create_optimizer
from albert.tasks.classification import classification_loss
from albert.training import LoopConfig, Trainer

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
@pytest.fixture(scope="module")
def spm_model(tmp_path_factory):
    from tests.test_export import train_sentencepiece_with_numbers

    return train_sentencepiece_with_numbers(tmp_path_factory.mktemp("spm"))


def test_preprocessor_ids_equal_the_python_path_on_varied_strings(spm_model):
    import random

    import tensorflow as tf

    from albert.tasks.glue import InputExample, convert_example, get_task
    from albert.tokenization import FullTokenizer
    from tests.test_export import random_strings

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
            model = keras.models.load_model("strings.keras")
            np.save("reloaded.npy", model.predict(tf.constant({sentences!r}), verbose=0))
        """)
        result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                                env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"), timeout=300)
    finally:
        os.rename(spm_model + ".moved", spm_model)
    assert result.returncode == 0, result.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "reloaded.npy"), expected, atol=1e-6)


# ----------------------------------------------------------------------------------------------- from_pretrained
PRETRAINED = dict(CONFIG, vocab_size=300, max_position_embeddings=32)


@pytest.fixture(scope="module")
def released(spm_model, tmp_path_factory):
    """A directory laid out as the released tarballs: albert_config.json, the .model/.vocab and model.ckpt-best
    written with the original TF1 names from a pretraining model (MLM and SOP heads included)."""
    import json
    import shutil

    directory = tmp_path_factory.mktemp("albert_tiny")
    for suffix in (".model", ".vocab"):
        shutil.copy(spm_model[:-len(".model")] + suffix, directory / f"30k-clean{suffix}")
    config = albert.AlbertConfig(**PRETRAINED)
    (directory / "albert_config.json").write_text(json.dumps(config.to_dict()))
    keras.utils.set_random_seed(8)
    source = albert.AlbertPretrainer(config)
    albert.save_original_checkpoint(source, str(directory / "model.ckpt-best"))
    return str(directory), source


def keyword_task(rng, rows):
    """Label 1 when the first text holds "cat"/"mat" (three times), 0 for "home"/"friend"; the second text is
    filler: learnable from raw strings by a tiny model in a few epochs."""
    from tests.test_export import WORDS

    filler = [w for w in WORDS if w not in ("cat", "mat", "home", "friend")]
    first, second, labels = [], [], []
    for _ in range(rows):
        label = rng.randrange(2)
        words = [rng.choice(filler) for _ in range(6)]
        for _ in range(3):
            words.insert(rng.randrange(len(words) + 1), rng.choice(["cat", "mat"] if label else ["home", "friend"]))
        first.append(" ".join(words).capitalize() + ".")
        second.append(" ".join(rng.choice(filler) for _ in range(4)))
        labels.append(label)
    return first, second, np.array(labels)


def test_from_pretrained_fine_tunes_on_raw_strings_and_the_keras_file_keeps_the_preprocessor(released, tmp_path):
    import random
    import shutil

    from albert.tasks.glue import InputExample, convert_example, get_task
    from albert.tokenization import FullTokenizer

    directory, source = released
    keras.utils.set_random_seed(0)
    model = albert.AlbertClassifier.from_pretrained(directory, num_labels=2, seq_length=24)
    assert sorted(model.load_report.missing) == ["output_bias", "output_weights"]  # the fresh head, reported
    for got, want in zip(model.encoder.weights, source.encoder.weights):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    rng = random.Random(0)
    a, b, y = keyword_task(rng, 400)
    test_a, test_b, test_y = keyword_task(rng, 200)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x=(a, b), y=y, batch_size=32, epochs=8, validation_data=((test_a, test_b), test_y),
                        verbose=0).history
    loss, accuracy = model.evaluate((test_a, test_b), test_y, verbose=0)
    assert accuracy >= 0.8 and history["val_accuracy"][-1] == pytest.approx(accuracy), history  # chance: 0.5
    assert loss < 0.6 * history["loss"][0]

    # predict on raw strings: only the logits, equal to the Python tokenizer + GLUE features path
    texts = ["The cat sat on the MAT.", "Naïve café, 1,024 times", "home"]
    predictions = model.predict(texts, verbose=0)
    assert predictions.shape == (3, 2)
    tokenizer, task = FullTokenizer(None, True, os.path.join(directory, "30k-clean.model")), get_task("mrpc")
    features = [convert_example(InputExample("p", t, None, "0"), task, 24, tokenizer) for t in texts]
    x = {k: np.array([getattr(f, k) for f in features], "int32") for k in ("input_ids", "input_mask", "segment_ids")}
    np.testing.assert_allclose(predictions, np.asarray(model(x)), atol=1e-5)

    # the .keras file carries the preprocessor (and its SentencePiece model: the directory is gone)
    model.save(str(tmp_path / "fine_tuned.keras"))
    np.save(tmp_path / "expected.npy", model.predict((test_a[:5], test_b[:5]), verbose=0))
    moved = directory + ".moved"
    shutil.move(directory, moved)
    try:
        code = textwrap.dedent(f"""
            import albert, keras, numpy as np
            model = keras.models.load_model("fine_tuned.keras")
            assert model.preprocessor.seq_length == 24
            np.save("reloaded.npy", model.predict(({test_a[:5]!r}, {test_b[:5]!r}), verbose=0))
        """)
        result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                                env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"), timeout=300)
    finally:
        shutil.move(moved, directory)
    assert result.returncode == 0, result.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "reloaded.npy"), np.load(tmp_path / "expected.npy"), atol=1e-6)


def test_from_pretrained_on_every_model_loads_what_the_checkpoint_holds(released, tmp_path):
    import tensorflow as tf

    directory, source = released
    encoder = albert.AlbertEncoder.from_pretrained(directory, seq_length=16)
    assert encoder.load_report.missing == []
    assert encoder.predict(["the cat sat", "a mat"], verbose=0)["pooled_output"].shape == (2, 16)

    pretrainer = albert.AlbertPretrainer.from_pretrained(directory, seq_length=16)
    assert pretrainer.load_report.missing == []  # the MLM and SOP heads come from the checkpoint too
    logits = pretrainer.predict(["the cat sat on the mat"], verbose=0)  # every position is an MLM position
    features = dict(pretrainer.preprocessor(tf.constant(["the cat sat on the mat"])))
    features["masked_lm_positions"] = np.arange(16, dtype="int32")[None]
    np.testing.assert_allclose(logits["mlm_logits"], np.asarray(source(features)["mlm_logits"]), atol=1e-5)
    assert logits["mlm_logits"].shape == (1, 16, 300)

    squad = albert.AlbertSquadV2.from_pretrained(directory, seq_length=20, start_n_top=2, end_n_top=2)
    assert len(squad.load_report.missing) == 11 and all(  # the XLNet-style head: 11 fresh variables
        n.split("/")[0] in ("start_logits", "end_logits", "answer_class") for n in squad.load_report.missing)
    features = squad.features_from_text((tf.constant(["who sat?"]), tf.constant(["the cat sat on the mat"])))
    segments, mask = features["segment_ids"].numpy()[0], features["input_mask"].numpy()[0]
    last = int(mask.sum()) - 1
    # the original's p_mask: [CLS] 0, question and its [SEP] 1, context 0, final [SEP] 1, padding 1
    want = [0 if i == 0 or (segments[i] == 1 and i < last) else 1 for i in range(20)]
    assert features["p_mask"].numpy()[0].tolist() == want and 0 < segments.sum() < last
    outputs = squad.predict((["who sat?"], ["the cat sat on the mat"]), verbose=0)
    assert outputs["start_top_index"].shape == (1, 2) and outputs["cls_logits"].shape == (1,)

    choice = albert.AlbertMultipleChoice.from_pretrained(directory, num_choices=3, seq_length=16)
    contexts, endings = ["the cat sat", "a mat"], [["on it", "far away", "home"], ["x", "y", "then ran"]]
    logits = choice.predict((contexts, endings), verbose=0)
    pairs = choice.preprocessor((tf.constant([c for c in contexts for _ in range(3)]),
                                 tf.constant([e for row in endings for e in row])))
    flat = {k: tf.reshape(v, (2, 3, 16)) for k, v in pairs.items()}
    np.testing.assert_allclose(logits, np.asarray(choice(flat)), atol=1e-5)

    # a checkpoint of ours (TF2, object-based): the same task's head is restored, another task's is reported
    classifier = albert.AlbertClassifier.from_pretrained(directory, num_labels=2, seq_length=16)
    ours = tmp_path / "ours"
    ours.mkdir()
    for name in ("albert_config.json", "30k-clean.model"):
        os.link(os.path.join(directory, name), ours / name)
    tf.train.Checkpoint(model=classifier).write(str(ours / "model.ckpt-best"))
    again = albert.AlbertClassifier.from_pretrained(str(ours), num_labels=2, seq_length=16)
    assert again.load_report.missing == []
    np.testing.assert_allclose(again.predict(["a cat"], verbose=0), classifier.predict(["a cat"], verbose=0),
                               atol=1e-6)
    v1 = albert.AlbertSquadV1.from_pretrained(str(ours), seq_length=16)
    assert sorted(n.rsplit("/", 1)[1] for n in v1.load_report.missing) == ["output_bias", "output_weights"]


def test_from_pretrained_and_strings_reject_bad_input_with_one_line(released, tmp_path):
    import json
    import shutil

    from albert.errors import AlbertError

    directory, _ = released
    with pytest.raises(AlbertError, match=r"nowhere: the model directory not found"):
        albert.AlbertClassifier.from_pretrained(str(tmp_path / "nowhere"), num_labels=2)
    with pytest.raises(AlbertError, match=r"model.ckpt-9.index: checkpoint not found; pass checkpoint_name= "
                                          r"\(found: model.ckpt-best\)"):
        albert.AlbertClassifier.from_pretrained(directory, num_labels=2, checkpoint_name="model.ckpt-9")
    with pytest.raises(AlbertError, match=r"seq_length 64 must be in \[3, max_position_embeddings = 32\]"):
        albert.AlbertClassifier.from_pretrained(directory, num_labels=2, seq_length=64)
    other = tmp_path / "other"
    shutil.copytree(directory, other)
    (other / "albert_config.json").write_text(json.dumps(dict(PRETRAINED, vocab_size=30000)))
    with pytest.raises(AlbertError, match=r"30k-clean.model has 300 pieces but .*albert_config.json says "
                                          r"vocab_size 30000: they are not from the same model"):
        albert.AlbertEncoder.from_pretrained(str(other))
    with pytest.raises(AlbertError, match=r"AlbertClassifier got strings but has no preprocessor: make it with "
                                          r"from_pretrained\(directory\)"):
        albert.AlbertClassifier(albert.AlbertConfig(**CONFIG), num_labels=2).predict(["text"], verbose=0)
