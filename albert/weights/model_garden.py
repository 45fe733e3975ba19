"""TensorFlow Model Garden's ALBERT in (tf-models-official): its TF2 hub encoder SavedModels
(`tensorflow/albert_en_*`, a Keras-2 SavedModel with `keras_metadata.pb`) and its TF2 checkpoints (written by
`tf2_albert_encoder_checkpoint_converter.py`, or by its training). No TensorFlow needed to read the names.

The checkpoint keys are object-graph paths (`variables/7/...`, `encoder/layer_with_weights-4/...`), so a weight is
found by its variable's own name, the object graph's `full_name` (albert.weights.object_graph), never by key text
or order. Each row pairs the end of such a name with an original TF1 name (albert.weights.original's table) and
the layout change (albert.weights.keras_hub.convert_layout): attention kernels are per head, `[H, N, H/N]` for
query / key / value (biases `[N, H/N]`) and `[N, H/N, H]` for the output. Model Garden's ALBERT has one shared
block (`group_0/inner_group_0`) and no sentence-order head.
"""

import json
import os

from albert.ground.errors import AlbertError
from albert.weights.keras_hub import HEADS_IN, HEADS_OUT, SAME, convert_layout
from albert.weights.object_graph import checkpoint_names, keras_metadata
from albert.ground.wire import WireError

BLOCK = "bert/encoder/transformer/group_0/inner_group_0/"
TABLE = [
    ("word_embeddings/embeddings", "bert/embeddings/word_embeddings", SAME),
    ("position_embedding/embeddings", "bert/embeddings/position_embeddings", SAME),
    ("type_embeddings/embeddings", "bert/embeddings/token_type_embeddings", SAME),
    ("embeddings/layer_norm/gamma", "bert/embeddings/LayerNorm/gamma", SAME),
    ("embeddings/layer_norm/beta", "bert/embeddings/LayerNorm/beta", SAME),
    ("embedding_projection/kernel", "bert/encoder/embedding_hidden_mapping_in/kernel", SAME),  # only when E != H
    ("embedding_projection/bias", "bert/encoder/embedding_hidden_mapping_in/bias", SAME),
    ("transformer/self_attention/query/kernel", BLOCK + "attention_1/self/query/kernel", HEADS_IN),
    ("transformer/self_attention/query/bias", BLOCK + "attention_1/self/query/bias", HEADS_IN),
    ("transformer/self_attention/key/kernel", BLOCK + "attention_1/self/key/kernel", HEADS_IN),
    ("transformer/self_attention/key/bias", BLOCK + "attention_1/self/key/bias", HEADS_IN),
    ("transformer/self_attention/value/kernel", BLOCK + "attention_1/self/value/kernel", HEADS_IN),
    ("transformer/self_attention/value/bias", BLOCK + "attention_1/self/value/bias", HEADS_IN),
    ("transformer/self_attention/attention_output/kernel", BLOCK + "attention_1/output/dense/kernel", HEADS_OUT),
    ("transformer/self_attention/attention_output/bias", BLOCK + "attention_1/output/dense/bias", SAME),
    ("transformer/self_attention_layer_norm/gamma", BLOCK + "LayerNorm/gamma", SAME),
    ("transformer/self_attention_layer_norm/beta", BLOCK + "LayerNorm/beta", SAME),
    ("transformer/intermediate/kernel", BLOCK + "ffn_1/intermediate/dense/kernel", SAME),
    ("transformer/intermediate/bias", BLOCK + "ffn_1/intermediate/dense/bias", SAME),
    ("transformer/output/kernel", BLOCK + "ffn_1/intermediate/output/dense/kernel", SAME),
    ("transformer/output/bias", BLOCK + "ffn_1/intermediate/output/dense/bias", SAME),
    ("transformer/output_layer_norm/gamma", BLOCK + "LayerNorm_1/gamma", SAME),
    ("transformer/output_layer_norm/beta", BLOCK + "LayerNorm_1/beta", SAME),
    ("pooler_transform/kernel", "bert/pooler/dense/kernel", SAME),
    ("pooler_transform/bias", "bert/pooler/dense/bias", SAME),
    ("cls/predictions/transform/dense/kernel", "cls/predictions/transform/dense/kernel", SAME),
    ("cls/predictions/transform/dense/bias", "cls/predictions/transform/dense/bias", SAME),
    ("cls/predictions/transform/LayerNorm/gamma", "cls/predictions/transform/LayerNorm/gamma", SAME),
    ("cls/predictions/transform/LayerNorm/beta", "cls/predictions/transform/LayerNorm/beta", SAME),
    ("cls/predictions/output_bias/bias", "cls/predictions/output_bias", SAME),
]
# keras_metadata.pb's AlbertEncoder config -> the original's keys.
CONFIG_KEYS = {"vocab_size": "vocab_size", "embedding_width": "embedding_size", "hidden_size": "hidden_size",
               "num_layers": "num_hidden_layers", "num_attention_heads": "num_attention_heads",
               "max_sequence_length": "max_position_embeddings", "type_vocab_size": "type_vocab_size",
               "intermediate_size": "intermediate_size", "dropout_rate": "hidden_dropout_prob",
               "attention_dropout_rate": "attention_probs_dropout_prob"}
METADATA = "keras_metadata.pb"


def original_name(full_name: str):
    """(original name, layout) of a Model Garden variable name (any scope before it, `:0` after it), or None."""
    name = full_name.split(":")[0]
    for theirs, original, layout in TABLE:
        if name == theirs or name.endswith("/" + theirs):
            return original, layout
    return None


def is_model_garden(names: dict) -> bool:
    """Whether an object-based checkpoint's {key: full_name} is a Model Garden ALBERT's."""
    return any(original_name(n) and n.split(":")[0].endswith("transformer/self_attention/query/kernel")
               for n in names.values())


# The activation names an encoder's Keras metadata holds, as Keras 2 / tf_keras and Keras 3 serialize them (a plain
# name, a registered function `<package>>name`, a `{"class_name", "config"}` object) -> the original's activation.
# Model Garden's own (official.modeling.activations, registered under the package "Text") are the tanh gelu,
# ALBERT's, and `identity`; Keras' "gelu" is the erf form by default (`approximate=False`), which ALBERT never used.
ACTIVATION_NAMES = {
    "Text>gelu": "gelu",  # official.modeling.activations.gelu: gelu(x, approximate=True), the original's
    "Text>identity": "linear",
    "relu": "relu",
    "tanh": "tanh",
    "linear": "linear",
}
REFUSED_ACTIVATIONS = {
    "gelu": "Keras' gelu is the erf form (approximate=False), not ALBERT's tanh gelu (Model Garden's Text>gelu)",
}


def _activation_name(value):
    """(name, approximate) of a serialized activation in any of its forms; approximate is None where not said."""
    if isinstance(value, str):
        return value, None
    if not isinstance(value, dict):
        return None, None
    config = value.get("config")
    if isinstance(config, str):  # a function: {"module", "class_name": "function", "config": name, ...}
        return config, None
    if isinstance(config, dict):  # an object: {"class_name": name, "config": {"name": ..., "approximate": ...}}
        name = config.get("activation", config.get("name", value.get("class_name")))
        approximate = config.get("approximate")
        return (name if isinstance(name, str) else None), approximate
    name = value.get("class_name")
    return (name if isinstance(name, str) else None), None


def _activation(value, source: str) -> str:
    """The original's activation of an encoder's serialized `activation`, or one line naming the file and value."""
    name, approximate = _activation_name(value)
    if name == "gelu" and approximate is True:  # Keras' gelu told to be the tanh form
        return "gelu"
    if name in ACTIVATION_NAMES:
        return ACTIVATION_NAMES[name]
    why = REFUSED_ACTIVATIONS.get(name, "no counterpart in ALBERT (known: " + ", ".join(ACTIVATION_NAMES) + ")")
    raise AlbertError(f"{source}: activation {json.dumps(value)} is not readable as ALBERT's: {why}")


def config_values(path: str) -> dict:
    """The original's config keys of a Model Garden SavedModel, from its `keras_metadata.pb` (its AlbertEncoder
    layer's config)."""
    try:
        nodes = keras_metadata(path)
    except (OSError, WireError) as e:
        raise AlbertError(f"{path}: not a readable Keras metadata file ({e})") from None
    for _, metadata in nodes:
        if str(metadata.get("class_name", "")).split(">")[-1] == "AlbertEncoder":
            keys = metadata.get("config", {})
            ours = {ours: keys[theirs] for theirs, ours in CONFIG_KEYS.items() if theirs in keys}
            # absent: Model Garden's default, its gelu
            ours["hidden_act"] = _activation(keys.get("activation", "Text>gelu"), path)
            initializer = keys.get("initializer")
            if isinstance(initializer, dict):
                ours["initializer_range"] = initializer.get("config", {}).get("stddev", 0.02)
            return ours
    classes = sorted({str(m.get("class_name")) for _, m in nodes if "Encoder" in str(m.get("class_name"))})
    raise AlbertError(f"{path}: holds no ALBERT encoder (found {', '.join(classes) or 'no encoder'}): a SavedModel "
                      "of another model family (BERT, ELECTRA, ...) cannot be read as ALBERT")


def saved_model_config(directory: str) -> str | None:
    """The config file of a Model Garden SavedModel directory: its keras_metadata.pb, else None."""
    path = os.path.join(directory, METADATA)
    return path if os.path.isfile(path) else None


class ModelGardenTensors:
    """A Model Garden object-based checkpoint (a SavedModel's variables/variables, or a TF2 checkpoint prefix)
    seen as original names, for `albert.weights.loader.load_tensors`. `reader` is TensorFlow's checkpoint reader."""

    config_name = "config (keras_metadata.pb or albert_config.json)"
    optional = ()

    def __init__(self, path: str, reader):
        self.path, self._reader = path, reader
        self.shapes, self._keys, self._names, self.ignored, self.unused = {}, {}, {}, [], []
        shapes = reader.get_variable_to_shape_map()
        for key, full_name in sorted(checkpoint_names(path).items()):
            mapped = original_name(full_name)
            if mapped is None:
                (self.ignored if "OPTIMIZER_SLOT" in key or "optimizer" in key else self.unused).append(full_name)
                continue
            original, layout = mapped
            if original in self._keys:
                continue  # the same variable under a second path (a SavedModel lists it twice)
            shape = convert_layout_shape(shapes[key], layout)
            self._keys[original], self._names[original], self.shapes[original] = (key, layout), full_name, shape
        self.mapped = len(self._keys)

    def get(self, name: str):
        key, layout = self._keys[name]
        return convert_layout(self._reader.get_tensor(key), layout)

    def describe(self, name: str) -> str:
        return f"{name} (Model Garden: {self._names[name]})" if name in self._names else name


def convert_layout_shape(shape, layout: str) -> tuple:
    """The original's shape of a tensor of `shape` stored in `layout`."""
    shape = tuple(shape)
    if layout == HEADS_IN:
        return (shape[0], shape[1] * shape[2]) if len(shape) == 3 else (shape[0] * shape[1],)
    if layout == HEADS_OUT:
        return (shape[0] * shape[1], shape[2])
    return shape
