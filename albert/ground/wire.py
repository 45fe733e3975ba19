"""The protocol buffer wire format, read by hand: for the few messages read without generated code or TensorFlow
(a checkpoint's `.index` entries, a SentencePiece model's pieces), and a field of one replaced (a SentencePiece
model's normalizer)."""

import struct


class WireError(ValueError):
    """Bytes that are not the message they should be."""


def varint(data: bytes, at: int) -> tuple:
    """(value, position after it) of the base-128 varint at `at`."""
    value, shift = 0, 0
    while True:
        if at >= len(data) or shift > 63:
            raise WireError("a varint runs past the end of its message")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at


def fields(message: bytes):
    """(field number, value) of every field of a message, in order: an int for varints, bytes for length-delimited
    fields, a float for 32-bit ones and an int for 64-bit ones."""
    for number, value, _, _ in _fields_at(message):
        yield number, value


def _fields_at(message: bytes):
    """(field number, value, start, end) of every field, `start:end` its bytes with the tag."""
    at = 0
    while at < len(message):
        start = at
        tag, at = varint(message, at)
        kind, number = tag & 7, tag >> 3
        if kind == 0:
            value, at = varint(message, at)
        elif kind == 2:
            length, at = varint(message, at)
            value, at = message[at:at + length], at + length
        elif kind in (5, 1):
            width = 4 if kind == 5 else 8
            if at + width > len(message):
                raise WireError(f"field {number}'s {width * 8}-bit value runs past the end of its message")
            value, at = struct.unpack_from("<f" if kind == 5 else "<Q", message, at)[0], at + width
        else:
            raise WireError(f"field {number} has wire type {kind}, which no message here uses")
        if at > len(message):
            raise WireError("a field runs past the end of its message")
        yield number, value, start, at


def encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def length_delimited(number: int, payload: bytes) -> bytes:
    """A length-delimited field (bytes, string or message) with its tag."""
    return encode_varint(number << 3 | 2) + encode_varint(len(payload)) + payload


def varint_field(number: int, value: int) -> bytes:
    """A varint field (int, enum, bool) with its tag."""
    return encode_varint(number << 3) + encode_varint(value)


def replace_field(message: bytes, number: int, field: bytes) -> bytes:
    """`message` with its field `number` (every occurrence) replaced by `field` (encoded, with its tag: see
    length_delimited, varint_field) where the first occurrence was (at the end if there was none); every other
    field's bytes unchanged."""
    out, placed = bytearray(), False
    for found, _, start, end in _fields_at(message):
        if found != number:
            out += message[start:end]
        elif not placed:
            out += field
            placed = True
    return bytes(out if placed else out + field)


def rewrite_fields(message: bytes, number: int, rewrite) -> bytes:
    """`message` with each field `number` replaced by `rewrite(value)` (the field encoded with its tag, or None to
    keep it as it is); every other field's bytes unchanged."""
    out = bytearray()
    for found, value, start, end in _fields_at(message):
        new = rewrite(value) if found == number else None
        out += message[start:end] if new is None else new
    return bytes(out)
