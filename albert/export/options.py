"""The export settings a command line gives, declared once (albert.ground.settings_flags): the LiteRT file's
quantization, metadata and sequence axis, and the ONNX file, whose choices are the ones the exporters accept
(albert.export.litert, albert.export.tflite_metadata, albert.export.onnx); export_to_tfhub.py's and
export_checkpoints.py's settings. No TensorFlow here."""

import dataclasses

from albert.ground import extras
from albert.ground.errors import AlbertError
from albert.ground.rundir import BEST_CHECKPOINT
from albert.ground.settings_flags import SHARED, Settings, at_least, setting

TFLITE_QUANTIZATIONS = ("none", "dynamic_int8", "float16")
TFLITE_METADATA = ("tokenizer", "none")
TFLITE_LENGTHS = ("default", "fixed", "dynamic")
ONNX_EXPORTS = ("none", "float32", "dynamic_int8")


@dataclasses.dataclass(frozen=True, kw_only=True)
class TfliteOptions(Settings):
    """The model.tflite written with an export."""

    tflite_quantization: str = setting(
        "none", "Quantization of the export's model.tflite: none (float32), dynamic_int8 (int8 weights) or "
        "float16.", choices=TFLITE_QUANTIZATIONS, module=SHARED, group="export")
    tflite_metadata: str = setting(
        "tokenizer", "TFLite metadata in the model.tflite: tokenizer (input roles, the tokenizer -- a SentencePiece "
        "model that does the original's preprocessing itself -- and the label names) or none.",
        choices=TFLITE_METADATA, module=SHARED, group="export")
    tflite_length: str = setting(
        "default", "The model.tflite's sequence axis: fixed (the export's length), dynamic (any length up to it: a "
        "caller feeds each batch cut to its longest example) or default: fixed with --length_buckets=none, dynamic "
        "otherwise.", choices=TFLITE_LENGTHS, module=SHARED, group="export")


@dataclasses.dataclass(frozen=True, kw_only=True)
class OnnxOption(Settings):
    """The model.onnx of a runner's --export_dir."""

    onnx_export: str = setting(
        "none", "With --export_dir, also write model.onnx (the packed ids -> outputs endpoint, dynamic batch and "
        "sequence axes, for ONNX Runtime): float32, dynamic_int8 (int8 MatMul weights) or none. Needs pip install "
        "'.[onnx]'.", choices=ONNX_EXPORTS, module=SHARED, group="export")


def check_onnx_export(choice: str, export_dir: str | None):
    """AlbertError unless --onnx_export `choice` is known, has an --export_dir to write into and its packages are
    installed (no TensorFlow needed)."""
    if choice not in ONNX_EXPORTS:
        raise AlbertError(f"--onnx_export {choice!r} is unknown; use one of {', '.join(ONNX_EXPORTS)}")
    if choice != "none" and not export_dir:
        raise AlbertError(f"--onnx_export={choice} writes model.onnx into the export: pass --export_dir")
    if choice != "none":
        extras.require("onnx", f"--onnx_export={choice}", "pass --onnx_export=none")


# How the errors of albert.weights.formats.read_model_directory name the three settings below (export_to_tfhub.py's
# and export_checkpoints.py's flags).
HUB_EXPORT_COMMAND = "export_to_tfhub.py"  # what its outputs' markers name (albert.ground.outputs)
MODEL_DIRECTORY_FLAGS = {"directory": "--albert_directory", "checkpoint": "--checkpoint_name",
                         "spm": "--spm_model_file"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class ModelDirectory(Settings):
    """A model directory laid out as the released tarballs, or any model reference (export_to_tfhub.py,
    export_checkpoints.py)."""

    albert_directory: str = setting(
        help="The model to export. A directory with albert_config.json, the SentencePiece model and the "
        "checkpoint; or a Hugging Face "
        "directory (config.json, model.safetensors, spiece.model), a keras-hub preset, a TF1 Hub module, a Model "
        "Garden SavedModel; or any model reference (a name such as albert_base_v2, a Hugging Face id, a TF Hub "
        "handle, a URL, an archive: downloaded once into the cache).", module=SHARED, group="model")
    checkpoint_name: str = setting(BEST_CHECKPOINT, "Checkpoint prefix inside --albert_directory.", module=SHARED,
                                   group="model")
    spm_model_file: str | None = setting(None, "SentencePiece model (default: the one .model file of the "
                                         "directory).", module=SHARED, group="model")


@dataclasses.dataclass(frozen=True, kw_only=True)
class HubExport(ModelDirectory, TfliteOptions):
    """export_to_tfhub.py's settings."""

    export_path: str = setting(help="Output directory: new, empty, or an earlier export of this command (a "
                               "directory holding other files is refused).", group="export")
    do_lower_case: bool = setting(True, "Lower-case text in the preprocessor.", group="export")
    seq_length: int | None = setting(None, "Length of the preprocessor's default packing (default: 128, or the "
                                     "model's max_position_embeddings when it is smaller).", check=at_least(3),
                                     group="export")
    length_buckets: str = setting(
        "default", "Lengths the preprocessor packs a batch to. It packs to the smallest of these that holds its "
        "longest text (at most --seq_length), so the encoder computes no more: default (8, 12, 16, 20, 24, 28, 32, 40, "
        "48, ...: four per doubling), none (always --seq_length, and a model.tflite of that fixed length instead of "
        "any length), or comma-separated lengths.", module=SHARED, group="export")


@dataclasses.dataclass(frozen=True, kw_only=True)
class CheckpointExport(ModelDirectory):
    """export_checkpoints.py's settings."""

    export_path: str = setting(help="Prefix of the checkpoint to write (e.g. out/model.ckpt-best).", group="export")
