"""A fast `tf.train.Example` serializer for fixed-length int64 / float32 features, without TensorFlow.

Features are written in sorted key order; when no feature name is a prefix of another (true of every record this
project writes) the bytes equal `tf.train.Example(...).SerializeToString(deterministic=True)`: a test checks that.
Written by hand because the data generator's worker processes must not load TensorFlow, and because encoding a
whole batch of records with NumPy at once costs a few microseconds a record, about a tenth of building protos.
"""

import numpy as np

_BOUNDS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(tag: int, payload: bytes) -> bytes:
    return bytes((tag,)) + _varint(len(payload)) + payload


def _varint_rows(values: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Packed varints of each row of a 2-D integer array: (all rows' bytes concatenated, byte length of each row).
    Negative values take 10 bytes (two's complement), as protobuf encodes int64."""
    v = values.astype(np.int64).view(np.uint64)
    if not v.size or v.max() < 0x80:
        return v.astype(np.uint8).tobytes(), np.full(v.shape[0], v.shape[1], np.int64)
    width = -(-int(v.max()).bit_length() // 7)  # bytes of the largest value
    used = np.ones(v.shape, np.int64)  # bytes per value
    for bound in _BOUNDS[:width - 1]:
        used += v >= bound
    shifts = np.arange(0, 7 * width, 7, dtype=np.uint64)
    groups = ((v[..., None] >> shifts) & np.uint64(0x7F)).astype(np.uint8)
    index = np.arange(width)
    continuation = (index < used[..., None] - 1).astype(np.uint8) << 7
    data = (groups | continuation)[index < used[..., None]]
    return data.tobytes(), used.sum(-1)


def serialize_examples(features: dict) -> list:
    """{name: [N, L] array} -> N serialized tf.train.Example. Integer arrays become Int64List, floating arrays
    FloatList; every row of one feature has the same length L."""
    names = sorted(features)
    arrays = [np.asarray(features[name]) for name in names]
    count = arrays[0].shape[0]
    columns = []
    for name, values in zip(names, arrays):
        values = values.reshape(count, -1)
        key = _field(0x0A, name.encode())
        if values.dtype.kind == "f":
            data, lengths = values.astype("<f4").tobytes(), np.full(count, 4 * values.shape[1], np.int64)
            list_tag = 0x12  # Feature.float_list
        else:
            data, lengths = _varint_rows(values)
            list_tag = 0x1A  # Feature.int64_list
        prefixes = {}  # the wrapping of a row depends only on its byte length
        ends = np.cumsum(lengths).tolist()
        starts = [0] + ends[:-1]
        column = []
        for start, end in zip(starts, ends):
            size = end - start
            prefix = prefixes.get(size)
            if prefix is None:
                inner = _varint(size)  # the packed list's length
                feature_len = 1 + len(inner) + size if size else 0
                feature_head = bytes((list_tag,)) + _varint(feature_len) + (b"\x0a" + inner if size else b"")
                entry_len = len(key) + 1 + len(_varint(len(feature_head) + size)) + len(feature_head) + size
                prefix = (b"\x0a" + _varint(entry_len) + key + b"\x12" + _varint(len(feature_head) + size)
                          + feature_head)
                prefixes[size] = prefix
            column.append(prefix + data[start:end])
        columns.append(column)
    out = []
    for parts in zip(*columns):
        body = b"".join(parts)
        out.append(b"\x0a" + _varint(len(body)) + body)
    return out


def serialize_example(features: dict) -> bytes:
    """{name: 1-D array} -> one serialized tf.train.Example."""
    return serialize_examples({name: np.asarray(values)[None] for name, values in features.items()})[0]
