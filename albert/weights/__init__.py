"""ALBERT weights in every format through ONE loader, which recognises the format from the files.

    original     a TF1 name-based checkpoint (the released tarballs; albert.weights.original's table)
    ours         a TF2 object-based checkpoint of run_pretraining.py or a fine-tuning runner
    huggingface  a Hugging Face directory (config.json + model.safetensors + spiece.model) or its .safetensors
    keras_hub    a keras-hub preset directory (config.json + model.weights.h5 [+ task.weights.h5] + assets)

The other formats translate their names to the original ones (one declarative table per format), so every
weight enters a model through `albert.weights.original.load_tensors`. This module imports no TensorFlow: the
command lines use `directory_format` to check their flags before TensorFlow starts.
"""

import importlib
import json
import os

_EXPORTS = {name: "albert.weights.original" for name in (
    "LoadReport", "load_original_checkpoint", "save_original_checkpoint", "original_variable_map",
    "resolve_checkpoint_path", "is_original_checkpoint", "checkpoint_step", "load_tensors")}
_EXPORTS.update({name: "albert.weights.loader" for name in (
    "detect_format", "load_weights", "init_from_checkpoint", "model_directory_files", "check_vocabulary",
    "model_class_for")})


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'albert.weights' has no attribute {name!r}")


def directory_format(directory: str) -> str | None:
    """"huggingface" / "keras_hub" for a directory whose config.json says so, "release" for one with
    albert_config.json, else None. Reads JSON only."""
    if not os.path.isdir(directory):
        return None
    config = os.path.join(directory, "config.json")
    if os.path.isfile(config):
        try:
            with open(config) as f:
                values = json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        if isinstance(values, dict) and "model_type" in values:
            return "huggingface"
        if isinstance(values, dict) and str(values.get("registered_name", "")).startswith("keras_hub>"):
            return "keras_hub"
    if os.path.isfile(os.path.join(directory, "albert_config.json")):
        return "release"
    return None


SPM_FILES = {"huggingface": "spiece.model", "keras_hub": os.path.join("assets", "tokenizer", "vocabulary.spm")}


def default_model_files(init_checkpoint: str | None) -> dict:
    """{config, spm_model} that a Hugging Face or keras-hub directory given as --init_checkpoint supplies (the
    command lines' defaults for --albert_config_file / --spm_model_file); {} for any other checkpoint."""
    if init_checkpoint and init_checkpoint.endswith(".safetensors") and os.path.isfile(init_checkpoint):
        init_checkpoint = os.path.dirname(init_checkpoint) or "."
    kind = directory_format(init_checkpoint) if init_checkpoint else None
    if kind not in SPM_FILES:
        return {}
    spm = os.path.join(init_checkpoint, SPM_FILES[kind])
    return {"config": os.path.join(init_checkpoint, "config.json"), "spm_model": spm if os.path.isfile(spm) else None}
