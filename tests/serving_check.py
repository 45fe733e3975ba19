"""Serve what a runner exported, in a fresh process, next to the float32 Keras model of the same weights.

    python tests/serving_check.py '{"kind": "classifier", "run_dir": ..., "export_dir": ..., ...}'
    python tests/serving_check.py --serve     (one spec per line on stdin, one report per line on stdout)

A report is one JSON line: {"diffs": {output: largest |served - Keras|}, "exact": {output: bool}, "low_precision":
{exported file: count of bf16 / f16 values in its graph}}, or {"error": traceback}. tests/test_user_paths.py starts
one `--serve` process for its rows (a process that trained nothing, under float32, TensorFlow started once) and hands
it each runner's export; the process ends when its stdin closes.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import albert  # noqa: E402
from albert.data.readers import pretraining_dataset, race_dataset, squad_dataset  # noqa: E402
from albert.tasks.squad.windows import model_inputs, prediction_outputs  # noqa: E402

PACKED = ("input_ids", "input_mask", "segment_ids")
LOW = {tf.bfloat16.as_datatype_enum, tf.float16.as_datatype_enum}


def low_precision_values(saved_model_dir: str) -> int:
    """Nodes of a SavedModel's graph (its functions included) that produce or take a bf16 / f16 value."""
    from tensorflow.core.protobuf import saved_model_pb2

    proto = saved_model_pb2.SavedModel()
    with open(os.path.join(saved_model_dir, "saved_model.pb"), "rb") as f:
        proto.ParseFromString(f.read())
    count = 0
    for graph in proto.meta_graphs:
        nodes = list(graph.graph_def.node) + [n for fn in graph.graph_def.library.function for n in fn.node_def]
        for node in nodes:
            types = [a.type for a in node.attr.values()] + [t for a in node.attr.values() for t in a.list.type]
            count += any(t in LOW for t in types)
    return count


def low_precision_tensors(tflite_path: str) -> int:
    from ai_edge_litert.interpreter import Interpreter

    details = Interpreter(model_path=tflite_path).get_tensor_details()
    return sum(np.dtype(d["dtype"]) == np.float16 or "bfloat16" in str(d["dtype"]) for d in details)


def run_tflite(path: str, inputs: dict) -> dict:
    from ai_edge_litert.interpreter import Interpreter

    runner = Interpreter(model_path=path).get_signature_runner("serve")
    return runner(**{k: np.asarray(v, np.int32) for k, v in inputs.items()})


def compare(report: dict, name: str, served, expected, exact: bool = False):
    served, expected = np.asarray(served), np.asarray(expected)
    assert served.shape == expected.shape, (name, served.shape, expected.shape)
    if exact:
        report["exact"][name] = bool((served == expected).all())
    else:
        report["diffs"][name] = float(np.abs(served.astype(np.float64) - expected).max())


_LOADED = []


def load(path: str):
    """tf.saved_model.load, the object kept alive (a function of it needs its variables)."""
    _LOADED.append(tf.saved_model.load(path))
    return _LOADED[-1]


def first_batch(dataset) -> dict:
    return {k: v.numpy() for k, v in next(iter(dataset)).items()}


def check(spec: dict) -> dict:
    report = {"diffs": {}, "exact": {}, "low_precision": {}}
    config = albert.AlbertConfig.from_json_file(os.path.join(spec["run_dir"], "albert_config.json"))
    checkpoint = spec["checkpoint"]
    seq = spec["seq_length"]
    kind = spec["kind"]
    exports = spec["export_dir"]
    if kind == "pretraining":
        model = albert.AlbertPretrainer(config)
        albert.load_weights(model, checkpoint)
        batch = first_batch(pretraining_dataset([spec["records"]], seq, spec["predictions"], 4, False))
        expected = model.with_hidden_states(batch)
        hub = {"input_word_ids": batch["input_ids"], "input_mask": batch["input_mask"],
               "input_type_ids": batch["segment_ids"]}
        encoder = load(os.path.join(exports, "encoder"))
        served = encoder.signatures["serving_default"](**{k: tf.constant(v) for k, v in hub.items()})
        for name in ("pooled_output", "sequence_output"):
            compare(report, f"encoder {name}", served[name], expected[name])
        for i, layer in enumerate(expected["encoder_outputs"]):
            compare(report, f"encoder encoder_outputs_{i}", served[f"encoder_outputs_{i}"], layer)
        mlm = load(os.path.join(exports, "mlm"))
        served = mlm.serve(dict({k: tf.constant(v) for k, v in hub.items()},
                                masked_lm_positions=tf.constant(batch["masked_lm_positions"])))
        for name in ("mlm_logits", "sop_logits", "pooled_output"):
            compare(report, f"mlm {name}", served[name], expected[name])
        lite = run_tflite(os.path.join(exports, "encoder", "model.tflite"), hub)
        for name in ("pooled_output", "sequence_output"):
            compare(report, f"tflite {name}", lite[name], expected[name])
        savedmodels = [os.path.join(exports, name) for name in ("encoder", "mlm", "preprocessor")]
        tflite_files = [os.path.join(exports, "encoder", "model.tflite")]
    elif kind == "classifier":
        model = albert.AlbertClassifier(config, num_labels=2)
        albert.load_weights(model, checkpoint)
        rows = [line.split("\t") for line in open(spec["dev_file"], encoding="utf-8").read().splitlines()[1:9]]
        text_a, text_b = [r[1] for r in rows], [r[2] for r in rows]
        features = albert.AlbertPreprocessor(spec["spm_model_file"], seq_length=seq)((tf.constant(text_a),
                                                                                  tf.constant(text_b)))
        expected = np.asarray(model(features))
        served = load(exports).signatures["serving_default"](text_a=tf.constant(text_a),
                                                                            text_b=tf.constant(text_b))
        compare(report, "serving logits", served["logits"], expected)
        compare(report, "serving predictions", served["predictions"].numpy().astype(str),
                np.array(["entailment", "not_entailment"])[expected.argmax(-1)], exact=True)
        lite = run_tflite(os.path.join(exports, "model.tflite"), {k: np.asarray(v) for k, v in features.items()})
        compare(report, "tflite logits", lite["logits"], expected)
        savedmodels, tflite_files = [exports], [os.path.join(exports, "model.tflite")]
    elif kind in ("squad_v1", "squad_v2"):
        version_2 = kind == "squad_v2"
        model = (albert.AlbertSquadV2(config, spec["n_top"], spec["n_top"]) if version_2
                 else albert.AlbertSquadV1(config))
        albert.load_weights(model, checkpoint)
        batch = first_batch(squad_dataset([spec["records"]], seq, 4, False))
        inputs = {k: batch[k] for k in model_inputs(version_2)}
        expected = model(inputs)
        served = load(exports).signatures["serving_default"](
            **{k: tf.constant(v) for k, v in inputs.items()})
        lite = run_tflite(os.path.join(exports, "model.tflite"), inputs)
        for name in prediction_outputs(version_2):
            index = name.endswith("_index")
            compare(report, f"serving {name}", served[name], expected[name], exact=index)
            compare(report, f"tflite {name}", lite[name], expected[name], exact=index)
        savedmodels, tflite_files = [exports], [os.path.join(exports, "model.tflite")]
    elif kind == "race":
        model = albert.AlbertMultipleChoice(config, num_choices=4)
        albert.load_weights(model, checkpoint)
        batch = first_batch(race_dataset([spec["records"]], seq, 4, False))
        inputs = {k: batch[k] for k in PACKED}
        expected = np.asarray(model(inputs))
        served = load(exports).signatures["serving_default"](
            **{k: tf.constant(v) for k, v in inputs.items()})
        compare(report, "serving logits", served["logits"], expected)
        compare(report, "tflite logits", run_tflite(os.path.join(exports, "model.tflite"), inputs)["logits"],
                expected)
        # and the raw-text serving model in its text/ (float32 too)
        savedmodels, tflite_files = [exports, os.path.join(exports, "text")], [os.path.join(exports, "model.tflite")]
    elif kind == "keras":
        # A .keras file saved under mixed_bfloat16, loaded in this float32 process, and its export.
        model = albert.load_model(spec["keras_file"])
        features = model.preprocessor((tf.constant(["the code is mango", "red tree"]),
                                       tf.constant(["what is the code?", "blue river"])))
        expected = np.asarray(model(features))
        served = load(exports).serve({k: tf.constant(v) for k, v in features.items()})
        compare(report, "keras export logits", served, expected)
        savedmodels, tflite_files = [exports], []
    else:
        raise ValueError(kind)
    for path in savedmodels:
        report["low_precision"][os.path.relpath(path, exports)] = low_precision_values(path)
    for path in tflite_files:
        report["low_precision"][os.path.relpath(path, exports)] = low_precision_tensors(path)
    return report


def serve(lines, out):
    """One report per spec line, until the input ends; a failed check is its traceback, and the next spec is served."""
    import traceback

    for line in lines:
        try:
            report = check(json.loads(line))
        except Exception:  # noqa: BLE001 -- the test that sent the spec shows it
            report = {"error": traceback.format_exc()}
        finally:
            _LOADED.clear()
        out.write(json.dumps(report) + "\n")
        out.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        reports = os.fdopen(os.dup(1), "w")  # the reports' own channel; whatever else prints goes to stderr
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        serve(sys.stdin, reports)
    else:
        print(json.dumps(check(json.loads(sys.argv[1]))))
