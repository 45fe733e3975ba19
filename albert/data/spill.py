"""Keyed records -> key-sorted TFRecord files, round-robin over several outputs, in bounded memory.

Each record carries a random 64-bit key (plus tie-breakers). Records are appended to bucket files chosen by the
key's top bits (each producer process writes its own files, so nothing crosses a pipe); each bucket is then read,
sorted and framed alone -- in parallel, one bucket per process -- into per-output part files, which are finally
concatenated in bucket order. The result is a global sort by key whatever the number of buckets or producers,
and memory holds one bucket per process.
"""

import glob
import os
import shutil
import struct

from albert.data.tfrecord import frame
from albert.ground.paths import is_remote, open_file

_HEADER = struct.Struct("<QIIIII")  # key, four tie-breakers, record length


class Spiller:
    """Appends keyed records to `<directory>/b<bucket>-<tag>`; `close()` returns the records per bucket."""

    def __init__(self, directory: str, bucket_bits: int, tag: str):
        self.directory, self.bits, self.tag = directory, bucket_bits, tag
        self.files, self.counts = {}, [0] * (1 << bucket_bits)
        # One write buffer per open bucket file, 16 MB in all: memory does not grow with the number of buckets.
        self.buffer_bytes = max(1 << 14, (16 << 20) >> bucket_bits)

    def add(self, key: int, a: int, b: int, c: int, d: int, record: bytes):
        bucket = key >> (64 - self.bits) if self.bits else 0
        f = self.files.get(bucket)
        if f is None:
            f = self.files[bucket] = open(os.path.join(self.directory, f"b{bucket:05d}-{self.tag}"), "ab",
                                          buffering=self.buffer_bytes)
        f.write(_HEADER.pack(key, a, b, c, d, len(record)))
        f.write(record)
        self.counts[bucket] += 1

    def close(self) -> list:
        for f in self.files.values():
            f.close()
        self.files = {}
        return self.counts


def merge_bucket(directory: str, bucket: int, first_index: int, num_outputs: int):
    """Sort one bucket by key and write its records, framed as TFRecords, to `part-<output>-<bucket>` files;
    record i of the bucket goes to output (first_index + i) % num_outputs."""
    items = []
    for path in sorted(glob.glob(os.path.join(directory, f"b{bucket:05d}-*"))):
        with open(path, "rb") as f:
            data = f.read()
        offset = 0
        while offset < len(data):
            key, a, b, c, d, size = _HEADER.unpack_from(data, offset)
            offset += _HEADER.size
            items.append((key, a, b, c, d, data[offset:offset + size]))
            offset += size
        del data
        os.remove(path)
    items.sort(key=lambda item: item[:5])
    parts = [open(os.path.join(directory, f"part-{output:04d}-{bucket:05d}"), "wb", buffering=1 << 20)
             for output in range(num_outputs)]
    for index, item in enumerate(items, first_index):
        parts[index % num_outputs].write(frame(item[5]))
    for f in parts:
        f.close()


def assemble(directory: str, buckets: int, paths: list):
    """Concatenate each output's parts in bucket order into `paths` (local files or tf.io.gfile URLs)."""
    for output, path in enumerate(paths):
        if not is_remote(path) and os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        target = open_file(path, "wb")
        with target:
            for bucket in range(buckets):
                part = os.path.join(directory, f"part-{output:04d}-{bucket:05d}")
                with open(part, "rb") as f:
                    shutil.copyfileobj(f, target, 1 << 22)
                os.remove(part)
