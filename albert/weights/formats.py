"""What weights a path holds, read from the files without TensorFlow: the one format detector.

    original      a TF1 name-based checkpoint (the released tarballs, the variables of the original's TF1 Hub
                  modules; albert.weights.original's table)
    ours          a TF2 object-based checkpoint of run_pretraining.py or a fine-tuning runner, or the variables of
                  one of our export_to_tfhub.py SavedModels
    model_garden  a TF2 object-based checkpoint of TensorFlow Model Garden (its hub encoders' variables, its TF2
                  checkpoints; albert.weights.model_garden)
    huggingface   a Hugging Face directory (config.json + model.safetensors + spiece.model) or its .safetensors
    keras_hub     a keras-hub preset directory (config.json + model.weights.h5 [+ task.weights.h5] + assets)

A model directory is one of these layouts, recognised in this order (the first file that says so wins):

    huggingface   config.json with model_type albert, model.safetensors, spiece.model
    keras_hub     config.json of a keras-hub AlbertBackbone, model.weights.h5, assets/tokenizer/vocabulary.spm
    tf1_hub       a TF1 Hub module: tfhub_module.pb, saved_model.pb, variables/, assets/ (the original's export)
    saved_model   a TF2 SavedModel with variables/: a Model Garden hub encoder or one of our exports
    hub_export    our export_to_tfhub.py output: encoder/, mlm/, preprocessor/
    release       albert_config.json, the SentencePiece .model, a checkpoint (the released tarballs)

This module describes a model directory once, in one shape (`ModelDirectory`): `directory_files` from its files
alone, `read_model_directory` with every file checked to be there and whole (what the loader and the exporters
read). The other formats translate their names to the original ones (one declarative table per format), so every
weight enters a model through `albert.weights.loader.load_tensors`. This module imports no TensorFlow: the command
lines use it to check their flags before TensorFlow starts.
"""

import dataclasses
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
from albert.text.tokenization import load_sentencepiece, vocab_beside
from albert.weights.huggingface import weight_files

SAVED_MODEL_VARIABLES = os.path.join("variables", "variables")
SPM_FILES = {"huggingface": huggingface_files.SPM_MODEL,
             "keras_hub": os.path.join("assets", "tokenizer", "vocabulary.spm")}


@dataclasses.dataclass(frozen=True)
class ModelDirectory:
    """What a model directory holds, found in one pass over its files: its `layout` (the module's list), the `config`
    file AlbertConfig.from_json_file reads (a JSON config, or the keras_metadata.pb / saved_model.pb that holds it),
    its SentencePiece model (and the .vocab beside it), the `weights` the loader reads (the directory for Hugging
    Face / keras-hub, a checkpoint prefix otherwise) and their `format` (locate_weights'; None until
    `read_model_directory` has checked the weights, except for Hugging Face and keras-hub, whose layout is their
    format)."""

    path: str
    layout: str
    config: str
    spm_model: str | None
    weights: str
    spm_vocab: str | None = None
    format: str | None = None


def config_format(values) -> str:
    """"huggingface" (a `config.json` with `model_type`), "keras_hub" (a preset's, `registered_name` keras_hub>...)
    or "original" (albert_config.json's keys) for the values of a config file."""
    if isinstance(values, dict) and "model_type" in values:
        return "huggingface"
    if isinstance(values, dict) and str(values.get("registered_name", "")).startswith("keras_hub>"):
        return "keras_hub"
    return "original"


def directory_format(directory: str) -> str | None:
    """The layout of a model directory (the module's list), else None: "huggingface" / "keras_hub" for a directory whose
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


def directory_files(directory: str) -> ModelDirectory | None:
    """The ModelDirectory of a directory of a known layout, found from its files alone (nothing checked to be whole:
    `read_model_directory` does that), else None."""
    kind = directory_format(directory)
    if kind is None:
        return None
    if kind in SPM_FILES:
        spm = os.path.join(directory, SPM_FILES[kind])
        return ModelDirectory(directory, kind, os.path.join(directory, huggingface_files.CONFIG),
                              spm if os.path.isfile(spm) else None, directory, format=kind)
    if kind == "hub_export":  # the MLM model holds every weight of the pretraining model but the SOP head
        inner = os.path.join(directory, "mlm")
        found = directory_files(inner if _is_saved_model(inner) else os.path.join(directory, "encoder"))
        return dataclasses.replace(found, path=directory, layout=kind)
    if kind == "tf1_hub":
        return ModelDirectory(directory, kind, tf1_hub.config_file(directory), tf1_hub.spm_model(directory),
                              os.path.join(directory, tf1_hub.CHECKPOINT))
    if kind == "saved_model":
        config = os.path.join(directory, "assets", "albert_config.json")
        if not os.path.isfile(config):
            config = model_garden.saved_model_config(directory) or config
        return ModelDirectory(directory, kind, config, _one_model(directory),
                              os.path.join(directory, SAVED_MODEL_VARIABLES))
    return ModelDirectory(directory, kind, os.path.join(directory, "albert_config.json"), _one_model(directory),
                          directory)


ARGUMENTS = {"directory": "the model directory", "checkpoint": "checkpoint_name=", "spm": "spm_model_file="}


def read_model_directory(directory: str, checkpoint_name: str = BEST_CHECKPOINT, spm_model_file: str | None = None,
             names: dict = ARGUMENTS) -> ModelDirectory:
    """The ModelDirectory of a model directory, every file it names checked to be there (and the checkpoint to be
    whole), its weights' format detected: what the loader and the exporters read. `checkpoint_name` (the release
    layout's checkpoint prefix) and `spm_model_file` (another SentencePiece model) are the caller's choices;
    `names`: how the errors call the directory and those two (a command line passes its flags' names)."""
    if not os.path.isdir(directory):
        raise AlbertError(f"{directory}: {names['directory']} not found")
    found = directory_files(directory)
    kind = found.layout if found else None
    if kind is None:
        raise AlbertError(f"{directory}/albert_config.json: not found; {names['directory']} must hold "
                          "albert_config.json, the SentencePiece .model and the checkpoint (or be a Hugging Face "
                          "or keras-hub ALBERT directory, with its config.json, a TF Hub module or a SavedModel)")
    if kind in ("tf1_hub", "saved_model", "hub_export"):
        return _described_saved_model(found, spm_model_file, names)
    if kind in SPM_FILES:
        spm_model_file = spm_model_file or os.path.join(directory, SPM_FILES[kind])
        if not os.path.isfile(spm_model_file):
            raise AlbertError(f"{spm_model_file}: not found; pass {names['spm']}")
        if kind == "huggingface":
            weight_files(directory)
        elif not os.path.isfile(os.path.join(directory, "model.weights.h5")):
            raise AlbertError(f"{directory}: no model.weights.h5 (a keras-hub preset holds config.json, "
                              "model.weights.h5 and assets/tokenizer/vocabulary.spm)")
        return dataclasses.replace(found, spm_model=spm_model_file)
    if spm_model_file is None:
        models = sorted(f for f in os.listdir(directory) if f.endswith(".model"))
        if not models:
            raise AlbertError(f"{directory}: no SentencePiece .model file; pass {names['spm']}")
        if len(models) > 1:
            raise AlbertError(f"{directory}: {len(models)} SentencePiece .model files ({', '.join(models)}); pass "
                              f"{names['spm']}")
        spm_model_file = os.path.join(directory, models[0])
    elif not os.path.isfile(spm_model_file):
        raise AlbertError(f"{spm_model_file}: {names['spm']} not found")
    vocab = vocab_beside(spm_model_file)
    checkpoint = os.path.join(directory, checkpoint_name)
    if os.path.isdir(checkpoint):
        checkpoint = checkpoint_of(checkpoint)  # a directory's `checkpoint` file names its checkpoint
    if checkpoint_name == BEST_CHECKPOINT and not os.path.exists(checkpoint + ".index"):
        checkpoint = checkpoint_of(directory, found)  # the directory's `checkpoint` file, or its one checkpoint
    if not os.path.exists(checkpoint + ".index"):
        present = sorted(f[:-len(".index")] for f in os.listdir(directory) if f.endswith(".index"))
        raise AlbertError(f"{checkpoint}.index: checkpoint not found; pass {names['checkpoint']}"
                          + (f" (found: {', '.join(present)})" if present else ""))
    check_checkpoint_path(checkpoint, names["checkpoint"])
    return dataclasses.replace(found, spm_model=spm_model_file,
                               spm_vocab=vocab if vocab and os.path.isfile(vocab) else None, weights=checkpoint,
                               format=_checkpoint_format(checkpoint))


def _described_saved_model(found: ModelDirectory, spm_model_file: str | None, names: dict) -> ModelDirectory:
    """read_model_directory for a TF1 Hub module, a SavedModel or our export_to_tfhub.py output."""
    if not os.path.isfile(found.config):
        raise AlbertError(f"{found.path}: a {found.layout.replace('_', ' ')} directory without a config "
                          "(no assets/albert_config.json or keras_metadata.pb); it cannot be read as ALBERT")
    spm_model_file = spm_model_file or found.spm_model
    if not spm_model_file or not os.path.isfile(spm_model_file):
        raise AlbertError(f"{found.path}: no SentencePiece .model file in assets/; pass {names['spm']}")
    vocab = vocab_beside(spm_model_file)
    check_checkpoint_path(found.weights, names["directory"])
    return dataclasses.replace(found, spm_model=spm_model_file,
                               spm_vocab=vocab if vocab and os.path.isfile(vocab) else None,
                               format=_checkpoint_format(found.weights))


def check_vocabulary(files: ModelDirectory, config) -> None:
    """The SentencePiece model and the config of a model directory must agree on the vocabulary size."""
    pieces = load_sentencepiece(files.spm_model).GetPieceSize()
    if pieces != config.vocab_size:
        raise AlbertError(f"{files.spm_model} has {pieces} pieces but {files.config} says vocab_size "
                          f"{config.vocab_size}: they are not from the same model")


def locate_weights(path: str) -> tuple[str, str]:
    """(format, weights) for a checkpoint prefix, a directory (a model directory, or one whose `checkpoint` file
    names a checkpoint) or a weights file. The format is "original", "ours", "model_garden", "huggingface" or
    "keras_hub": from the names and config files, and for a TensorFlow checkpoint whether its .index holds an
    object graph (TF2: Model Garden's names or ours) or only names (the original's). The weights are what that
    format's reader opens: a Hugging Face directory or file, a keras-hub directory, or the exact checkpoint prefix,
    checked to be there. The one place that decides what checkpoint a path stands for."""
    if path.endswith((".safetensors", ".safetensors.index.json")):
        return "huggingface", path
    if path.endswith(".weights.h5"):
        return "keras_hub", os.path.dirname(path) or "."
    files = directory_files(path)
    if files and files.layout in SPM_FILES:
        return files.layout, path
    prefix = _remote_checkpoint(path) if is_remote(path) else checkpoint_of(path, files)
    if not is_remote(prefix) and os.path.isdir(path) and files is None and not os.path.isfile(prefix + ".index"):
        raise AlbertError(f"{path}: directory holds no checkpoint (no `checkpoint` file); pass the prefix, e.g. "
                          f"DIR/{BEST_CHECKPOINT}")
    if not _exists(prefix + ".index"):
        raise AlbertError(f"{prefix}: checkpoint not found (no {os.path.basename(prefix)}.index); pass a checkpoint "
                          f"prefix such as DIR/{BEST_CHECKPOINT}")
    return _checkpoint_format(prefix), prefix


def _remote_checkpoint(path: str) -> str:
    """A remote (gs://...) directory's latest checkpoint, or the path itself, through TensorFlow's file system."""
    import tensorflow as tf

    if not tf.io.gfile.isdir(path):
        return path
    latest = tf.train.latest_checkpoint(path)
    if latest is None:
        raise AlbertError(f"{path}: directory holds no checkpoint (no `checkpoint` file); pass the prefix, e.g. "
                          f"DIR/{BEST_CHECKPOINT}")
    return latest


def _exists(path: str) -> bool:
    if is_remote(path):
        import tensorflow as tf

        return tf.io.gfile.exists(path)
    return os.path.isfile(path)


def _checkpoint_format(prefix: str) -> str:
    """"original", "model_garden" or "ours" for a TensorFlow checkpoint prefix: whether its .index holds an object
    graph (TF2), and whose names it holds."""
    if not is_object_based(_read_bytes(prefix + ".index")):
        return "original"
    if not is_remote(prefix) and model_garden.is_model_garden(checkpoint_names(prefix)):
        return "model_garden"
    return "ours"


def checkpoint_of(path: str, files: ModelDirectory | None = None) -> str:
    """The checkpoint prefix a path stands for: a model directory's weights (a SavedModel's or a module's
    variables; a release directory's `checkpoint` file, else model.ckpt-best, else its one named checkpoint), a
    directory's `checkpoint` file, or the path itself. `files`: its directory_files, when the caller has them."""
    if is_remote(path) or not os.path.isdir(path):
        return path
    files = files or directory_files(path)
    if files and files.weights != path:
        return files.weights
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



def default_model_files(init_checkpoint: str | None) -> dict:
    """{config, spm_model} that a model directory given as --init_checkpoint supplies (the command lines' defaults
    for --albert_config_file / --spm_model_file, as the original's --albert_hub_module_handle did); {} for a
    checkpoint prefix."""
    if init_checkpoint and init_checkpoint.endswith(".safetensors") and os.path.isfile(init_checkpoint):
        init_checkpoint = os.path.dirname(init_checkpoint) or "."
    files = directory_files(init_checkpoint) if init_checkpoint else None
    if files is None:
        return {}
    return {"config": files.config, "spm_model": files.spm_model}


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
