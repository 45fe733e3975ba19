"""A TF2 object-based checkpoint's object graph and a Keras-2 SavedModel's `keras_metadata.pb`, read without
TensorFlow: what each checkpoint key is called (`full_name`), and the Keras configs of the saved layers.

In an object-based checkpoint the keys are object-graph paths (`variables/7/.ATTRIBUTES/VARIABLE_VALUE`,
`encoder/layer_with_weights-4/...`), which say nothing reliable about the weight; the variable's own name
(`transformer/self_attention/key/kernel`) is the `full_name` of a `SerializedTensor` in the `TrackableObjectGraph`
stored under the key `_CHECKPOINTABLE_OBJECT_GRAPH`. Field numbers (tensorflow/core/protobuf/
trackable_object_graph.proto): TrackableObjectGraph.nodes 1; TrackableObject.attributes 2; SerializedTensor
name 1, full_name 2, checkpoint_key 3. A string tensor in a bundle's data file is its length as a varint, a 4-byte
checksum of the lengths, then the bytes.
"""

import json
import os

from albert.weights.bundle_index import UnreadableIndex, entries
from albert.ground.wire import WireError, fields, varint

OBJECT_GRAPH_KEY = b"_CHECKPOINTABLE_OBJECT_GRAPH"


def _string_tensor(prefix: str, entry: bytes) -> bytes:
    values = {number: value for number, value in fields(entry) if isinstance(value, int)}
    shard, offset, size = values.get(3, 0), values.get(4, 0), values.get(5, 0)
    data_files = [f for f in os.listdir(os.path.dirname(prefix) or ".")
                  if f.startswith(os.path.basename(prefix) + f".data-{shard:05d}-of-")]
    if not data_files:
        raise UnreadableIndex(f"no data shard {shard}")
    with open(os.path.join(os.path.dirname(prefix) or ".", data_files[0]), "rb") as f:
        f.seek(offset)
        raw = f.read(size)
    length, at = varint(raw, 0)
    return raw[at + 4:at + 4 + length]


def checkpoint_names(prefix: str) -> dict:
    """{checkpoint key: full_name} of an object-based checkpoint at `prefix` (its .index and data shards);
    {} for a name-based (TF1) checkpoint. Raises WireError for files that are not a checkpoint."""
    with open(prefix + ".index", "rb") as f:
        index = f.read()
    graph = None
    for key, entry in entries(index):
        if key == OBJECT_GRAPH_KEY:
            graph = _string_tensor(prefix, entry)
            break
    if graph is None:
        return {}
    names = {}
    for number, node in fields(graph):
        if number != 1:
            continue
        for attribute_number, attribute in fields(node):
            if attribute_number != 2:
                continue
            parts = {n: v for n, v in fields(attribute) if isinstance(v, bytes)}
            if 3 in parts:
                names[parts[3].decode("utf-8", "replace")] = parts.get(2, b"").decode("utf-8", "replace")
    return names


def keras_metadata(path: str) -> list:
    """[(node path, metadata dict)] of a Keras-2 SavedModel's `keras_metadata.pb` (SavedMetadata.nodes 1;
    SavedObject node_path 3, metadata 5 as JSON)."""
    with open(path, "rb") as f:
        data = f.read()
    nodes = []
    for number, node in fields(data):
        if number != 1 or not isinstance(node, bytes):
            continue
        parts = {n: v for n, v in fields(node) if isinstance(v, bytes)}
        try:
            metadata = json.loads(parts.get(5, b"{}").decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise WireError(f"node metadata is not JSON ({e})") from None
        nodes.append((parts.get(3, b"").decode("utf-8", "replace"), metadata))
    return nodes
