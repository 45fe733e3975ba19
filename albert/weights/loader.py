"""The one loader: any format in (albert.weights' list), a LoadReport out."""

import dataclasses
import logging
import re

import numpy as np
import tensorflow as tf

from albert.ground.errors import AlbertError
from albert.hub.resolve import resolve
from albert.weights.formats import SPM_FILES, locate_weights
from albert.weights.huggingface import HuggingFaceTensors
from albert.weights.keras_hub import KerasHubTensors
from albert.weights.model_garden import ModelGardenTensors
from albert.weights.object_graph import checkpoint_names
from albert.weights.original import BLOCK_PREFIX, encoder_of, original_variable_map
from albert.weights.tf_checkpoints import CheckpointTensors

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
    (r"^output_|cls/squad|cls/token", "number of labels (another task's head), or hidden_size"),
]
_OPTIMIZER_SLOT = re.compile(r"(/adam_[mv]$|lamb_[mv]|/Adam(_\d+)?$|AdamWeightDecayOptimizer|^global_step$)")


@dataclasses.dataclass
class LoadReport:
    """What a load did with each name (every format's: `load_weights`, `load_tensors`)."""

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
    """Load an original (TF1 name-based) ALBERT checkpoint into an encoder or any model of `albert.tasks.<task>.model`.

    Every encoder variable must be in the checkpoint with the same shape; task-head variables the checkpoint lacks
    are reported as missing and keep their initialization. Optimizer slots and `global_step` are ignored. Raises
    `AlbertError` naming the variable, both shapes and the likely cause when the checkpoint does not fit. With
    `init_from_group0` (the original's flag) every block the checkpoint lacks is initialised from its group 0.
    """
    kind, prefix = locate_weights(path)
    if kind in SPM_FILES:
        raise AlbertError(f"{path}: a {kind.replace('_', '-')} directory, not a TF checkpoint; load it with "
                          "albert.load_weights(model, path) or Model.from_pretrained(path)")
    return load_tensors(model, CheckpointTensors(prefix), init_from_group0)


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


# Each format's reader of {original name: shape} + get(name), built from (located weights, the model's config).
_SOURCES = {
    "huggingface": HuggingFaceTensors,
    "keras_hub": KerasHubTensors,
    "model_garden": lambda path, config: ModelGardenTensors(path, tf.train.load_checkpoint(path)),
    "original": lambda path, config: CheckpointTensors(path),
}


def load_weights(model, path: str, init_from_group0: bool = False) -> LoadReport:
    """Load weights of any format into an encoder or any task model (albert.tasks.<task>.model). `path` may be any
    model reference (albert.hub.resolve: a name, a hub id or handle, a URL, an archive) or weights file. The
    report's `missing` lists what the source lacks (a task head, or the pooler of a token-level Hugging Face class),
    which keeps its initialisation; `ignored` optimizer slots, buffers and tied copies; `unused` what the model has
    no place for."""
    kind, weights = locate_weights(resolve(path))
    return load_located(model, weights, kind, init_from_group0)


def load_located(model, weights: str, kind: str, init_from_group0: bool = False) -> LoadReport:
    """`load_weights` of weights already located (albert.weights.formats.locate_weights, or a ModelDirectory's
    `weights` and `format`), so a model directory is read once.
    For our TF2 checkpoints `missing` is found exactly: each head variable holds NaN during the restore, and one
    still all NaN after it was not in the checkpoint and gets its value back."""
    if kind == "ours" and _is_run_checkpoint(weights):
        return _load_run_checkpoint(model, weights)
    source = ExportedVariables(model, weights) if kind == "ours" else _SOURCES[kind](weights, encoder_of(model).config)
    return load_tensors(model, source, init_from_group0)


def _load_run_checkpoint(model, weights: str) -> LoadReport:
    own = {id(v) for v in encoder_of(model).weights}
    heads = [v for v in model.weights if id(v) not in own]
    kept = [np.asarray(v) for v in heads]
    for variable in heads:
        variable.assign(tf.fill(variable.shape, float("nan")))
    _restore_ours(model, weights)
    missing = []
    for variable, value in zip(heads, kept):
        if np.isnan(np.asarray(variable)).all():
            variable.assign(value)
            missing.append(variable.path)
    return LoadReport(weights, [v.path for v in model.weights if v.path not in missing], missing, [], [])


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
    kind, weights = locate_weights(path)
    if kind != "ours" or not _is_run_checkpoint(weights):
        return str(load_located(model, weights, kind, init_from_group0))  # every other format, one path
    _restore_ours(model, weights)
    return f"{weights}: restored the encoder (and any head of the same name) from a TF2 checkpoint"
