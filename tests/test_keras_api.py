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
    "AlbertClassifier": ({"num_labels": 3}, BASE, "logits"),
    "AlbertPretrainer": ({}, {**BASE, "masked_lm_positions": np.array([[1, 2], [3, 4]], "int32")}, "mlm_logits"),
    "AlbertSquadV1": ({}, BASE, "start_logits"),
    "AlbertSquadV2": ({"start_n_top": 2, "end_n_top": 2},
                      {**BASE, "p_mask": np.array([[1, 1, 0, 0, 1, 1]] * 2, "int32")}, "cls_logits"),
    "AlbertMultipleChoice": ({"num_choices": 2}, {k: np.stack([v, v[::-1]], 1) for k, v in BASE.items()}, "logits"),
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
        expected[name] = np.asarray(model(inputs)[key])
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
        for name, key in {[(n, m[2]) for n, m in MODELS.items()] + [("functional", None)]!r}:
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
