"""Reading the text and JSON files users give: UTF-8 strictly, every problem one AlbertError naming file and line."""

import json
import sys

from albert.ground.errors import AlbertError
from albert.ground.userfiles import read_bytes


def decode_utf8(data: bytes, path: str) -> str:
    """`data` (the bytes of the text file `path`) as text, without a leading BOM; bytes that are not UTF-8 are one
    AlbertError naming the file, the line and the byte."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise AlbertError(f"{path}:{line}: byte 0x{data[e.start]:02x} at column {column} is not UTF-8; save the file "
                          "as UTF-8") from None


def read_text(path: str, what: str = "file") -> str:
    """A local text file, whole (`what` names it in the errors: "SQuAD file", "predictions", ...), opened as every
    file a user gives (albert.ground.userfiles.read_bytes: a directory, a FIFO, what the OS refused: one line)."""
    return decode_utf8(read_bytes(path, what), path)


# How a malformed JSON file's position is said: a user's data file, and a model directory's config or shard index
# (the form the configs have always used).
DATA, CONFIG = "{path}: malformed JSON at line {line} column {column} ({msg})", \
    "{path}: line {line} column {column}: invalid JSON ({msg})"


def parse_json(text: str, path: str, form: str = DATA):
    """`text` (the file `path`) parsed; a malformed file, or one nested past the parser's depth, one line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise AlbertError(form.format(path=path, line=e.lineno, column=e.colno, msg=e.msg)) from None
    except RecursionError:
        raise AlbertError(too_deep(path)) from None


def too_deep(path: str) -> str:
    """The one line for JSON nested past what Python's parser can follow (a file made to crash its reader)."""
    return f"{path}: JSON nested too deep to read (over {sys.getrecursionlimit()} levels): refused"


def parse_config(text: str, path: str):
    """A model directory's JSON file (a config, a shard index) parsed, its problems in the configs' form."""
    return parse_json(text, path, CONFIG)


def load_config(path: str):
    return parse_config(read_text(path, "JSON file"), path)


def load_json(path: str, what: str = "JSON file"):
    return parse_json(read_text(path, what), path)
