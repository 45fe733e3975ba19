"""The protocol buffer wire format, read by hand: for the few messages read without generated code or TensorFlow
(a checkpoint's `.index` entries, a SentencePiece model's pieces)."""

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
    at = 0
    while at < len(message):
        tag, at = varint(message, at)
        kind, number = tag & 7, tag >> 3
        if kind == 0:
            value, at = varint(message, at)
        elif kind == 2:
            length, at = varint(message, at)
            value, at = message[at:at + length], at + length
        elif kind == 5:
            value, at = struct.unpack_from("<f", message, at)[0], at + 4
        elif kind == 1:
            value, at = struct.unpack_from("<Q", message, at)[0], at + 8
        else:
            raise WireError(f"field {number} has wire type {kind}, which no message here uses")
        if at > len(message):
            raise WireError("a field runs past the end of its message")
        yield number, value
