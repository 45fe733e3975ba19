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

from albert.errors import AlbertError

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
        from albert.textfiles import read_text

        try:
            values = json.loads(read_text(config, "config.json"))
        except json.JSONDecodeError:
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


def check_checkpoint_path(path: str, flag: str) -> None:
    """Before TensorFlow starts: `path` (a flag's value) is weights of a kind the loader reads, present and whole: a
    model directory (release, Hugging Face, keras-hub), a directory whose `checkpoint` file names a checkpoint, a
    .safetensors / .weights.h5 file, or a checkpoint prefix whose .index is TensorFlow's table and whose data shards
    are all there, each as long as the index says (a copy cut short is named here, not found half-way through a
    run). Remote paths are left to the loader."""
    from albert.weights.bundle_index import shard_sizes
    from albert.wire import WireError

    if "://" in path:
        return
    if path.endswith((".safetensors", ".safetensors.index.json", ".weights.h5")):
        if not os.path.isfile(path):
            raise AlbertError(f"{path}: {flag} not found")
        return
    if os.path.isdir(path):
        state = os.path.join(path, "checkpoint")
        kind = directory_format(path)
        if kind in SPM_FILES:
            return
        if os.path.isfile(state):
            path = _named_checkpoint(state)
        elif kind == "release":
            path = os.path.join(path, "model.ckpt-best")
        else:
            raise AlbertError(f"{path}: {flag} is a directory with no checkpoint in it (no `checkpoint` file, "
                              "config.json or albert_config.json); pass a checkpoint prefix such as DIR/model.ckpt-best")
    index = path + ".index"
    if not os.path.isfile(index):
        raise AlbertError(f"{path}: {flag} not found (no {os.path.basename(index)}); pass a checkpoint prefix such "
                          "as DIR/model.ckpt-best or a model directory")
    try:
        num_shards, needed = shard_sizes(index)
    except WireError as e:
        raise AlbertError(f"{index}: not a TensorFlow checkpoint index ({e}: truncated, or another kind of file); "
                          f"pass a checkpoint written by TensorFlow as {flag}") from None
    names = [f"{path}.data-{shard:05d}-of-{num_shards:05d}" for shard in range(num_shards)]
    missing = [name for name in names if not os.path.isfile(name)]
    if missing:
        raise AlbertError(f"{path}: {len(missing)} of the checkpoint's {num_shards} data file(s) "
                          f"({os.path.basename(path)}.data-*) missing; copy the whole checkpoint")
    for shard, name in enumerate(names):
        size = os.path.getsize(name)
        if size < needed.get(shard, 0):
            raise AlbertError(f"{name}: {size:,} bytes, but its index needs {needed[shard]:,} (cut short by a copy "
                              f"or a full disk?); copy the whole checkpoint again ({flag})")


def _named_checkpoint(state: str) -> str:
    """The checkpoint a TensorFlow `checkpoint` file names (model_checkpoint_path), resolved against its directory."""
    directory = os.path.dirname(state)
    with open(state, encoding="utf-8", errors="replace") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == "model_checkpoint_path":
                named = value.strip().strip('"')
                return named if os.path.isabs(named) else os.path.join(directory, named)
    raise AlbertError(f"{state}: names no checkpoint (no model_checkpoint_path line); pass a checkpoint prefix")
