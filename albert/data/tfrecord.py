"""TFRecord files without TensorFlow: framing (length, masked CRC32C of the length, data, masked CRC32C of the
data), for the data generator, which must not pay TensorFlow's start-up or load it before forking workers.
URLs (gs://...) go through tf.io.TFRecordWriter."""

import struct

import google_crc32c

from albert.ground.paths import is_remote

_MASK_DELTA = 0xA282EAD8


def masked_crc32c(data: bytes) -> int:
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame(record: bytes) -> bytes:
    length = struct.pack("<Q", len(record))
    return length + struct.pack("<I", masked_crc32c(length)) + record + struct.pack("<I", masked_crc32c(record))


class TFRecordWriter:
    """`with TFRecordWriter(path) as w: w.write(record)`: the same bytes as tf.io.TFRecordWriter."""

    def __init__(self, path: str):
        if is_remote(path):
            import tensorflow as tf

            self._tf_writer, self._file = tf.io.TFRecordWriter(path), None
        else:
            self._tf_writer, self._file = None, open(path, "wb", buffering=1 << 20)

    def write(self, record: bytes):
        if self._file is not None:
            self._file.write(frame(record))
        else:
            self._tf_writer.write(record)

    def close(self):
        (self._file or self._tf_writer).close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def count_records(path: str) -> int:
    """The number of records of a local TFRecord file, walking the length headers (data and CRCs not read).
    Raises ValueError naming where the framing breaks (a truncated or non-TFRecord file)."""
    count, offset = 0, 0
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        while offset < size:
            f.seek(offset)
            header = f.read(12)
            if len(header) < 12:
                raise ValueError(f"truncated after {count} records ({size - offset} stray bytes at the end)")
            length = struct.unpack("<Q", header[:8])[0]
            if struct.unpack("<I", header[8:])[0] != masked_crc32c(header[:8]):
                raise ValueError(f"record {count + 1} at byte {offset} has a corrupt length header")
            offset += 16 + length
            if offset > size:
                raise ValueError(f"truncated in record {count + 1} (the file ends {offset - size} bytes early)")
            count += 1
    return count
