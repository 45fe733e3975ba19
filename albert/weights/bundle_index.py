"""A TensorFlow checkpoint's `.index` read without TensorFlow: which data shards it needs, and how many bytes of
each, so a checkpoint cut short (a copy that stopped, a full disk) is found before any work starts.

The `.index` is a LevelDB-format table (TensorFlow's `tensor_bundle`): a 48-byte footer points at an index block,
whose entries point at data blocks; each data block entry maps a tensor's name to a `BundleEntryProto` (shard_id 3,
offset 4, size 5) and the empty name to the `BundleHeaderProto` (num_shards 1). Blocks are stored uncompressed
(TensorFlow writes them so); anything else is reported as not readable here and left to TensorFlow.
"""

import struct

from albert.ground.wire import WireError, fields, varint

MAGIC = (0xDB4775248B80FB57).to_bytes(8, "little")  # the last 8 bytes of every TensorFlow checkpoint .index
FOOTER = 48


class UnreadableIndex(WireError):
    """Not a table this reader understands (another kind of file, or a layout it does not parse)."""


def _block(data: bytes, offset: int, size: int) -> bytes:
    if offset + size + 5 > len(data):
        raise UnreadableIndex("a block lies past the end of the file")
    if data[offset + size] != 0:  # the trailer's compression type: 0 = none
        raise UnreadableIndex("a compressed block")
    return data[offset:offset + size]


def _entries(block: bytes):
    """(key, value) of a table block, prefix compression undone."""
    if len(block) < 4:
        raise UnreadableIndex("a block too short")
    restarts = struct.unpack_from("<I", block, len(block) - 4)[0]
    end = len(block) - 4 - 4 * restarts
    at, key = 0, b""
    while at < end:
        shared, at = varint(block, at)
        unshared, at = varint(block, at)
        length, at = varint(block, at)
        key = key[:shared] + block[at:at + unshared]
        at += unshared
        yield key, block[at:at + length]
        at += length


def entries(data: bytes):
    """(tensor name, BundleEntryProto bytes) of every entry of a checkpoint `.index` (the header's name is empty);
    raises UnreadableIndex for bytes that are not such a table."""
    if len(data) < FOOTER or data[-8:] != MAGIC:
        raise UnreadableIndex("no table footer")
    footer = data[-FOOTER:]
    _, at = varint(footer, 0)  # the metaindex block's handle (unused)
    _, at = varint(footer, at)
    index_offset, at = varint(footer, at)
    index_size, _ = varint(footer, at)
    for _, handle in _entries(_block(data, index_offset, index_size)):
        offset, at = varint(handle, 0)
        size, _ = varint(handle, at)
        yield from _entries(_block(data, offset, size))


def shard_sizes(data: bytes) -> tuple:
    """(number of data shards, {shard id: bytes its tensors need}) of a checkpoint `.index`'s bytes."""
    num_shards, needed = 1, {}
    for key, entry in entries(data):
        values = {number: value for number, value in fields(entry) if isinstance(value, int)}
        if not key:
            num_shards = values.get(1, 1)
        else:
            shard = values.get(3, 0)
            needed[shard] = max(needed.get(shard, 0), values.get(4, 0) + values.get(5, 0))
    return num_shards, needed


def is_object_based(data: bytes) -> bool:
    """Whether a checkpoint `.index` is a TF2 object-based checkpoint's (it holds the object graph), not a TF1
    name-based one's."""
    return any(key == b"_CHECKPOINTABLE_OBJECT_GRAPH" for key, _ in entries(data))


def shapes(data: bytes) -> dict:
    """{tensor name: shape} of a checkpoint `.index`'s bytes (BundleEntryProto.shape is field 2, a TensorShapeProto
    whose dims are field 2, each dim's size field 1)."""
    found = {}
    for key, entry in entries(data):
        if not key:
            continue
        dims = []
        for number, value in fields(entry):
            if number == 2 and isinstance(value, bytes):
                for dim_number, dim in fields(value):
                    if dim_number == 2 and isinstance(dim, bytes):
                        dims.append(next((v for n, v in fields(dim) if n == 1 and isinstance(v, int)), 0))
        found[key.decode("utf-8", "replace")] = tuple(dims)
    return found

