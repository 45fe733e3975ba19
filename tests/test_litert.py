"""LiteRT (TFLite) exports of every task model and the encoder: builtin ops only, weights frozen, outputs of the
Keras model within 1e-5 (float) in the ai-edge-litert interpreter and in tf.lite.Interpreter, XNNPACK on, at two
batch sizes; int8 and float16 within the stated tolerances."""

import warnings

import numpy as np
import pytest

from albert import (AlbertClassifier, AlbertConfig, AlbertEncoder, AlbertMultipleChoice, AlbertSquadV1,
                    AlbertSquadV2)
from albert.export.savedmodel import encoder_inputs
from albert.export.litert import export_tflite

CONFIG = AlbertConfig(vocab_size=128, embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=32)  # kernels of >= 1,024 values: quantized
T = 16
PACKED = ("input_ids", "input_mask", "segment_ids")
HUB = ("input_word_ids", "input_mask", "input_type_ids")

# Largest |difference| allowed from the Keras model's outputs, per quantization, on this random tiny model (seen:
# float 5e-7, dynamic_int8 9e-3 (encoder sequence_output; logits 1e-4-1.5e-3), float16 1.2e-3); the SQuAD 2.0
# top-k indices must agree exactly for float only.
TOLERANCE = {"none": 1e-5, "dynamic_int8": 0.05, "float16": 0.005}


def models():
    encoder = AlbertEncoder(CONFIG)
    return {
        "squad_v1": (AlbertSquadV1(CONFIG), PACKED, None, None),
        "squad_v2": (AlbertSquadV2(CONFIG), PACKED + ("p_mask",), None, None),
        "classifier": (AlbertClassifier(CONFIG, num_labels=3), PACKED, None, None),
        "race": (AlbertMultipleChoice(CONFIG, num_choices=4), PACKED, 4, None),
        "encoder": (encoder, HUB, None, encoder_inputs),
    }


def feed(names, batch, rows, rng):
    shape = (batch, rows, T) if rows else (batch, T)
    lengths = rng.integers(4, T + 1, shape[:-1])
    mask = (np.arange(T) < lengths[..., None]).astype(np.int32)
    values = {"ids": rng.integers(0, CONFIG.vocab_size, shape).astype(np.int32) * mask, "mask": mask,
              "types": (np.arange(T) >= T // 2).astype(np.int32) * mask}
    out = {}
    for name in names:
        out[name] = (values["ids"] if name in ("input_ids", "input_word_ids") else values["mask"]
                     if name == "input_mask" else values["types"] if name in ("segment_ids", "input_type_ids")
                     else (1 - mask))  # p_mask: 1 outside the document
    return out


def reference(model, input_map, inputs):
    outputs = model(input_map(inputs) if input_map else inputs, training=False)
    outputs = outputs if isinstance(outputs, dict) else {"logits": outputs}
    return {k: np.asarray(v) for k, v in outputs.items()}


def interpreters(path):
    from ai_edge_litert.interpreter import Interpreter

    yield "ai_edge_litert", Interpreter(model_path=path)
    import tensorflow as tf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tf.lite.Interpreter's deprecation notice
        yield "tf.lite", tf.lite.Interpreter(model_path=path)


class Exports(dict):
    """(name, quantization) -> (model, inputs, rows, input_map, report, outputs), each file converted when first
    asked for (a tier runs only the conversions its tests use)."""

    def __init__(self, directory):
        super().__init__()
        self.directory, self.models = directory, models()

    def __missing__(self, key):
        name, quantization = key
        model, inputs, rows, input_map = self.models[name]
        outputs = ("pooled_output", "sequence_output") if name == "encoder" else None
        report = export_tflite(model, str(self.directory / f"{name}-{quantization}.tflite"), inputs, T, outputs,
                               quantization, rows_per_example=rows, input_map=input_map)
        self[key] = (model, inputs, rows, input_map, report, outputs)
        return self[key]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    return Exports(tmp_path_factory.mktemp("litert"))


@pytest.mark.parametrize("name", ["squad_v1", "squad_v2", "classifier", "race", "encoder"])
@pytest.mark.parametrize("quantization", [q if q == "none" else pytest.param(q, marks=pytest.mark.slow)
                                          for q in TOLERANCE])  # the quantized files: the slow tier
def test_tflite_matches_the_keras_model(exported, name, quantization):
    model, inputs, rows, input_map, report, outputs = exported[name, quantization]
    assert not [op for op in report["ops"] if op.startswith(("Flex", "CUSTOM")) or "VARIABLE" in op], report["ops"]
    assert "FULLY_CONNECTED" in report["ops"]
    assert "BATCH_MATMUL" in report["ops"]
    rng = np.random.default_rng(0)
    for batch in (1, 3):
        features = feed(inputs, batch, rows, rng)
        expected = reference(model, input_map, features)
        expected = {k: expected[k] for k in outputs or expected}
        for interpreter_name, interpreter in interpreters(report["path"]):
            got = interpreter.get_signature_runner("serve")(**features)
            assert sorted(got) == sorted(expected), interpreter_name
            # XNNPACK on: the delegate took over nodes of the graph (as the default interpreters do)
            assert "DELEGATE" in {op["op_name"] for op in interpreter._get_ops_details()}, interpreter_name
            for key, value in got.items():
                assert value.shape == expected[key].shape, (interpreter_name, key)
                assert np.isfinite(value).all(), (interpreter_name, key)
                if "index" in key:
                    if quantization == "none":
                        np.testing.assert_array_equal(value, expected[key])
                    continue
                difference = np.abs(value.astype(np.float64) - expected[key]).max()
                assert difference <= TOLERANCE[quantization], (interpreter_name, key, difference)


@pytest.mark.slow
def test_quantized_files_are_smaller(exported):
    for name in ("squad_v1", "classifier", "encoder"):
        sizes = {q: exported[name, q][4]["bytes"] for q in TOLERANCE}
        # (a tiny model: the graph is much of the file; ALBERT-base: README, benchmarks/litert.py)
        assert sizes["dynamic_int8"] < 0.75 * sizes["none"] and sizes["float16"] < 0.85 * sizes["none"], sizes
        assert "DEQUANTIZE" in exported[name, "float16"][4]["ops"]
