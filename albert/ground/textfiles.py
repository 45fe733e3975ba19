"""Reading the text and JSON files users give: UTF-8 strictly, every problem one AlbertError naming file and line."""

import json
import sys
import os

from albert.ground.errors import AlbertError


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
    """A local text file, whole (`what` names it in the errors: "SQuAD file", "predictions", ...)."""
    if os.path.isdir(path):
        raise AlbertError(f"{path}: is a directory; pass the {what} itself")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise AlbertError(f"{path}: {what} not found") from None
    except OSError as e:
        raise AlbertError(f"{path}: cannot read the {what} ({e.strerror})") from None
    return decode_utf8(data, path)


def parse_json(text: str, path: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise AlbertError(f"{path}: malformed JSON at line {e.lineno} column {e.colno} ({e.msg})") from None
    except RecursionError:
        raise AlbertError(too_deep(path)) from None


def too_deep(path: str) -> str:
    """The one line for JSON nested past what Python's parser can follow (a file made to crash its reader)."""
    return f"{path}: JSON nested too deep to read (over {sys.getrecursionlimit()} levels): refused"


def load_json(path: str, what: str = "JSON file"):
    return parse_json(read_text(path, what), path)
