"""keras-hub ALBERT presets in (`config.json` + `model.weights.h5` [+ `task.json` + `task.weights.h5`] +
`assets/tokenizer/vocabulary.spm`), read with h5py: no keras-hub needed.

A Keras 3 weights file names each layer by its class (`dense`, `dense_1`, `transformer_encoder_3`, ...) in the
order the model tracks them, so each row pairs such a path with an original TF1 name (albert.weights.original's
table) and the layout change: `SAME`, `TRANSPOSE` (a classifier kernel [H, C] -> the original's [C, H]),
`HEADS_IN` (an attention EinsumDense kernel [H, N, D] -> [H, N*D], its bias [N, D] -> [N*D]) or `HEADS_OUT`
([N, D, H] -> [N*D, H]). Block (g, k) is the backbone's `transformer_encoder` number g * inner + k.
Checked against keras-hub 0.32.0.
"""

import math
import os

import numpy as np

from albert.ground.errors import AlbertError
from albert.ground.textfiles import load_config

SAME, TRANSPOSE, HEADS_IN, HEADS_OUT = "same", "transpose", "heads_in", "heads_out"

BACKBONE_TABLE = [
    ("layers/reversible_embedding/vars/0", "bert/embeddings/word_embeddings", SAME),
    ("layers/embedding/vars/0", "bert/embeddings/token_type_embeddings", SAME),
    ("layers/position_embedding/vars/0", "bert/embeddings/position_embeddings", SAME),
    ("layers/layer_normalization/vars/0", "bert/embeddings/LayerNorm/gamma", SAME),
    ("layers/layer_normalization/vars/1", "bert/embeddings/LayerNorm/beta", SAME),
    ("layers/dense/vars/0", "bert/encoder/embedding_hidden_mapping_in/kernel", SAME),
    ("layers/dense/vars/1", "bert/encoder/embedding_hidden_mapping_in/bias", SAME),
    ("layers/dense_1/vars/0", "bert/pooler/dense/kernel", SAME),
    ("layers/dense_1/vars/1", "bert/pooler/dense/bias", SAME),
]
BLOCK_KERAS_HUB = "layers/transformer_encoder{index}/"
BLOCK_ORIGINAL = "bert/encoder/transformer/group_{g}/inner_group_{k}/"
BLOCK_TABLE = [
    ("_self_attention_layer/query_dense/vars/0", "attention_1/self/query/kernel", HEADS_IN),
    ("_self_attention_layer/query_dense/vars/1", "attention_1/self/query/bias", HEADS_IN),
    ("_self_attention_layer/key_dense/vars/0", "attention_1/self/key/kernel", HEADS_IN),
    ("_self_attention_layer/key_dense/vars/1", "attention_1/self/key/bias", HEADS_IN),
    ("_self_attention_layer/value_dense/vars/0", "attention_1/self/value/kernel", HEADS_IN),
    ("_self_attention_layer/value_dense/vars/1", "attention_1/self/value/bias", HEADS_IN),
    ("_self_attention_layer/output_dense/vars/0", "attention_1/output/dense/kernel", HEADS_OUT),
    ("_self_attention_layer/output_dense/vars/1", "attention_1/output/dense/bias", SAME),
    ("_self_attention_layer_norm/vars/0", "LayerNorm/gamma", SAME),
    ("_self_attention_layer_norm/vars/1", "LayerNorm/beta", SAME),
    ("_feedforward_intermediate_dense/vars/0", "ffn_1/intermediate/dense/kernel", SAME),
    ("_feedforward_intermediate_dense/vars/1", "ffn_1/intermediate/dense/bias", SAME),
    ("_feedforward_output_dense/vars/0", "ffn_1/intermediate/output/dense/kernel", SAME),
    ("_feedforward_output_dense/vars/1", "ffn_1/intermediate/output/dense/bias", SAME),
    ("_feedforward_layer_norm/vars/0", "LayerNorm_1/gamma", SAME),
    ("_feedforward_layer_norm/vars/1", "LayerNorm_1/beta", SAME),
]
# task.json class -> (the task model class (albert.tasks.<task>.model), its head table, the rows of task.weights.h5)
TASKS = {
    "AlbertTextClassifier": ("AlbertClassifier", [
        ("layers/dense/vars/0", "output_weights", TRANSPOSE),
        ("layers/dense/vars/1", "output_bias", SAME),
    ]),
    # keras-hub's head normalises with epsilon 1e-5 (the original's 1e-12 here): see README, "Weights".
    "AlbertMaskedLM": ("AlbertPretrainer", [
        ("layers/masked_lm_head/_intermediate_dense/vars/0", "cls/predictions/transform/dense/kernel", SAME),
        ("layers/masked_lm_head/_intermediate_dense/vars/1", "cls/predictions/transform/dense/bias", SAME),
        ("layers/masked_lm_head/_intermediate_layer_norm/vars/0", "cls/predictions/transform/LayerNorm/gamma", SAME),
        ("layers/masked_lm_head/_intermediate_layer_norm/vars/1", "cls/predictions/transform/LayerNorm/beta", SAME),
        ("layers/masked_lm_head/vars/0", "cls/predictions/output_bias", SAME),
    ]),
}
CONFIG_KEYS = {"vocabulary_size": "vocab_size", "num_layers": "num_hidden_layers", "num_heads": "num_attention_heads",
               "embedding_dim": "embedding_size", "hidden_dim": "hidden_size", "intermediate_dim": "intermediate_size",
               "num_groups": "num_hidden_groups", "num_inner_repetitions": "inner_group_num",
               "max_sequence_length": "max_position_embeddings", "num_segments": "type_vocab_size"}
SPM_MODEL = os.path.join("assets", "tokenizer", "vocabulary.spm")


def config_values(values: dict, source: str) -> dict:
    """The original's config keys of a keras-hub preset's `config.json` (an AlbertBackbone; tanh GELU, epsilon
    1e-12)."""
    if values.get("class_name") != "AlbertBackbone":
        raise AlbertError(f"{source}: a keras-hub {values.get('class_name')} preset, not ALBERT (class_name must "
                          "be AlbertBackbone); pass an ALBERT preset directory")
    keys = values.get("config", {})
    ours = {ours: keys[theirs] for theirs, ours in CONFIG_KEYS.items() if theirs in keys}
    dropout = keys.get("dropout", 0.0)
    ours.update(hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout, hidden_act="gelu",
                initializer_range=0.02)
    return ours



def task_of(directory: str):
    """(task.json class name, number of classes) of a task preset, or (None, None) for a backbone preset."""
    path = os.path.join(directory, "task.json")
    if not os.path.isfile(path):
        return None, None
    values = load_config(path)
    return values.get("class_name"), values.get("config", {}).get("num_classes")


def convert_layout(value: np.ndarray, layout: str) -> np.ndarray:
    """A tensor in another layout -> the original's (one owner of the per-head reshapes: Model Garden's too)."""
    if layout == TRANSPOSE:
        return np.ascontiguousarray(value.T)
    if layout == HEADS_IN:
        return value.reshape(value.shape[0], -1) if value.ndim == 3 else value.reshape(-1)
    if layout == HEADS_OUT:
        return value.reshape(-1, value.shape[-1])
    return value


def layout_shape(shape, layout: str) -> tuple:
    """The shape `convert_layout` gives a tensor of `shape` (computed from a header: nothing read)."""
    shape = tuple(shape)
    if layout == TRANSPOSE:
        return shape[::-1]
    if layout == HEADS_IN:
        return (shape[0], math.prod(shape[1:])) if len(shape) == 3 else (math.prod(shape),)
    if layout == HEADS_OUT:
        return (math.prod(shape[:-1]), shape[-1])
    return shape


# How many times its stored bytes a compressed HDF5 dataset may declare (gzip on float weights gives well under 10x;
# an uncompressed one may declare no more than it stores).
H5_MAX_RATIO = 100


class H5Entry:
    """A dataset of a weights file, checked (`_check_h5_dataset`) but not read: its shape, and `read()`."""

    def __init__(self, path: str, name: str, shape):
        self.path, self.name, self.shape = path, name, tuple(shape)

    def read(self) -> np.ndarray:
        import h5py

        try:
            with h5py.File(self.path, "r") as f:
                return f[self.name][()]
        except OSError as e:
            raise AlbertError(f"{self.path}: dataset {self.name} cannot be read ({str(e).splitlines()[0][:120]})") \
                from None


def _checked_datasets(path: str, wanted, use):
    """`use({dataset path: h5py Dataset, or None where `wanted` refuses it})` inside the open file, every wanted
    dataset checked from its header first (`_check_h5_dataset`)."""
    import h5py

    found = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            found[name] = obj if wanted is None or wanted(name) else None

    try:
        with h5py.File(path, "r") as f:
            f.visititems(visit)
            for name, dataset in found.items():
                if dataset is not None:
                    _check_h5_dataset(path, name, dataset)
            return use(found)
    except OSError as e:
        raise AlbertError(f"{path}: not a readable Keras weights file ({str(e).splitlines()[0][:120]})") from None


def h5_entries(path: str, wanted=None) -> dict:
    """{dataset path: H5Entry} of a Keras weights file (h5py), nothing read: the datasets `wanted(name)` accepts
    (all when None), each checked from its header -- stored inside the file (no external or virtual storage), a
    numeric type, no more bytes declared than the file stores for it (an unwritten dataset declaring a huge shape is
    refused, not allocated) -- and None for the others (named, never read)."""
    return _checked_datasets(path, wanted, lambda found: {
        name: None if d is None else H5Entry(path, name, d.shape) for name, d in found.items()})


def read_h5(path: str, wanted=None) -> dict:
    """{dataset path: NumPy array} of the datasets `wanted(name)` accepts (h5_entries' checks first, one opening of
    the file), None for the others."""
    return _checked_datasets(path, wanted, lambda found: {
        name: None if d is None else d[()] for name, d in found.items()})


def _check_h5_dataset(path: str, name: str, dataset):
    if dataset.is_virtual or dataset.external:
        kind = "virtual" if dataset.is_virtual else "external"
        raise AlbertError(f"{path}: dataset {name} points at other files (HDF5 {kind} storage): refused, weights are "
                          "read from this file only")
    if dataset.dtype.kind not in "fiub":
        raise AlbertError(f"{path}: dataset {name} holds {dataset.dtype}, not numbers: refused")
    declared = dataset.size * dataset.dtype.itemsize
    stored = dataset.id.get_storage_size()
    if declared > stored * (H5_MAX_RATIO if dataset.compression else 1):
        raise AlbertError(f"{path}: dataset {name} declares shape {list(dataset.shape)} ({declared:,} bytes) but "
                          f"the file stores {stored:,} bytes of it: refused")


def _read_from(rows) -> callable:
    """The datasets of a keras-hub file worth reading: those the name table maps (optimizer and unknown ones are
    listed by name only)."""
    names = {name for name, _, _ in rows}
    return lambda name: name in names


class KerasHubTensors:
    """A keras-hub preset directory seen as original names, for `load_tensors`."""

    config_name = "config.json"
    optional = ()

    def __init__(self, directory: str, config):
        self.path = os.path.join(directory, "model.weights.h5")
        if not os.path.isfile(self.path):
            raise AlbertError(f"{directory}: no model.weights.h5 (a keras-hub preset holds config.json, "
                              "model.weights.h5 and assets/tokenizer/vocabulary.spm)")
        rows = list(BACKBONE_TABLE)
        for g in range(config.num_hidden_groups):
            for k in range(config.inner_group_num):
                index = g * config.inner_group_num + k
                prefix = BLOCK_KERAS_HUB.format(index=f"_{index}" if index else "")
                rows += [(prefix + ours, BLOCK_ORIGINAL.format(g=g, k=k) + original, layout)
                         for ours, original, layout in BLOCK_TABLE]
        self.shapes, self._entries, self.ignored, self.unused, self._names = {}, {}, [], [], {}
        self._add(self.path, h5_entries(self.path, _read_from(rows)), rows, config, "")
        task, _ = task_of(directory)
        task_file = os.path.join(directory, "task.weights.h5")
        if task and os.path.isfile(task_file):
            task_rows = TASKS.get(task, (None, []))[1]
            self._add(task_file, h5_entries(task_file, _read_from(task_rows)), task_rows, config,
                      "task.weights.h5:")

    def _add(self, path, entries, rows, config, label):
        """Each dataset's place from its header: shapes now, values when the loader, having compared them with the
        model's, asks (`get`)."""
        table = {name: (original, layout) for name, original, layout in rows}
        for name, entry in sorted(entries.items()):
            if name.startswith("optimizer/"):
                self.ignored.append(label + name)
            elif name in table:
                original, layout = table[name]
                self._entries[original] = (entry, layout)
                self.shapes[original] = layout_shape(entry.shape, layout)
                self._names[original] = label + name
            elif name.startswith("layers/transformer_encoder"):
                raise AlbertError(f"{path}: {name} has no place in a model of num_groups "
                                  f"{config.num_hidden_groups} / num_inner_repetitions {config.inner_group_num}: "
                                  "use the config.json that came with the weights")
            else:
                self.unused.append(label + name)
        if not label and config.embedding_size == config.hidden_size:
            self._drop_identity_mapping(config)

    def _drop_identity_mapping(self, config):
        """keras-hub always has the E->H projection; the original has none when E == H. Identity: dropped."""
        kernel = "bert/encoder/embedding_hidden_mapping_in/kernel"
        bias = "bert/encoder/embedding_hidden_mapping_in/bias"
        if self.shapes.get(kernel) != (config.embedding_size, config.hidden_size) or \
                self.shapes.get(bias, (config.hidden_size,)) != (config.hidden_size,):
            return  # absent, or a shape the loader refuses in its own line
        w = self.get(kernel)
        b = self.get(bias) if bias in self._entries else np.zeros(1)
        if not (np.array_equal(w, np.eye(len(w))) and not b.any()):
            raise AlbertError(f"{self.path}: embedding_dim == hidden_dim but the embedding projection is not the "
                              "identity: the original ALBERT has no E->H projection then, so it cannot hold these "
                              "weights")
        for name in (kernel, bias):
            self.ignored.append(self._names.pop(name))
            self._entries.pop(name, None), self.shapes.pop(name, None)

    def get(self, name: str) -> np.ndarray:
        entry, layout = self._entries[name]
        return convert_layout(entry.read(), layout)

    def describe(self, name: str) -> str:
        return f"{name} (keras-hub: {self._names[name]})" if name in self._names else name
