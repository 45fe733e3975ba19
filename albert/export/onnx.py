"""ONNX files of the task models (`--onnx_export`): `model.onnx` beside the serving SavedModel, for ONNX Runtime.

    export_onnx(model, "out/sst2_serving/model.onnx", ["input_ids", "input_mask", "segment_ids"])

The file takes what the SavedModel's packed endpoint takes (int32 `input_ids`, `input_mask`, `segment_ids`, and
`p_mask` for SQuAD 2.0; RACE: [batch, 4, length]) with named dynamic axes `batch` and `sequence`, and returns the
SavedModel's outputs under their names, computed in float32 whatever the policy the model was trained under.
Converted by tf2onnx from the float32 model's `tf.function` (ONNX opset 17, standard operators only), its
LayerNorms and Dense layers then rewritten into the operators ONNX Runtime runs fastest (albert.export.onnx_graph);
`dynamic_int8` then quantizes its MatMul weights to int8 with ONNX Runtime's `quantize_dynamic` (activations stay
float). Needs the `onnx` extra (`pip install '.[onnx]'`: tf2onnx, onnx, onnxruntime); the runners say so in one
line before TensorFlow starts (`albert.export.options.check_onnx_export`). Serving the file needs only onnxruntime
and NumPy (docs/export.md).
"""

import contextlib
import logging
import os
import tempfile

import numpy as np
import tensorflow as tf

from albert.ground.atomic import replacing_file
from albert.export.options import check_onnx_export
from albert.ground.errors import AlbertError
from albert.export.onnx_graph import optimize
from albert.export.savedmodel import PER_POSITION, named_outputs
from albert.model.serialization import float32_copy

OPSET = 17


def export_onnx(model, path: str, input_names, output_names=None, quantization: str = "float32",
                rows_per_example: int | None = None, metadata: dict | None = None) -> dict:
    """Write `model` (over packed int32 features) as ONNX at `path`; `quantization`: float32 or dynamic_int8.
    `output_names`: the outputs kept (default all; a model returning one tensor names it `logits`).
    `rows_per_example` adds a middle axis (4 for RACE). `metadata`: {key: string}, written into the file's
    `metadata_props` (ONNX Runtime: `session.get_modelmeta().custom_metadata_map`). Returns {"path", "bytes",
    "ops", "rewrites"} (what albert.export.onnx_graph.optimize rewrote)."""
    check_onnx_export(quantization, os.path.dirname(os.path.abspath(path)))
    if quantization == "none":
        raise AlbertError("export_onnx: quantization 'none' writes no file; use float32 or dynamic_int8")
    import tf2onnx  # the optional `onnx` extra: imported only when a file is asked for

    model = float32_copy(model)
    rank = 3 if rows_per_example else 2
    specs = {name: tf.TensorSpec([None] * rank, tf.int32, name=name) for name in input_names}
    serve = tf.function(named_outputs(model, output_names), input_signature=[specs])
    with warnings_off():  # TensorFlow's, as tf2onnx exports the graph: a collection it cannot serialize (harmless)
        proto, _ = tf2onnx.convert.from_function(serve, input_signature=[specs], opset=OPSET)
    name_axes(proto.graph, rows_per_example)
    rewrites = optimize(proto)
    proto.producer_name, proto.doc_string = "albert", "ALBERT task model over packed ids (albert.export.onnx)"
    for key, value in (metadata or {}).items():  # quantize_dynamic keeps them
        proto.metadata_props.add(key=key, value=value)
    blob = proto.SerializeToString()
    if quantization == "dynamic_int8":
        blob = quantized(blob)
    with replacing_file(path) as tmp, open(tmp, "wb") as f:
        f.write(blob)
    import onnx

    ops = sorted({node.op_type for node in onnx.load_from_string(blob).graph.node})
    return {"path": path, "bytes": len(blob), "ops": ops, "rewrites": rewrites}


def name_axes(graph, rows_per_example: int | None):
    """Call the inputs' and outputs' dynamic axes `batch` (first) and `sequence` (last input axis; the per-position
    outputs' second), instead of tf2onnx's generated names; RACE's middle input axis is its fixed 4."""
    for value in graph.input:
        dims = value.type.tensor_type.shape.dim
        dims[0].dim_param, dims[-1].dim_param = "batch", "sequence"
        if rows_per_example:
            dims[1].ClearField("dim_param")
            dims[1].dim_value = rows_per_example
    for value in graph.output:
        dims = value.type.tensor_type.shape.dim
        if len(dims) and not dims[0].dim_value:
            dims[0].dim_param = "batch"
        if value.name in PER_POSITION and len(dims) > 1:
            dims[1].dim_param = "sequence"


@contextlib.contextmanager
def warnings_off():
    """Python logging's warnings (and what is below them) off for a call into a converter; its errors still show."""
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def quantized(blob: bytes) -> bytes:
    """The float32 ONNX model `blob` with int8 weights (ONNX Runtime's dynamic quantization of MatMul / Gemm)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="albert-onnx-") as directory:
        source, target = os.path.join(directory, "float32.onnx"), os.path.join(directory, "int8.onnx")
        with open(source, "wb") as f:
            f.write(blob)
        with warnings_off():  # its advice to pre-process, printed on every call, is for CNNs
            quantize_dynamic(source, target, weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul", "Gemm"])
        with open(target, "rb") as f:
            return f.read()


def onnx_runner(path: str, threads: int | None = None):
    """A function: a batch (a dict of int arrays or tensors) -> {output name: array} of a model.onnx, run in ONNX
    Runtime's CPU provider (`threads`: its intra-op threads; default ONNX Runtime's)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    inputs = [value.name for value in session.get_inputs()]
    outputs = [value.name for value in session.get_outputs()]

    def run(batch):
        feed = {name: np.asarray(batch[name], np.int32) for name in inputs}
        return dict(zip(outputs, session.run(outputs, feed)))

    return run
