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
                      "metadata": session.get_modelmeta().custom_metadata_map,
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
    from albert.tasks.classification.glue import InputExample, convert_example, get_task
    from albert.text.tokenization import FullTokenizer

    tokenizer, task = FullTokenizer(None, True, SPM), get_task("sst-2")
    features = [convert_example(InputExample(str(i), text, None, "0"), task, 64, tokenizer)
                for i, text in enumerate(sentences)]
    return {name: np.array([getattr(f, name) for f in features], np.int32)
            for name in ("input_ids", "input_mask", "segment_ids")}


@pytest.mark.slow
def test_run_classifiers_model_onnx_serves_every_sst2_dev_sentence_as_keras_does(sst2, tmp_path):
    from albert.config import AlbertConfig
    from albert.tasks.classification.model import AlbertClassifier
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
    assert report["metadata"] == {"task": "sst-2", "texts": "text_a", "max_seq_length": "64",
                                  "do_lower_case": "true", "sentencepiece_model": "assets/30k-clean.model",
                                  "labels": '["0", "1"]'}
    with open(directory / "serving" / "assets" / "30k-clean.model", "rb") as f, open(SPM, "rb") as released:
        assert f.read() == released.read()  # the tokenizer the metadata names, beside the file
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
    from albert.tasks.squad.windows import model_inputs, prediction_outputs

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
    int8_file = export_onnx(model, str(tmp_path / "q.onnx"), names, quantization="dynamic_int8",
                            metadata={"labels": '["a", "b", "c"]'})
    assert "MatMulInteger" in int8_file["ops"]
    assert {p.key: p.value for p in onnx.load(int8_file["path"]).metadata_props}["labels"] == '["a", "b", "c"]'
    assert "MatMulInteger" not in float_file["ops"]
    assert "DynamicQuantizeLinear" in int8_file["ops"]
    batch = packed((16, 30), 3)
    expected = model(batch, training=False).numpy()
    np.testing.assert_allclose(onnx_runner(float_file["path"])(batch)["logits"], expected, atol=1e-5)
    logits = onnx_runner(int8_file["path"])(batch)["logits"]
    assert np.abs(logits - expected).max() > 1e-6  # int8 weights: not the float file
    assert np.corrcoef(logits.ravel(), expected.ravel())[0, 1] > 0.95  # ... but the same function (0.999 measured)


def test_a_missing_package_is_one_line_naming_the_extra(monkeypatch):
    import importlib.util

    from albert.export.options import check_onnx_export
    from albert.ground.errors import AlbertError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tf2onnx" else real(name, *a))
    with pytest.raises(AlbertError) as raised:
        check_onnx_export("float32", "out/serving")
    assert str(raised.value) == ("--onnx_export=float32 needs the 'onnx' extra (tf2onnx not installed): pip install "
                                 "'.[onnx]' (or -r requirements-onnx.txt), or pass --onnx_export=none")
    check_onnx_export("none", None)  # nothing asked, nothing needed
    with pytest.raises(AlbertError, match="^--onnx_export 'int4' is unknown; use one of none, float32, dynamic_int8$"):
        check_onnx_export("int4", "out/serving")


@pytest.mark.slow
def test_the_trained_file_holds_fused_layer_norms_and_plain_matmuls(sst2):
    """albert.export.onnx_graph: every LayerNorm of the trained SST-2 model (nonzero beta) is one
    LayerNormalization, every Dense one MatMul of the 3-D input (the 872-sentence test above checks the numbers)."""
    directory, _, _ = sst2
    nodes = onnx.load(str(directory / "serving" / "model.onnx")).graph.node
    ops = [node.op_type for node in nodes]
    assert ops.count("LayerNormalization") == 1 + 2 * TINY["num_hidden_layers"]  # embeddings; attention, FFN
    assert [op for op in ("GlobalAveragePool", "Sqrt", "Reciprocal") if op in ops] == []
    writers = {out: node for node in nodes for out in node.output}
    dense = [node for node in nodes if node.op_type == "MatMul" and "/Tensordot/" in node.name]  # not attention's
    assert len(dense) == 6 * TINY["num_hidden_layers"] + 1  # q, k, v, o, FFN in and out a layer; E->H projection
    flattened = [node.name.split("/")[2:4] for node in dense if writers[node.input[0]].op_type == "Reshape"]
    # left: the attention output's, whose input is the heads merged back by one Reshape (no Tensordot around it)
    assert flattened == [[f"group_0_inner_group_0_attention_{2 * i + 1}", "output_dense_1"]
                         for i in range(TINY["num_hidden_layers"])]


def layer_norm_graph(mean_read_twice: bool):
    """A hand-written ONNX model: y = LayerNorm(x) in tf2onnx's spelling (gamma, beta, epsilon 1e-12), and with
    `mean_read_twice` the mean as a second output too."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    node = helper.make_node
    nodes = [node("GlobalAveragePool", ["x"], ["mean"]), node("Neg", ["mean"], ["neg"]),
             node("Sub", ["x", "mean"], ["diff"]), node("Mul", ["diff", "diff"], ["square"]),
             node("GlobalAveragePool", ["square"], ["variance"]), node("Add", ["variance", "epsilon"], ["plus"]),
             node("Sqrt", ["plus"], ["root"]), node("Reciprocal", ["root"], ["inverse"]),
             node("Mul", ["inverse", "gamma"], ["scaled"]), node("Mul", ["x", "scaled"], ["times_x"]),
             node("Mul", ["neg", "scaled"], ["shift"]), node("Add", ["shift", "beta"], ["shifted"]),
             node("Add", ["times_x", "shifted"], ["y"])]
    constants = [numpy_helper.from_array(np.array(1e-12, np.float32), "epsilon"),
                 numpy_helper.from_array(rng.normal(1, 0.2, [1, 1, 8]).astype(np.float32), "gamma"),
                 numpy_helper.from_array(rng.normal(0, 0.2, [1, 1, 8]).astype(np.float32), "beta")]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 8])]
    if mean_read_twice:
        outputs.append(helper.make_tensor_value_info("mean", TensorProto.FLOAT, [2, 5, 1]))
    graph = helper.make_graph(nodes, "layer_norm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 8])],
                              outputs, constants)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_layer_norm_fusion_gives_the_same_numbers_and_leaves_what_it_must_not_touch():
    import onnxruntime

    from albert.export.onnx_graph import optimize

    x = np.random.default_rng(1).normal(3, 2, [2, 5, 8]).astype(np.float32)

    def run(model):
        session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(["y"], {"x": x})[0]

    model = layer_norm_graph(mean_read_twice=False)
    expected = run(model)
    assert optimize(model) == {"layer_norms": 1, "matmuls": 0, "dropped": 0}
    assert [node.op_type for node in model.graph.node] == ["LayerNormalization"]
    np.testing.assert_allclose(run(model), expected, atol=1e-5)
    gamma, beta = (onnx.numpy_helper.to_array(t) for t in model.graph.initializer if t.name != "epsilon")
    reference = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-12) * gamma + beta
    np.testing.assert_allclose(run(model), reference, atol=1e-5)
    kept = layer_norm_graph(mean_read_twice=True)  # the mean is an output: the arithmetic must stay
    before = [node.op_type for node in kept.graph.node]
    assert optimize(kept) == {"layer_norms": 0, "matmuls": 0, "dropped": 0}
    assert [node.op_type for node in kept.graph.node] == before


def test_a_matmul_whose_result_is_not_put_back_in_the_inputs_shape_keeps_its_reshapes():
    from onnx import TensorProto, helper, numpy_helper

    from albert.export.onnx_graph import optimize

    node = helper.make_node
    constants = [numpy_helper.from_array(np.array([-1, 4], np.int64), "flat"),
                 numpy_helper.from_array(np.ones([4, 3], np.float32), "w"),
                 numpy_helper.from_array(np.array([-1, 3], np.int64), "back")]
    graph = helper.make_graph(
        [node("Reshape", ["x", "flat"], ["rows"]), node("MatMul", ["rows", "w"], ["product"]),
         node("Reshape", ["product", "back"], ["y"])], "dense",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [10, 3])], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert optimize(model) == {"layer_norms": 0, "matmuls": 0, "dropped": 0}
    assert [n.op_type for n in model.graph.node] == ["Reshape", "MatMul", "Reshape"]
