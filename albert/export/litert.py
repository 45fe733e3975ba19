"""LiteRT (TFLite) files of the task models, as the original wrote `albert_model.tflite` for SQuAD.

    export_tflite(model, "out/squad_serving/model.tflite", ["input_ids", "input_mask", "segment_ids"], None)

The file takes the packed features (int32 `input_ids`, `input_mask`, `segment_ids`, and `p_mask` for SQuAD 2.0)
with a dynamic batch and a dynamic sequence length (a caller feeds a batch cut to its longest example, any length up
to the export's, and computes only those positions, as the SavedModels do) or the fixed length: `--tflite_length`
(`file_length`; by default fixed for the files whose runtime reads only that -- the TF Hub encoder in MediaPipe's
TextEmbedder, SQuAD 1.1 in the Task Library's BertQuestionAnswerer -- and with `--length_buckets=none`). The dynamic
axis converts to the same builtin ops and runs at the fixed file's speed at full length. It returns the task's
outputs under the SavedModel's names. Builtin ops only (no Flex, no custom op), weights frozen into constants: the
model goes through a Keras `ExportArchive` (whose endpoint freezes the variables; a SavedModel of `tf.Variable`s
converts to READ_VARIABLE ops, which LiteRT with XNNPACK runs as all-NaN), then `tf.lite.TFLiteConverter`.
SentencePiece has no builtin op: tokenize with `albert.text.tokenization` (or the exported preprocessor) and feed ids,
or let MediaPipe Tasks / the TFLite Task Library do it from the file's TFLite metadata (albert.export.tflite_metadata,
`--tflite_metadata`).

Quantization (`--tflite_quantization`): `none` (float32), `dynamic_int8` (int8 weights, float activations: a
quarter of the size) or `float16` (float16 weights: half).
"""

import os
import tempfile
import warnings

import keras
import numpy as np
import tensorflow as tf

from albert.ground.atomic import replacing_file
from albert.export.options import TFLITE_LENGTHS, TFLITE_QUANTIZATIONS
from albert.ground.errors import AlbertError
from albert.export.savedmodel import PER_POSITION, named_outputs
from albert.export.tflite_metadata import with_metadata
from albert.model.serialization import float32_copy


def file_length(seq_length: int, bucket_bounds: tuple, choice: str = "default", runtime_fixed: bool = False
                ) -> int | None:
    """The sequence length of a model.tflite (--tflite_length `choice`): `fixed`: `seq_length`; `dynamic`: any
    (None); `default`: `seq_length` for a file whose runtime reads only a fixed length (`runtime_fixed`) or when
    batches are not cut to length buckets (--length_buckets=none), else any."""
    if choice not in TFLITE_LENGTHS:
        raise AlbertError(f"--tflite_length {choice!r} is unknown; use one of {', '.join(TFLITE_LENGTHS)}")
    if choice == "dynamic" or (choice == "default" and not runtime_fixed and len(bucket_bounds) > 1):
        return None
    return seq_length


def export_tflite(model, path: str, input_names, seq_length: int | None, output_names=None,
                  quantization: str = "none", rows_per_example: int | None = None, input_map=None,
                  described=None) -> dict:
    """Write `model` as a LiteRT flatbuffer at `path`, computing in float32 whatever the policy it was built
    under (LiteRT has no bf16 kernels; quantization applies to the float32 model). `seq_length`: the inputs'
    length, or None for any length (up to the model's max_position_embeddings). `rows_per_example` adds a
    middle dimension (4 for RACE: inputs [batch, 4, seq_length]). `output_names`: the outputs kept (default all; a
    model returning one tensor names it `logits`). `input_map(inputs)`: the model's features from the file's
    inputs (default: the same dict). Returns {"path", "bytes", "ops"}."""
    if quantization not in TFLITE_QUANTIZATIONS:
        raise AlbertError(f"--tflite_quantization {quantization!r} is unknown; use one of "
                          f"{', '.join(TFLITE_QUANTIZATIONS)}")
    shape = [None] + ([rows_per_example] if rows_per_example else []) + [seq_length]
    specs = {name: tf.TensorSpec(shape, tf.int32, name=name) for name in input_names}

    model = float32_copy(model)

    serve = named_outputs(model, output_names, input_map)
    directory, name = os.path.split(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{name}.tmp-{os.getpid()}-", dir=directory) as saved:
        archive = keras.export.ExportArchive()
        archive.track(model)
        archive.add_endpoint("serve", serve, input_signature=[specs])
        archive.write_out(saved, verbose=False)
        converter = tf.lite.TFLiteConverter.from_saved_model(saved, signature_keys=["serve"])
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
        if quantization != "none":
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        if quantization == "float16":
            converter.target_spec.supported_types = [tf.float16]
        blob = converter.convert()
    ops = op_names(blob)
    unwanted = sorted(op for op in ops if op.startswith("Flex") or op.startswith("CUSTOM") or "VARIABLE" in op)
    if unwanted:
        raise AlbertError(f"{path}: the converted model still holds {', '.join(unwanted)}; report this model")
    if described is not None:
        blob = with_metadata(blob, described)
    with replacing_file(path) as tmp, open(tmp, "wb") as f:
        f.write(blob)
    return {"path": path, "bytes": len(blob), "ops": ops}


def op_names(blob: bytes) -> list:
    """The distinct operators of a LiteRT flatbuffer (builtin names; custom ops as `CUSTOM:<code>`, Flex ops as
    `Flex<Op>`), read from the flatbuffer itself."""
    from tensorflow.lite.python import schema_py_generated as schema

    names = {value: key for key, value in vars(schema.BuiltinOperator).items() if not key.startswith("_")}
    model = schema.Model.GetRootAsModel(blob, 0)
    found = set()
    for i in range(model.OperatorCodesLength()):
        code = model.OperatorCodes(i)
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if builtin == schema.BuiltinOperator.CUSTOM:
            custom = (code.CustomCode() or b"").decode()
            found.add(custom if custom.startswith("Flex") else f"CUSTOM:{custom}")
        else:
            found.add(names.get(builtin, str(builtin)))
    return sorted(found)


def tflite_runner(path: str):
    """A function: a batch (a dict of int arrays or tensors, any batch size and any length up to the file's) ->
    {output name: array} of a model.tflite, run in TensorFlow's LiteRT interpreter (XNNPACK), so that only
    TensorFlow is needed. A file of fixed length gets shorter batches padded (0; `p_mask` 1: not an answer) and
    returns its per-position outputs cut back to the batch's length."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tf.lite.Interpreter's notice that ai-edge-litert replaces it
        runner = tf.lite.Interpreter(model_path=path).get_signature_runner("serve")
    fixed = {name: int(d["shape_signature"][-1]) for name, d in runner.get_input_details().items()
             if d["shape_signature"][-1] > 0}

    def run(batch):
        batch = {name: np.asarray(value, np.int32) for name, value in batch.items()}
        length = next(iter(batch.values())).shape[-1]
        pad = {name: fixed[name] - length for name in batch if name in fixed and fixed[name] > length}
        if not pad:
            return runner(**batch)
        for name, missing in pad.items():
            widths = [(0, 0)] * (batch[name].ndim - 1) + [(0, missing)]
            batch[name] = np.pad(batch[name], widths, constant_values=1 if name == "p_mask" else 0)
        return {name: value[:, :length] if name in PER_POSITION else value for name, value in runner(**batch).items()}

    return run


def run_tflite(path: str, batches, input_names) -> dict:
    """{output name: array} of a model.tflite over `batches` (dicts of arrays or tensors), concatenated."""
    runner = tflite_runner(path)
    parts = {}
    for batch in batches:
        outputs = runner({name: batch[name] for name in input_names})
        for name, value in outputs.items():
            parts.setdefault(name, []).append(value)
    return {name: np.concatenate(values) for name, values in parts.items()}


def report_line(report: dict, quantization: str, metric: str, lite: float, reference: float) -> str:
    """One line: the file, its size and its dev metric next to the float model's."""
    return (f"{report['path']} ({quantization}, {report['bytes'] / 2**20:.1f} MiB): dev {metric} {lite:.4f}, float "
            f"model {reference:.4f} ({lite - reference:+.4f})")
