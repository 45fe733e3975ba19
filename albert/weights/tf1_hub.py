"""The original's TF1 Hub modules (`export_to_tfhub.py`; `tfhub.dev/google/albert_{base,...}/{1,2,3}`), read
without TensorFlow Hub: a directory with `tfhub_module.pb`, `saved_model.pb`, `variables/` (a name-based TF1
checkpoint with the original names: albert.weights.original's table as it is, no optimizer slots) and `assets/`
(`albert_config.json`, `30k-clean.model`, `30k-clean.vocab`).

Where a module has no `assets/albert_config.json`, the config is read from the module itself: the sizes from the
variables' shapes, the number of layers from the graph's `layer_<i>` scopes, the number of heads from the
attention's reshape to `[hidden, heads, head size]`, the activation from the FFN's ops. No TensorFlow here:
`saved_model.pb` and the checkpoint index are read with albert.ground.wire.
"""

import os
import re
import struct

from albert.ground.errors import AlbertError
from albert.weights.bundle_index import entries
from albert.ground.wire import WireError, fields

MODULE_FILE = "tfhub_module.pb"
GRAPH_FILE = "saved_model.pb"
CONFIG = os.path.join("assets", "albert_config.json")
CHECKPOINT = os.path.join("variables", "variables")
_LAYER = re.compile(rb"bert/encoder/transformer/group_\d+(?:_\d+)?/layer_(\d+)/")
_QUERY_SHAPE = re.compile(rb"attention_1/self/query/Reshape/shape$")


def is_module(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, MODULE_FILE))


def config_file(directory: str) -> str:
    """assets/albert_config.json, or saved_model.pb where the module has no config (read by `config_values`)."""
    path = os.path.join(directory, CONFIG)
    return path if os.path.isfile(path) else os.path.join(directory, GRAPH_FILE)


def spm_model(directory: str) -> str | None:
    assets = os.path.join(directory, "assets")
    models = sorted(f for f in os.listdir(assets) if f.endswith(".model")) if os.path.isdir(assets) else []
    return os.path.join(assets, models[0]) if models else None


def _variable_shapes(prefix: str) -> dict:
    with open(prefix + ".index", "rb") as f:
        index = f.read()
    shapes = {}
    for key, entry in entries(index):
        if not key:
            continue
        shape = [v for n, v in fields(entry) if n == 2]
        dims = []
        for number, dim in fields(shape[0]) if shape else ():
            if number == 2:
                dims.append(dict((n, v) for n, v in fields(dim)).get(1, 0))
        shapes[key.decode("utf-8", "replace")] = dims
    return shapes


def _graph_facts(path: str) -> tuple:
    """(number of layers, number of heads or None, FFN op names) from the first MetaGraph of saved_model.pb."""
    with open(path, "rb") as f:
        data = f.read()
    layers, heads, ops = set(), None, set()
    for number, meta_graph in fields(data):
        if number != 2:
            continue
        for graph_number, graph in fields(meta_graph):
            if graph_number != 2:
                continue
            for node_number, node in fields(graph):
                if node_number != 1:
                    continue
                parts = list(fields(node))
                name = next((v for n, v in parts if n == 1), b"")
                op = next((v for n, v in parts if n == 2), b"")
                layers.update(int(m) for m in _LAYER.findall(name))
                if b"/ffn_1/intermediate/" in name and b"/output/" not in name:  # the activation's ops
                    ops.add(op.decode())
                if heads is None and _QUERY_SHAPE.search(name):
                    heads = _reshape_heads(parts)
        break  # every MetaGraph of a module holds the same network
    return len(layers), heads, ops


def _reshape_heads(parts) -> int | None:
    for number, entry in parts:
        if number != 5:
            continue
        pairs = dict(fields(entry))
        if pairs.get(1) != b"value":
            continue
        tensor = dict(fields(pairs.get(2, b""))).get(8, b"")
        content = dict(fields(tensor)).get(4)
        values = list(struct.unpack(f"<{len(content) // 4}i", content)) if content else \
            [v for n, v in fields(tensor) if n == 7 and isinstance(v, int)]
        return values[1] if len(values) == 3 else None
    return None


def _activation(ops: set) -> str:
    """ALBERT's GELU is built of Pow and Tanh ops; a plain Tanh is tanh, a Relu relu."""
    if "Relu" in ops:
        return "relu"
    return "tanh" if "Tanh" in ops and "Pow" not in ops else "gelu"


def config_values(path: str) -> dict:
    """The original's config of a module without albert_config.json (path: its saved_model.pb)."""
    directory = os.path.dirname(path)
    try:
        shapes = _variable_shapes(os.path.join(directory, CHECKPOINT))
        layers, heads, ops = _graph_facts(path)
    except (OSError, WireError) as e:
        raise AlbertError(f"{directory}: a TF Hub module without assets/albert_config.json whose graph or variables "
                          f"cannot be read ({e}); pass the module's albert_config.json") from None
    block = "bert/encoder/transformer/group_0/inner_group_0/"
    needed = ("bert/embeddings/word_embeddings", "bert/embeddings/position_embeddings",
              "bert/embeddings/token_type_embeddings", block + "attention_1/self/query/kernel",
              block + "ffn_1/intermediate/dense/kernel")
    if any(name not in shapes for name in needed):
        raise AlbertError(f"{directory}: not an ALBERT TF Hub module (no {next(n for n in needed if n not in shapes)} "
                          "variable): a module of another model family (BERT, ELECTRA, ...)?")
    if not layers or not heads:
        raise AlbertError(f"{directory}: a TF Hub module without assets/albert_config.json, and its graph does not "
                          "show the number of " + ("layers" if not layers else "attention heads") +
                          "; pass the module's albert_config.json")
    groups = {m for name in shapes for m in re.findall(r"transformer/group_(\d+)/", name)}
    inner = {m for name in shapes for m in re.findall(r"/inner_group_(\d+)/", name)}
    vocab, embedding = shapes["bert/embeddings/word_embeddings"]
    return {"vocab_size": vocab, "embedding_size": embedding,
            "hidden_size": shapes[block + "attention_1/self/query/kernel"][1],
            "num_hidden_layers": layers, "num_hidden_groups": len(groups), "inner_group_num": len(inner),
            "num_attention_heads": heads, "intermediate_size": shapes[block + "ffn_1/intermediate/dense/kernel"][1],
            "hidden_act": _activation(ops), "hidden_dropout_prob": 0.0,
            "attention_probs_dropout_prob": 0.0,
            "max_position_embeddings": shapes["bert/embeddings/position_embeddings"][0],
            "type_vocab_size": shapes["bert/embeddings/token_type_embeddings"][0]}
