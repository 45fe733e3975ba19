"""A fine-tuned task model over packed int32 features as a serving SavedModel with its LiteRT model.tflite (and,
with --onnx_export, model.onnx: albert.export.onnx), computing in float32: SQuAD's (albert.tasks.squad.serving)
and RACE's (albert.tasks.race.serving) packed endpoints.
"""

import os

import tensorflow as tf

from albert.export.litert import export_tflite
from albert.export.onnx import export_onnx
from albert.export.savedmodel import int_spec, named_outputs, root_with_variables, save
from albert.ground.outputs import writing
from albert.model.serialization import float32_copy


def export_packed(model, input_names, output_names, path: str, seq_length: int | None, quantization: str = "none",
                  rows_per_example: int | None = None, described=None, onnx_export: str = "none") -> dict:
    """A task model over packed int32 features as a serving SavedModel (`serving_default`: any batch and length)
    and, inside it, `model.tflite` (LiteRT, builtin ops, weights frozen) at `seq_length` (None: any length, see
    albert.export.litert.file_length). `output_names`: the outputs kept (None: a model returning one tensor, named
    `logits`). Both compute in float32. `described`: the file's TFLite metadata (None: none). `onnx_export`
    (float32 / dynamic_int8): model.onnx beside them too (albert.export.onnx). Returns albert.export.litert's
    report."""
    model = float32_copy(model)
    spec = {k: int_spec(k, 3 if rows_per_example else 2) for k in input_names}
    root = root_with_variables(model)
    root.model = model
    root.serve = tf.function(named_outputs(model, output_names), input_signature=[spec])
    with writing(path, "a SavedModel export", "the export directory") as out:  # whole, with its files
        save(root, out, {"serving_default": root.serve})
        if onnx_export != "none":
            export_onnx(model, os.path.join(out, "model.onnx"), input_names, output_names, onnx_export,
                        rows_per_example)
        report = export_tflite(model, os.path.join(out, "model.tflite"), input_names, seq_length, output_names,
                               quantization, rows_per_example, described=described)
    return dict(report, path=os.path.join(path, "model.tflite")) if out != path else report
