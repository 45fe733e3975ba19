"""The one loader: any format in (albert.weights' list), a LoadReport out."""

import dataclasses
import logging
import os
import re

import numpy as np
import tensorflow as tf

from albert.ground.errors import AlbertError
from albert.hub.resolve import resolve
from albert.text.tokenization import load_sentencepiece, vocab_beside
from albert.weights import huggingface, keras_hub
from albert.ground.rundir import BEST_CHECKPOINT
from albert.weights.formats import (
    SPM_FILES,
    check_checkpoint_path,
    checkpoint_of,
    detect_format,
    directory_files,
    directory_format,
)
from albert.weights.huggingface import HuggingFaceTensors, weight_files
from albert.weights.keras_hub import KerasHubTensors
from albert.weights.model_garden import ModelGardenTensors
from albert.weights.object_graph import checkpoint_names
from albert.weights.original import BLOCK_PREFIX, encoder_of, original_variable_map
from albert.weights.tf_checkpoints import CheckpointTensors, resolve_checkpoint_path

log = logging.getLogger("albert")


# Why a variable's shape can differ from the checkpoint's: the config key that sets it.
_SHAPE_CAUSES = [
    (r"word_embeddings", "vocab_size / embedding_size"),
    (r"position_embeddings", "max_position_embeddings / embedding_size"),
    (r"token_type_embeddings", "type_vocab_size / embedding_size"),
    (r"embeddings/LayerNorm|embedding_hidden_mapping_in", "embedding_size / hidden_size"),
    (r"ffn_1", "intermediate_size / hidden_size"),
    (r"cls/predictions/output_bias", "vocab_size"),
    (r"cls/predictions", "embedding_size / hidden_size"),
    (r"^output_|cls/squad", "the number of labels of the task, or hidden_size"),
]
_OPTIMIZER_SLOT = re.compile(r"(/adam_[mv]$|lamb_[mv]|/Adam(_\d+)?$|AdamWeightDecayOptimizer|^global_step$)")


@dataclasses.dataclass
class LoadReport:
    """What `load_original_checkpoint` did with each name."""

    path: str
    loaded: list
    missing: list  # model variables the checkpoint lacks (task heads that stay freshly initialized)
    ignored: list  # optimizer slots and global_step
    unused: list  # other checkpoint variables the model has no place for (e.g. another task's head)

    def __str__(self):
        lines = [f"{self.path}: loaded {len(self.loaded)}, missing {len(self.missing)}, "
                 f"ignored {len(self.ignored)} (optimizer slots / global_step), unused {len(self.unused)}"]
        for label, names in (("missing", self.missing), ("ignored", self.ignored), ("unused", self.unused)):
            if names:
                lines.append(f"  {label}: {', '.join(names)}")
        return "\n".join(lines)


def _shape_cause(name: str) -> str:
    for pattern, keys in _SHAPE_CAUSES:
        if re.search(pattern, name):
            return f"the checkpoint was made with another {keys}"
    return "the checkpoint was made with another hidden_size / num_attention_heads"


def _block_key(name: str):
    match = re.match(re.escape(BLOCK_PREFIX) + r"((?:group|layer)_\d+/inner_group_\d+)/", name)
    return match.group(1) if match else None


def _group0_name(name: str) -> str:
    """The original's --init_from_group0 fallback: any block's variable from group 0 of the checkpoint."""
    return re.sub(r"/(?:group|layer)_\d+/", "/group_0/", name, count=1)


def load_original_checkpoint(model, path: str, init_from_group0: bool = False) -> LoadReport:
    """Load an original (TF1 name-based) ALBERT checkpoint into an encoder or any model of `albert.model.task_models`.

    Every encoder variable must be in the checkpoint with the same shape; task-head variables the checkpoint lacks
    are reported as missing and keep their initialization. Optimizer slots and `global_step` are ignored. Raises
    `AlbertError` naming the variable, both shapes and the likely cause when the checkpoint does not fit. With
    `init_from_group0` (the original's flag) every block the checkpoint lacks is initialised from its group 0.
    """
    return load_tensors(model, CheckpointTensors(path), init_from_group0)


def load_tensors(model, source, init_from_group0: bool = False) -> LoadReport:
    """Assign every variable of `model` from `source` ({original name: shape} + get(name)), checking shapes;
    the one place where weights of any format enter a model."""
    path, ckpt_shapes = source.path, source.shapes
    names = original_variable_map(model)
    config = encoder_of(model).config
    loaded, missing = [], []
    for name, variable in sorted(names.items()):
        source_name = name
        if name not in ckpt_shapes and init_from_group0 and _block_key(name):
            source_name = _group0_name(name)
        if source_name not in ckpt_shapes:
            if name.startswith("bert/") and not name.startswith(tuple(source.optional)):
                raise AlbertError(_missing_encoder_message(path, name, ckpt_shapes, config, source))
            missing.append(name)
            continue
        want, have = tuple(variable.shape), tuple(ckpt_shapes[source_name])
        if want != have:
            described = source.describe(name) if hasattr(source, "describe") else name
            raise AlbertError(f"{path}: variable {described} has shape {list(have)} in the checkpoint but "
                              f"{list(want)} in the model: {_shape_cause(name)}; use the {source.config_name} "
                              "that came with the checkpoint")
        loaded.append((name, variable, source_name))
    for _, variable, source_name in loaded:  # every shape compared first: nothing is read from a file it refuses
        variable.assign(np.asarray(source.get(source_name)).astype(np.dtype(variable.dtype)))
    loaded = [name for name, _, _ in loaded]
    ignored, unused = list(source.ignored), list(source.unused)
    used = set(loaded) | ({_group0_name(n) for n in loaded if _block_key(n)} if init_from_group0 else set())
    for name in sorted(ckpt_shapes):
        if name in used:
            continue
        if _OPTIMIZER_SLOT.search(name):
            ignored.append(name)
        elif name.startswith("bert/"):
            key = _block_key(name)
            raise AlbertError(f"{path}: the checkpoint has {name} but the model has no "
                              f"{'block ' + key if key else 'such variable'}: the checkpoint was made with another "
                              f"num_hidden_groups / inner_group_num / sharing / embedding_size (model: "
                              f"{config.num_hidden_groups} / {config.inner_group_num} / {config.sharing} / "
                              f"{config.embedding_size}); use the {source.config_name} that came with it")
        else:
            unused.append(name)
    report = LoadReport(path, loaded, missing, ignored, unused)
    log.info("%s", report)
    return report


def _missing_encoder_message(path, name, ckpt_shapes, config, source=None) -> str:
    if "embedding_hidden_mapping_in" in name:
        cause = ("the checkpoint has no E->H projection, so it was made with embedding_size == hidden_size "
                 f"(model: {config.embedding_size} != {config.hidden_size})")
    elif _block_key(name) in {_block_key(n) for n in ckpt_shapes}:
        cause = f"the checkpoint has block {_block_key(name)} but not this tensor: it is incomplete or damaged"
    elif _block_key(name):
        blocks = sorted({k for k in map(_block_key, ckpt_shapes) if k})
        cause = (f"the checkpoint's blocks are {', '.join(blocks) or 'none'}: it was made with another "
                 f"num_hidden_groups / inner_group_num / sharing (model: {config.num_hidden_groups} / "
                 f"{config.inner_group_num} / {config.sharing})")
    else:
        cause = "it is not an ALBERT checkpoint of the original layout"
    described = source.describe(name) if hasattr(source, "describe") else name
    return f"{path}: the model needs {described} but the checkpoint lacks it: {cause}"


def _source(model, path: str, kind: str):
    config = encoder_of(model).config
    if kind == "huggingface":
        return HuggingFaceTensors(path, config)
    if kind == "keras_hub":
        return KerasHubTensors(path if os.path.isdir(path) else os.path.dirname(path), config)
    path = resolve_checkpoint_path(checkpoint_of(path))
    if kind == "model_garden":
        return ModelGardenTensors(path, tf.train.load_checkpoint(path))
    return CheckpointTensors(path)


def load_weights(model, path: str, init_from_group0: bool = False, kind: str | None = None) -> LoadReport:
    """Load weights of any format into an encoder or any task model (albert.model.task_models). The report's
    `missing` lists what the source lacks (a task head, or the pooler of a token-level Hugging Face class), which
    keeps its initialisation; `ignored` optimizer slots, buffers and tied copies; `unused` what the model has no
    place for.
    For our TF2 checkpoints `missing` is found exactly: each head variable holds NaN during the restore, and one
    still all NaN after it was not in the checkpoint and gets its value back. `path` may be any model reference
    (albert.hub.resolve: a name, a hub id or handle, a URL, an archive). `kind` is the format when the caller has
    already detected it (`model_directory_files`'s `format`), so a model directory is classified once."""
    if kind is None:
        path = resolve(path)
        kind = detect_format(path)
    if kind != "ours":
        return load_tensors(model, _source(model, path, kind), init_from_group0)
    path = resolve_checkpoint_path(checkpoint_of(path))
    if not _is_run_checkpoint(path):
        return load_tensors(model, ExportedVariables(model, path), init_from_group0)
    own = {id(v) for v in encoder_of(model).weights}
    heads = [v for v in model.weights if id(v) not in own]
    kept = [np.asarray(v) for v in heads]
    for variable in heads:
        variable.assign(tf.fill(variable.shape, float("nan")))
    _restore_ours(model, path)
    missing = []
    for variable, value in zip(heads, kept):
        if np.isnan(np.asarray(variable)).all():
            variable.assign(value)
            missing.append(variable.path)
    return LoadReport(path, [v.path for v in model.weights if v.path not in missing], missing, [], [])


def _is_run_checkpoint(path: str) -> bool:
    """A checkpoint of our training loop (the model tracked as `model/...`), not an export's variable list."""
    return any(name.startswith("model/") for name, _ in tf.train.list_variables(path))


class ExportedVariables:
    """The variables of one of our SavedModels (export_to_tfhub.py's encoder / mlm) seen as original names, for
    `load_tensors`: each saved variable's name is its Keras path, which names the same weight in a model of the
    same config once the model's own name (its first part: `albert_pretrainer`, `albert_classifier`, ...) is set
    aside."""

    config_name = "albert_config.json in the export's assets/"
    optional = ()

    def __init__(self, model, path: str):
        self.path, self._reader = path, tf.train.load_checkpoint(path)
        shapes = self._reader.get_variable_to_shape_map()
        ours = {variable.path.split("/", 1)[-1]: name for name, variable in original_variable_map(model).items()}
        self.shapes, self._keys, self.ignored, self.unused = {}, {}, [], []
        for key, full_name in sorted(checkpoint_names(path).items()):
            name = ours.get(full_name.split(":")[0].split("/", 1)[-1])
            if name is None:
                self.unused.append(full_name)
            elif name not in self._keys:
                self._keys[name], self.shapes[name] = key, tuple(shapes[key])

    def get(self, name: str):
        return self._reader.get_tensor(self._keys[name])


def _restore_ours(model, path: str):
    encoder = encoder_of(model)
    try:
        status = tf.train.Checkpoint(model=tf.train.Checkpoint(encoder=encoder)).read(path)
        status.expect_partial()
        status.assert_existing_objects_matched()
        if encoder is not model:  # heads of the same name (a fine-tuned checkpoint of the same task)
            tf.train.Checkpoint(model=model).read(path).expect_partial()
    except (AssertionError, ValueError, tf.errors.OpError) as e:
        raise AlbertError(f"{path}: the checkpoint does not fit this model ({str(e).splitlines()[0][:200]}); use "
                          "the albert_config.json it was trained with") from None


def init_from_checkpoint(model, path: str, init_from_group0: bool = False) -> str:
    """Warm-start any model (the runners' --init_checkpoint) from weights of any format; for our TF2 checkpoints
    the shared `encoder` and any head of the same name are restored. Returns a summary."""
    kind = detect_format(path)
    checkpoint = resolve_checkpoint_path(checkpoint_of(path)) if kind == "ours" else None
    if checkpoint is None or not _is_run_checkpoint(checkpoint):
        return str(load_weights(model, path, init_from_group0, kind))  # every other format, one path
    _restore_ours(model, checkpoint)
    return f"{checkpoint}: restored the encoder (and any head of the same name) from a TF2 checkpoint"


CLI_NAMES = {"directory": "--albert_directory", "checkpoint": "--checkpoint_name", "spm": "--spm_model_file"}


def model_directory_files(directory: str, checkpoint_name: str = BEST_CHECKPOINT,
                          spm_model_file: str | None = None, names: dict = CLI_NAMES) -> dict:
    """{format, config, spm_model, spm_vocab (or None), checkpoint} of a model directory: the release layout
    (albert_config.json, 30k-clean.model / .vocab, `checkpoint_name`), a Hugging Face directory (config.json,
    spiece.model, model.safetensors) or a keras-hub preset (config.json, assets/tokenizer/vocabulary.spm,
    model.weights.h5); each checked to exist. `names` are how the errors call the three arguments."""
    if not os.path.isdir(directory):
        raise AlbertError(f"{directory}: {names['directory']} not found")
    kind = directory_format(directory)
    if kind is None:
        raise AlbertError(f"{directory}/albert_config.json: not found; {names['directory']} must hold "
                          "albert_config.json, the SentencePiece .model and the checkpoint (or be a Hugging Face "
                          "or keras-hub ALBERT directory, with its config.json, a TF Hub module or a SavedModel)")
    if kind in ("tf1_hub", "saved_model", "hub_export"):
        return _hub_directory_files(directory, spm_model_file, names)
    if kind in SPM_FILES:
        spm_model_file = spm_model_file or os.path.join(directory, SPM_FILES[kind])
        if not os.path.isfile(spm_model_file):
            raise AlbertError(f"{spm_model_file}: not found; pass {names['spm']}")
        if kind == "huggingface":
            weight_files(directory)
        elif not os.path.isfile(os.path.join(directory, "model.weights.h5")):
            raise AlbertError(f"{directory}: no model.weights.h5 (a keras-hub preset holds config.json, "
                              "model.weights.h5 and assets/tokenizer/vocabulary.spm)")
        return {"format": kind, "config": os.path.join(directory, "config.json"), "spm_model": spm_model_file,
                "spm_vocab": None, "checkpoint": directory}
    config = os.path.join(directory, "albert_config.json")
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
    if checkpoint_name == BEST_CHECKPOINT and not tf.io.gfile.exists(checkpoint + ".index"):
        checkpoint = checkpoint_of(directory)  # the directory's `checkpoint` file, or its one checkpoint
    if not tf.io.gfile.exists(checkpoint + ".index"):
        found = sorted(f[:-len(".index")] for f in os.listdir(directory) if f.endswith(".index"))
        raise AlbertError(f"{checkpoint}.index: checkpoint not found; pass {names['checkpoint']}"
                          + (f" (found: {', '.join(found)})" if found else ""))
    checkpoint = resolve_checkpoint_path(checkpoint)
    check_checkpoint_path(checkpoint, names["checkpoint"])
    return {"format": detect_format(checkpoint), "config": config,
            "spm_model": spm_model_file, "spm_vocab": vocab if vocab and os.path.isfile(vocab) else None,
            "checkpoint": checkpoint}


def _hub_directory_files(directory: str, spm_model_file: str | None, names: dict) -> dict:
    """model_directory_files of a TF1 Hub module, a SavedModel or our export_to_tfhub.py output."""
    files = directory_files(directory)
    if not os.path.isfile(files["config"]):
        raise AlbertError(f"{directory}: a {files['format'].replace('_', ' ')} directory without a config "
                          "(no assets/albert_config.json or keras_metadata.pb); it cannot be read as ALBERT")
    spm_model_file = spm_model_file or files["spm_model"]
    if not spm_model_file or not os.path.isfile(spm_model_file):
        raise AlbertError(f"{directory}: no SentencePiece .model file in assets/; pass {names['spm']}")
    vocab = vocab_beside(spm_model_file)
    check_checkpoint_path(files["weights"], names["directory"])
    return {"format": detect_format(files["weights"]), "config": files["config"], "spm_model": spm_model_file,
            "spm_vocab": vocab if vocab and os.path.isfile(vocab) else None, "checkpoint": files["weights"]}


def check_vocabulary(files: dict, config) -> None:
    """The SentencePiece model and the config of a model directory must agree on the vocabulary size."""
    pieces = load_sentencepiece(files["spm_model"]).GetPieceSize()
    if pieces != config.vocab_size:
        raise AlbertError(f"{files['spm_model']} has {pieces} pieces but {files['config']} says vocab_size "
                          f"{config.vocab_size}: they are not from the same model")


def model_class_for(files: dict) -> tuple:
    """(task model class name, constructor arguments, Hugging Face architecture or None) that the weights of
    a model directory hold: from config.json's `architectures` (Hugging Face), task.json (keras-hub), or the head
    variables of a checkpoint."""
    directory = files["checkpoint"]
    if files["format"] == "huggingface":
        values = huggingface.read_config(directory)
        name = huggingface.architecture_of(values) or "AlbertModel"
        if name not in huggingface.ARCHITECTURES:
            raise AlbertError(f"{files['config']}: architecture {name} has no counterpart here (supported: "
                              f"{', '.join(huggingface.ARCHITECTURES)})")
        model_class = huggingface.ARCHITECTURES[name].model_class
        arguments = {"num_labels": huggingface.num_labels(values)} if model_class == "AlbertClassifier" else {}
        if model_class in ("AlbertClassifier", "AlbertMultipleChoice"):
            arguments["dropout_prob"] = values.get("classifier_dropout_prob", 0.1)
        return model_class, arguments, name
    if files["format"] == "keras_hub":
        task, classes = keras_hub.task_of(directory)
        if task is None:
            return "AlbertEncoder", {}, None
        if task not in keras_hub.TASKS:
            raise AlbertError(f"{directory}/task.json: keras-hub task {task} has no counterpart here (supported: "
                              f"{', '.join(keras_hub.TASKS)})")
        model_class = keras_hub.TASKS[task][0]
        return model_class, ({"num_labels": classes} if model_class == "AlbertClassifier" else {}), None
    return _class_from_checkpoint(files["checkpoint"])


def _class_from_checkpoint(path: str) -> tuple:
    shapes = tf.train.load_checkpoint(path).get_variable_to_shape_map()
    # The keys, and an object-based checkpoint's variable names (a SavedModel's keys say only `variables/<i>`).
    names = " ".join(shapes) + " " + " ".join(checkpoint_names(path).values())
    for marker, model_class in (("cls/predictions", "AlbertPretrainer"), ("mlm_head", "AlbertPretrainer"),
                                ("albert_pretrainer/predictions", "AlbertPretrainer"),
                                ("start_logits", "AlbertSquadV2"), ("squad_head/end_dense_0", "AlbertSquadV2"),
                                ("cls/squad", "AlbertSquadV1"), ("squad_head", "AlbertSquadV1"),
                                ("choice_head", "AlbertMultipleChoice")):
        if marker in names:
            return model_class, {}, None
    for name, shape in shapes.items():
        if name == "output_weights" or ("classifier_head/output_weights" in name and "OPTIMIZER" not in name):
            if shape[0] == 1 and name == "output_weights":
                raise AlbertError(f"{path}: output_weights [1, H] is a multiple-choice (RACE) head or a regression "
                                  "classifier; pass --architecture AlbertForMultipleChoice or "
                                  "AlbertForSequenceClassification")
            return "AlbertClassifier", {"num_labels": shape[0]}, None
    return "AlbertEncoder", {}, None
