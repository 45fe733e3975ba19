"""What weights a path holds, read from the files without TensorFlow: the one format detector.

    original      a TF1 name-based checkpoint (the released tarballs, the variables of the original's TF1 Hub
                  modules; albert.weights.original's table)
    ours          a TF2 object-based checkpoint of run_pretraining.py or a fine-tuning runner, or the variables of
                  one of our export_to_tfhub.py SavedModels
    model_garden  a TF2 object-based checkpoint of TensorFlow Model Garden (its hub encoders' variables, its TF2
                  checkpoints; albert.weights.model_garden)
    huggingface   a Hugging Face directory (config.json + model.safetensors + spiece.model) or its .safetensors
    keras_hub     a keras-hub preset directory (config.json + model.weights.h5 [+ task.weights.h5] + assets)

A model directory is one of the layouts in `DIRECTORY_KINDS`; `directory_files` says, once, which files of it are
the config, the SentencePiece model and the weights. The other formats translate their names to the original ones
(one declarative table per format), so every weight enters a model through `albert.weights.loader.load_tensors`.
This module imports no TensorFlow: the command lines use it to check their flags before TensorFlow starts.
"""

import json
import os
import re

from albert.ground.errors import AlbertError
from albert.hub import huggingface_files
from albert.ground.paths import is_remote
from albert.ground.rundir import BEST_CHECKPOINT
from albert.ground.textfiles import read_text, too_deep
from albert.weights import model_garden, tf1_hub
from albert.weights.bundle_index import is_object_based, shard_sizes
from albert.weights.object_graph import checkpoint_names
from albert.ground.wire import WireError

# Model directory layouts, in the order they are recognised (the first file that says so wins).
DIRECTORY_KINDS = {
    "huggingface": "config.json with model_type albert, model.safetensors, spiece.model",
    "keras_hub": "config.json of a keras-hub AlbertBackbone, model.weights.h5, assets/tokenizer/vocabulary.spm",
    "tf1_hub": "a TF1 Hub module: tfhub_module.pb, saved_model.pb, variables/, assets/ (the original's export)",
    "saved_model": "a TF2 SavedModel with variables/: a Model Garden hub encoder or one of our exports",
    "hub_export": "our export_to_tfhub.py output: encoder/, mlm/, preprocessor/",
    "release": "albert_config.json, the SentencePiece .model, a checkpoint (the released tarballs)",
}
SAVED_MODEL_VARIABLES = os.path.join("variables", "variables")


def config_format(values) -> str:
    """"huggingface" (a `config.json` with `model_type`), "keras_hub" (a preset's, `registered_name` keras_hub>...)
    or "original" (albert_config.json's keys) for the values of a config file."""
    if isinstance(values, dict) and "model_type" in values:
        return "huggingface"
    if isinstance(values, dict) and str(values.get("registered_name", "")).startswith("keras_hub>"):
        return "keras_hub"
    return "original"


def directory_format(directory: str) -> str | None:
    """The `DIRECTORY_KINDS` key of a model directory, else None: "huggingface" / "keras_hub" for a directory whose
    config.json says so, "tf1_hub" for one with tfhub_module.pb, "saved_model" for a SavedModel with variables,
    "hub_export" for our export_to_tfhub.py output, "release" for one with albert_config.json."""
    if is_remote(directory) or not os.path.isdir(directory):
        return None
    config = os.path.join(directory, huggingface_files.CONFIG)
    if os.path.isfile(config):
        try:
            kind = config_format(json.loads(read_text(config, huggingface_files.CONFIG)))
        except json.JSONDecodeError:
            return None
        except RecursionError:
            raise AlbertError(too_deep(config)) from None
        if kind != "original":
            return kind
    if tf1_hub.is_module(directory):
        return "tf1_hub"
    if _is_saved_model(directory):
        return "saved_model"
    if _is_saved_model(os.path.join(directory, "mlm")) or _is_saved_model(os.path.join(directory, "encoder")):
        return "hub_export"
    if os.path.isfile(os.path.join(directory, "albert_config.json")):
        return "release"
    return None


def _is_saved_model(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "saved_model.pb")) and \
        os.path.isfile(os.path.join(directory, SAVED_MODEL_VARIABLES + ".index"))


def _one_model(directory: str) -> str | None:
    """The SentencePiece model of a directory (or its assets/): its one .model file, else None."""
    for folder in (directory, os.path.join(directory, "assets")):
        models = sorted(f for f in os.listdir(folder) if f.endswith(".model")) if os.path.isdir(folder) else []
        if len(models) == 1:
            return os.path.join(folder, models[0])
    return None


def directory_files(directory: str) -> dict | None:
    """{format (a DIRECTORY_KINDS key), config, spm_model (or None), weights} of a model directory, decided once from
    its files; None for a directory of no known layout. `weights` is what the loader reads: the directory for
    Hugging Face / keras-hub, the checkpoint prefix of a SavedModel or TF1 Hub module, the directory (its
    `checkpoint` file or checkpoint) for the release layout. `config` is the file AlbertConfig.from_json_file
    reads: a JSON config, or the keras_metadata.pb / saved_model.pb that holds it."""
    kind = directory_format(directory)
    if kind is None:
        return None
    if kind in SPM_FILES:
        spm = os.path.join(directory, SPM_FILES[kind])
        return {"format": kind, "config": os.path.join(directory, huggingface_files.CONFIG),
                "spm_model": spm if os.path.isfile(spm) else None, "weights": directory}
    if kind == "hub_export":  # the MLM model holds every weight of the pretraining model but the SOP head
        inner = os.path.join(directory, "mlm")
        return dict(directory_files(inner if _is_saved_model(inner) else os.path.join(directory, "encoder")),
                    format=kind)
    if kind == "tf1_hub":
        return {"format": kind, "config": tf1_hub.config_file(directory), "spm_model": tf1_hub.spm_model(directory),
                "weights": os.path.join(directory, tf1_hub.CHECKPOINT)}
    if kind == "saved_model":
        config = os.path.join(directory, "assets", "albert_config.json")
        if not os.path.isfile(config):
            config = model_garden.saved_model_config(directory) or config
        return {"format": kind, "config": config, "spm_model": _one_model(directory),
                "weights": os.path.join(directory, SAVED_MODEL_VARIABLES)}
    return {"format": kind, "config": os.path.join(directory, "albert_config.json"),
            "spm_model": _one_model(directory), "weights": directory}


def detect_format(path: str) -> str:
    """"original", "ours", "model_garden", "huggingface" or "keras_hub" for a checkpoint prefix, a directory (a model
    directory, or one whose `checkpoint` file names a checkpoint) or a weights file: from the names and config
    files, and for a TensorFlow checkpoint whether its .index holds an object graph (TF2: Model Garden's names or
    ours) or only names (the original's)."""
    if path.endswith((".safetensors", ".safetensors.index.json")):
        return "huggingface"
    if path.endswith(".weights.h5"):
        return "keras_hub"
    files = directory_files(path)
    if files and files["format"] in SPM_FILES:
        return files["format"]
    path = checkpoint_of(path, files)
    if not is_object_based(_read_bytes(path + ".index")):
        return "original"
    if not is_remote(path) and model_garden.is_model_garden(checkpoint_names(path)):
        return "model_garden"
    return "ours"


def checkpoint_of(path: str, files: dict | None = None) -> str:
    """The checkpoint prefix a path stands for: a model directory's weights (a SavedModel's or a module's
    variables; a release directory's `checkpoint` file, else model.ckpt-best, else its one named checkpoint), a
    directory's `checkpoint` file, or the path itself. `files`: its directory_files, when the caller has them."""
    if is_remote(path) or not os.path.isdir(path):
        return path
    files = files or directory_files(path)
    if files and files["weights"] != path:
        return files["weights"]
    state = os.path.join(path, "checkpoint")
    if os.path.isfile(state):
        return named_checkpoint(state)
    best = os.path.join(path, BEST_CHECKPOINT)
    found = sorted(f[:-len(".index")] for f in os.listdir(path) if f.endswith(".index"))
    if not os.path.isfile(best + ".index") and len(found) == 1 and not re.search(r"-\d+$", found[0]):
        return os.path.join(path, found[0])  # a tarball's one named checkpoint (Model Garden's bert_model.ckpt);
    return best  # a run's step checkpoints are chosen by the user (--checkpoint_name), never guessed


def _read_bytes(path: str) -> bytes:
    """A local file's bytes, or a remote one's (gs://...) through TensorFlow's file system."""
    if is_remote(path):
        import tensorflow as tf

        with tf.io.gfile.GFile(path, "rb") as f:
            return f.read()
    with open(path, "rb") as f:
        return f.read()


SPM_FILES = {"huggingface": huggingface_files.SPM_MODEL, "keras_hub": os.path.join("assets", "tokenizer", "vocabulary.spm")}


def default_model_files(init_checkpoint: str | None) -> dict:
    """{config, spm_model} that a model directory given as --init_checkpoint supplies (the command lines' defaults
    for --albert_config_file / --spm_model_file, as the original's --albert_hub_module_handle did); {} for a
    checkpoint prefix."""
    if init_checkpoint and init_checkpoint.endswith(".safetensors") and os.path.isfile(init_checkpoint):
        init_checkpoint = os.path.dirname(init_checkpoint) or "."
    files = directory_files(init_checkpoint) if init_checkpoint else None
    if files is None:
        return {}
    return {"config": files["config"], "spm_model": files["spm_model"]}


def check_checkpoint_path(path: str, flag: str) -> None:
    """Before TensorFlow starts: `path` (a flag's value) is weights of a kind the loader reads, present and whole: a
    model directory (release, Hugging Face, keras-hub), a directory whose `checkpoint` file names a checkpoint, a
    .safetensors / .weights.h5 file, or a checkpoint prefix whose .index is TensorFlow's table and whose data shards
    are all there, each as long as the index says (a copy cut short is named here, not found half-way through a
    run). Remote paths are left to the loader."""
    if is_remote(path):
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
        if kind is not None or os.path.isfile(state):
            path = checkpoint_of(path)
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
