"""Original TF1 checkpoints in and out, through ONE declarative name table (the other formats translate to it).

Each row pairs an original variable name with the attribute path of the matching Keras weight. The layouts are
the same on both sides (Dense kernels [in, out]; `output_weights` [classes, H] kept as such by our heads), so no
row needs a reshape. Encoder block rows are relative to `bert/encoder/transformer/<block>/`, where <block> is
each key of the encoder's `attention_blocks` / `ffn_blocks` (`group_<g>/inner_group_<k>`, or
`layer_<l>/inner_group_<k>` for parts that `sharing` leaves unshared).
"""

import dataclasses
import logging
import os
import re

import numpy as np
import tensorflow as tf

from albert.errors import AlbertError
from albert.weights import directory_format
from albert.modeling import AlbertEncoder

log = logging.getLogger("albert")

ENCODER_TABLE = [
    ("bert/embeddings/word_embeddings", "embeddings.word_embeddings"),
    ("bert/embeddings/token_type_embeddings", "embeddings.token_type_embeddings"),
    ("bert/embeddings/position_embeddings", "embeddings.position_embeddings"),
    ("bert/embeddings/LayerNorm/beta", "embeddings.layer_norm.beta"),
    ("bert/embeddings/LayerNorm/gamma", "embeddings.layer_norm.gamma"),
    ("bert/encoder/embedding_hidden_mapping_in/kernel", "embedding_projection.kernel"),  # only when E != H
    ("bert/encoder/embedding_hidden_mapping_in/bias", "embedding_projection.bias"),
    ("bert/pooler/dense/kernel", "pooler.kernel"),
    ("bert/pooler/dense/bias", "pooler.bias"),
]
BLOCK_PREFIX = "bert/encoder/transformer/"
ATTENTION_TABLE = [
    ("attention_1/self/query/kernel", "query.kernel"),
    ("attention_1/self/query/bias", "query.bias"),
    ("attention_1/self/key/kernel", "key.kernel"),
    ("attention_1/self/key/bias", "key.bias"),
    ("attention_1/self/value/kernel", "value.kernel"),
    ("attention_1/self/value/bias", "value.bias"),
    ("attention_1/output/dense/kernel", "output_dense.kernel"),
    ("attention_1/output/dense/bias", "output_dense.bias"),
    ("LayerNorm/beta", "layer_norm.beta"),
    ("LayerNorm/gamma", "layer_norm.gamma"),
]
FFN_TABLE = [
    ("ffn_1/intermediate/dense/kernel", "intermediate.kernel"),
    ("ffn_1/intermediate/dense/bias", "intermediate.bias"),
    ("ffn_1/intermediate/output/dense/kernel", "output_dense.kernel"),
    ("ffn_1/intermediate/output/dense/bias", "output_dense.bias"),
    ("LayerNorm_1/beta", "layer_norm.beta"),
    ("LayerNorm_1/gamma", "layer_norm.gamma"),
]
HEAD_TABLES = {
    "mlm": [
        ("cls/predictions/transform/dense/kernel", "mlm_head.dense.kernel"),
        ("cls/predictions/transform/dense/bias", "mlm_head.dense.bias"),
        ("cls/predictions/transform/LayerNorm/beta", "mlm_head.layer_norm.beta"),
        ("cls/predictions/transform/LayerNorm/gamma", "mlm_head.layer_norm.gamma"),
        ("cls/predictions/output_bias", "mlm_head.output_bias"),
    ],
    "sop": [
        ("cls/seq_relationship/output_weights", "sop_head.output_weights"),
        ("cls/seq_relationship/output_bias", "sop_head.output_bias"),
    ],
    "classifier": [
        ("output_weights", "classifier_head.output_weights"),
        ("output_bias", "classifier_head.output_bias"),
    ],
    "squad_v1": [
        ("cls/squad/output_weights", "squad_head.output_weights"),
        ("cls/squad/output_bias", "squad_head.output_bias"),
    ],
    "squad_v2": [
        ("start_logits/dense/kernel", "squad_head.start_dense.kernel"),
        ("start_logits/dense/bias", "squad_head.start_dense.bias"),
        ("end_logits/dense_0/kernel", "squad_head.end_dense_0.kernel"),
        ("end_logits/dense_0/bias", "squad_head.end_dense_0.bias"),
        ("end_logits/LayerNorm/beta", "squad_head.end_layer_norm.beta"),
        ("end_logits/LayerNorm/gamma", "squad_head.end_layer_norm.gamma"),
        ("end_logits/dense_1/kernel", "squad_head.end_dense_1.kernel"),
        ("end_logits/dense_1/bias", "squad_head.end_dense_1.bias"),
        ("answer_class/dense_0/kernel", "squad_head.answer_dense_0.kernel"),
        ("answer_class/dense_0/bias", "squad_head.answer_dense_0.bias"),
        ("answer_class/dense_1/kernel", "squad_head.answer_dense_1.kernel"),
    ],
    "choice": [
        ("output_weights", "choice_head.output_weights"),
        ("output_bias", "choice_head.output_bias"),
    ],
}

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


def _resolve(root, path: str):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _encoder_of(model) -> AlbertEncoder:
    return model if isinstance(model, AlbertEncoder) else model.encoder


def original_variable_map(model) -> dict:
    """{original TF1 name: Keras variable} for an encoder or any model of `albert.models`."""
    encoder = _encoder_of(model)
    names = {}
    for name, path in ENCODER_TABLE:
        variable = _resolve(encoder, path)
        if variable is not None:
            names[name] = variable
    for blocks, table in ((encoder.attention_blocks, ATTENTION_TABLE), (encoder.ffn_blocks, FFN_TABLE)):
        for key, block in blocks.items():
            for suffix, path in table:
                names[f"{BLOCK_PREFIX}{key}/{suffix}"] = _resolve(block, path)
    for head in getattr(model, "checkpoint_heads", ()):
        for name, path in HEAD_TABLES[head]:
            names[name] = _resolve(model, path)
    return names


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


def resolve_checkpoint_path(path: str) -> str:
    """A checkpoint prefix, or a directory whose `checkpoint` file names the latest one."""
    if tf.io.gfile.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        kind = directory_format(path)
        if latest is None and kind in ("huggingface", "keras_hub"):
            raise AlbertError(f"{path}: a {kind.replace('_', '-')} directory, not a TF checkpoint; load it with "
                              "albert.load_weights(model, path) or Model.from_pretrained(path)")
        if latest is None:
            raise AlbertError(f"{path}: directory holds no checkpoint (no `checkpoint` file); pass the prefix, "
                              "e.g. DIR/model.ckpt-best")
        return latest
    if not tf.io.gfile.exists(path + ".index"):
        raise AlbertError(f"{path}: checkpoint not found (no {os.path.basename(path)}.index); pass a "
                          "checkpoint prefix such as DIR/model.ckpt-best")
    return path


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


class CheckpointTensors:
    """A TF1 name-based checkpoint seen as {original name: shape} + get(name): what `load_tensors` reads. The
    other formats (albert.weights.huggingface / keras_hub) offer the same four attributes, names translated."""

    config_name = "albert_config.json"
    optional = ()  # encoder variables the source may lack (kept initialised, reported missing)

    def __init__(self, path: str):
        self.path = resolve_checkpoint_path(path)
        self._reader = tf.train.load_checkpoint(self.path)
        self.shapes = self._reader.get_variable_to_shape_map()
        self.ignored, self.unused = [], []

    def get(self, name: str) -> np.ndarray:
        return self._reader.get_tensor(name)


def load_original_checkpoint(model, path: str, init_from_group0: bool = False) -> LoadReport:
    """Load an original (TF1 name-based) ALBERT checkpoint into an encoder or any model of `albert.models`.

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
    config = _encoder_of(model).config
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
        variable.assign(np.asarray(source.get(source_name)).astype(np.dtype(variable.dtype)))
        loaded.append(name)
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


def save_original_checkpoint(model, path: str, global_step: int | None = None) -> str:
    """Write the model's variables under the original TF1 names (a name-based V2 checkpoint at prefix `path`),
    so tools built for the original read it. Written under a temporary prefix and renamed into place."""
    names = original_variable_map(model)
    tensors = {name: tf.convert_to_tensor(variable) for name, variable in names.items()}
    if global_step is not None:
        tensors["global_step"] = tf.constant(global_step, tf.int64)
    keys = sorted(tensors)
    directory = os.path.dirname(path)
    if directory:
        tf.io.gfile.makedirs(directory)
    tmp = f"{path}.tmp-{os.getpid()}"
    tf.raw_ops.SaveV2(prefix=tmp, tensor_names=keys, shape_and_slices=[""] * len(keys),
                      tensors=[tensors[k] for k in keys])
    data_files = tf.io.gfile.glob(f"{tmp}.data-*")
    for src in data_files:
        tf.io.gfile.rename(src, path + src[len(tmp):], overwrite=True)
    tf.io.gfile.rename(f"{tmp}.index", f"{path}.index", overwrite=True)  # last: readers look for the index
    return path


def is_original_checkpoint(path: str) -> bool:
    """True for a TF1 name-based checkpoint (the original's), False for a TF2 object-based one (ours)."""
    return "_CHECKPOINTABLE_OBJECT_GRAPH" not in tf.train.load_checkpoint(path).get_variable_to_shape_map()


def checkpoint_step(path: str) -> int | None:
    """The training step of a checkpoint: its `global_step` variable (original checkpoints), else the number in
    its name (`model.ckpt-<step>`), else None."""
    shapes = tf.train.load_checkpoint(path).get_variable_to_shape_map()
    if "global_step" in shapes:
        return int(tf.train.load_checkpoint(path).get_tensor("global_step"))
    suffix = os.path.basename(path).rsplit("-", 1)[-1]
    return int(suffix) if suffix.isdigit() else None
