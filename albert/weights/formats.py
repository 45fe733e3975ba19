"""What weights a path holds, read from the files without TensorFlow: the one format detector.

    original     a TF1 name-based checkpoint (the released tarballs; albert.weights.original's table)
    ours         a TF2 object-based checkpoint of run_pretraining.py or a fine-tuning runner
    huggingface  a Hugging Face directory (config.json + model.safetensors + spiece.model) or its .safetensors
    keras_hub    a keras-hub preset directory (config.json + model.weights.h5 [+ task.weights.h5] + assets)

The other formats translate their names to the original ones (one declarative table per format), so every
weight enters a model through `albert.weights.loader.load_tensors`. This module imports no TensorFlow: the
command lines use `directory_format` to check their flags before TensorFlow starts.
"""

import json
import os

from albert.errors import AlbertError
from albert.rundir import BEST_CHECKPOINT
from albert.textfiles import read_text
from albert.weights.bundle_index import is_object_based, shard_sizes
from albert.wire import WireError


def config_format(values) -> str:
    """"huggingface" (a `config.json` with `model_type`), "keras_hub" (a preset's, `registered_name` keras_hub>...)
    or "original" (albert_config.json's keys) for the values of a config file."""
    if isinstance(values, dict) and "model_type" in values:
        return "huggingface"
    if isinstance(values, dict) and str(values.get("registered_name", "")).startswith("keras_hub>"):
        return "keras_hub"
    return "original"


def directory_format(directory: str) -> str | None:
    """"huggingface" / "keras_hub" for a directory whose config.json says so, "release" for one with
    albert_config.json, else None. Reads JSON only."""
    if not os.path.isdir(directory):
        return None
    config = os.path.join(directory, "config.json")
    if os.path.isfile(config):
        try:
            kind = config_format(json.loads(read_text(config, "config.json")))
        except json.JSONDecodeError:
            return None
        if kind != "original":
            return kind
    if os.path.isfile(os.path.join(directory, "albert_config.json")):
        return "release"
    return None


def detect_format(path: str) -> str:
    """"original", "ours", "huggingface" or "keras_hub" for a checkpoint prefix, a directory (a model directory, or
    one whose `checkpoint` file names a checkpoint) or a weights file: from the names and config files, and for a
    TensorFlow checkpoint whether its .index holds an object graph (ours, TF2) or only names (the original's)."""
    if path.endswith((".safetensors", ".safetensors.index.json")):
        return "huggingface"
    if path.endswith(".weights.h5"):
        return "keras_hub"
    kind = directory_format(path) if "://" not in path else None
    if kind in SPM_FILES:
        return kind
    if "://" not in path and os.path.isdir(path):
        state = os.path.join(path, "checkpoint")
        path = named_checkpoint(state) if os.path.isfile(state) else os.path.join(path, BEST_CHECKPOINT)
    return "ours" if is_object_based(_read_bytes(path + ".index")) else "original"


def _read_bytes(path: str) -> bytes:
    """A local file's bytes, or a remote one's (gs://...) through TensorFlow's file system."""
    if "://" in path:
        import tensorflow as tf

        with tf.io.gfile.GFile(path, "rb") as f:
            return f.read()
    with open(path, "rb") as f:
        return f.read()


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
            path = named_checkpoint(state)
        elif kind == "release":
            path = os.path.join(path, BEST_CHECKPOINT)
        else:
            raise AlbertError(f"{path}: {flag} is a directory with no checkpoint in it (no `checkpoint` file, "
                              "config.json or albert_config.json); pass a checkpoint prefix such as "
                              f"DIR/{BEST_CHECKPOINT}")
    index = path + ".index"
    if not os.path.isfile(index):
        raise AlbertError(f"{path}: {flag} not found (no {os.path.basename(index)}); pass a checkpoint prefix such "
                          "as DIR/model.ckpt-best or a model directory")
    try:
        num_shards, needed = shard_sizes(_read_bytes(index))
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


def named_checkpoint(state: str) -> str:
    """The checkpoint a TensorFlow `checkpoint` file names (model_checkpoint_path), resolved against its directory."""
    directory = os.path.dirname(state)
    with open(state, encoding="utf-8", errors="replace") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == "model_checkpoint_path":
                named = value.strip().strip('"')
                return named if os.path.isabs(named) else os.path.join(directory, named)
    raise AlbertError(f"{state}: names no checkpoint (no model_checkpoint_path line); pass a checkpoint prefix")


def model_files(init_checkpoint: str | None, albert_config_file: str | None, spm_model_file: str | None,
                vocab_file: str | None = None) -> tuple:
    """(config file, SentencePiece model) of a run: the given ones, else those of a Hugging Face or keras-hub
    directory given as its --init_checkpoint (config.json; spiece.model / assets/tokenizer/vocabulary.spm, unless a
    WordPiece vocabulary is given)."""
    found = default_model_files(init_checkpoint)
    if not albert_config_file:
        albert_config_file = found.get("config")
    if not spm_model_file and not vocab_file:
        spm_model_file = found.get("spm_model")
    return albert_config_file, spm_model_file
