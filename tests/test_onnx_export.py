"""model.onnx (albert.export.onnx, `--onnx_export`): run_classifier.py's file served by ONNX Runtime in an
interpreter that imports neither TensorFlow nor this package, against the Keras model on every real SST-2 dev
sentence; SQuAD 2.0 and RACE files against their Keras models at two lengths; the dynamic int8 file; the one-line
errors. requirements-onnx.txt is installed by scripts/test.sh: a missing package fails, never skips."""

import json
import os

import numpy as np
import onnx
import pytest

from tests.export_helpers import SPM, TINY, fresh

SERVE = """
    import json, sys
    import numpy as np
    import onnxruntime
    session = onnxruntime.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    batch = dict(np.load("batch.npz"))
    names = [o.name for o in session.get_outputs()]
    outputs = dict(zip(names, session.run(names, {i.name: batch[i.name] for i in session.get_inputs()})))
    np.savez("outputs.npz", **outputs)
    print(json.dumps({"inputs": [[i.name, i.type, i.shape] for i in session.get_inputs()],
                      "outputs": [[o.name, o.shape] for o in session.get_outputs()],
                      "imported": sorted(m for m in ("tensorflow", "albert", "keras") if m in sys.modules)}))
"""


def serve_alone(path, batch: dict, tmp_path) -> tuple:
    """Outputs of the ONNX file `path` on `batch` in a new interpreter (onnxruntime and NumPy only); its report."""
    os.symlink(path, tmp_path / "model.onnx")
    np.savez(tmp_path / "batch.npz", **batch)
    report = json.loads(fresh(SERVE, tmp_path).stdout.strip().splitlines()[-1])
    with np.load(tmp_path / "outputs.npz") as outputs:
        return dict(outputs), report


def sst2_dev_batch(sentences):
    from albert.tasks.glue import InputExample, convert_example, get_task
    from albert.text.tokenization import FullTokenizer

    tokenizer, task = FullTokenizer(None, True, SPM), get_task("sst-2")
    features = [convert_example(InputExample(str(i), text, None, "0"), task, 64, tokenizer)
                for i, text in enumerate(sentences)]
    return {name: np.array([getattr(f, name) for f in features], np.int32)
            for name in ("input_ids", "input_mask", "segment_ids")}


def test_run_classifiers_model_onnx_serves_every_sst2_dev_sentence_as_keras_does(sst2, tmp_path):
    from albert.config import AlbertConfig
    from albert.model.task_models import AlbertClassifier
    from albert.weights.loader import init_from_checkpoint

    directory, out, sentences = sst2
    batch = sst2_dev_batch(sentences)
    model = AlbertClassifier(AlbertConfig(**TINY), num_labels=2)
    init_from_checkpoint(model, str(out / "model.ckpt-best"))
    keras_logits = np.concatenate([model({k: v[i:i + 128] for k, v in batch.items()}, training=False).numpy()
                                   for i in range(0, len(sentences), 128)])
    outputs, report = serve_alone(directory / "serving" / "model.onnx", batch, tmp_path)
    assert report["imported"] == []
    assert report["inputs"] == [["input_ids", "tensor(int32)", ["batch", "sequence"]],
                                ["input_mask", "tensor(int32)", ["batch", "sequence"]],
                                ["segment_ids", "tensor(int32)", ["batch", "sequence"]]]
    assert report["outputs"] == [["logits", ["batch", 2]]]
    assert outputs["logits"].shape == (872, 2)
    print(f"model.onnx vs Keras, {len(sentences)} SST-2 dev sentences: max |difference| "
          f"{np.abs(outputs['logits'] - keras_logits).max():.2e}")  # the figure docs/export.md quotes (pytest -s)
    np.testing.assert_allclose(outputs["logits"], keras_logits, atol=1e-5)
    assert np.abs(keras_logits).max() > 1e-3  # a trained model's logits, not zeros


@pytest.fixture(scope="module")
def tiny_models():
    import albert
    from albert.config import AlbertConfig

    config = AlbertConfig(**dict(TINY, vocab_size=300))
    return {"squad2": albert.AlbertSquadV2(config), "race": albert.AlbertMultipleChoice(config)}


def packed(shape, seed, p_mask=False):
    rng = np.random.default_rng(seed)
    batch = {"input_ids": rng.integers(5, 300, shape).astype(np.int32), "input_mask": np.ones(shape, np.int32),
             "segment_ids": np.zeros(shape, np.int32)}
    batch["input_mask"][..., shape[-1] * 2 // 3:] = 0
    batch["segment_ids"][..., shape[-1] // 3:] = 1
    if p_mask:
        batch["p_mask"] = (rng.random(shape) < 0.3).astype(np.int32)
    return batch


@pytest.mark.parametrize("kind", ["squad2", "race"])
def test_squad2_and_race_files_give_the_keras_outputs_at_any_length(kind, tiny_models, tmp_path):
    from albert.export.onnx import export_onnx, onnx_runner
    from albert.tasks.squad import model_inputs, prediction_outputs

    model = tiny_models[kind]
    path = str(tmp_path / "model.onnx")
    if kind == "squad2":
        report = export_onnx(model, path, model_inputs(True), prediction_outputs(True))
    else:
        report = export_onnx(model, path, ("input_ids", "input_mask", "segment_ids"), rows_per_example=4)
    graph = onnx.load(path).graph
    assert report["ops"] == sorted({node.op_type for node in graph.node})
    assert {node.domain for node in graph.node} <= {"", "ai.onnx"}  # standard operators only
    run = onnx_runner(path)
    for length in (12, 40):
        batch = packed((3, 4, length) if kind == "race" else (3, length), length, p_mask=kind == "squad2")
        expected = model(batch, training=False)
        expected = expected if isinstance(expected, dict) else {"logits": expected}
        outputs = run(batch)
        assert sorted(outputs) == sorted(prediction_outputs(True) if kind == "squad2" else ["logits"])
        for name, value in outputs.items():
            np.testing.assert_allclose(value, np.asarray(expected[name]), atol=1e-5, err_msg=name)
    if kind == "race":
        dims = [[d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim] for v in graph.input]
        assert dims == [["batch", 4, "sequence"]] * 3


def test_dynamic_int8_quantizes_the_matmuls_and_stays_close(tmp_path):
    import keras

    import albert
    from albert.config import AlbertConfig
    from albert.export.onnx import export_onnx, onnx_runner

    keras.utils.set_random_seed(0)  # random weights: the int8 error depends on them (0.94-0.999 over seeds 0-5)
    model = albert.AlbertClassifier(AlbertConfig(**dict(TINY, vocab_size=300)), num_labels=3)
    names = ("input_ids", "input_mask", "segment_ids")
    float_file = export_onnx(model, str(tmp_path / "f.onnx"), names)
    int8_file = export_onnx(model, str(tmp_path / "q.onnx"), names, quantization="dynamic_int8")
    assert "MatMulInteger" in int8_file["ops"] and "MatMulInteger" not in float_file["ops"]
    assert "DynamicQuantizeLinear" in int8_file["ops"]
    batch = packed((16, 30), 3)
    expected = model(batch, training=False).numpy()
    np.testing.assert_allclose(onnx_runner(float_file["path"])(batch)["logits"], expected, atol=1e-5)
    logits = onnx_runner(int8_file["path"])(batch)["logits"]
    assert np.abs(logits - expected).max() > 1e-6  # int8 weights: not the float file
    assert np.corrcoef(logits.ravel(), expected.ravel())[0, 1] > 0.95  # ... but the same function (0.999 measured)


def test_a_missing_package_is_one_line_naming_the_extra(monkeypatch):
    import importlib.util

    from albert import cli
    from albert.errors import AlbertError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tf2onnx" else real(name, *a))
    with pytest.raises(AlbertError) as raised:
        cli.check_onnx_export("float32", "out/serving")
    assert str(raised.value) == ("--onnx_export=float32 needs tf2onnx: pip install '.[onnx]' (or -r "
                                 "requirements-onnx.txt), or pass --onnx_export=none")
    cli.check_onnx_export("none", None)  # nothing asked, nothing needed
    with pytest.raises(AlbertError, match="^--onnx_export 'int4' is unknown; use one of none, float32, dynamic_int8$"):
        cli.check_onnx_export("int4", "out/serving")
