"""A user's JSON and JSON Lines files, parsed (the JSON part of albert.ground.userfiles' rules): duplicate keys, lone
surrogates (`"\\ud800"`), NaN / Infinity, integers past Python's digit limit and nesting past the parser's depth are
each one line naming file:line; numbers may be kept as written (`JsonNumber`) for a label column.
"""

import json
import json.scanner
import re
import sys

from albert.ground.errors import AlbertError, shown
from albert.ground.userfiles import LINE_END, line_of, lines, read_text, where


class _Duplicate(Exception):
    pass


class _Constant(Exception):
    pass


def _object(pairs):
    value = {}
    for key, item in pairs:
        if key in value:
            raise _Duplicate(key)
        value[key] = item
    return value


def _constant(name):
    raise _Constant(name)


class JsonNumber(str):
    """A JSON number with a fraction or exponent, kept as written (`1e400` stays `1e400`, not inf)."""


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant)
_LITERAL = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant, parse_float=JsonNumber)
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_ESCAPES = re.compile(  # a surrogate pair (one character), a lone surrogate (group 1), or any other escape
    r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|(u[dD][89a-fA-F][0-9a-fA-F]{2})|.)", re.S)
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def check_surrogates(text: str, path: str, first_line: int = 1):
    """A JSON text's escapes hold no lone UTF-16 surrogate (`"\\ud800"`: valid JSON, but no character, which no
    tokenizer or UTF-8 file can take): one line naming the line."""
    if not _SURROGATE.search(text):
        return
    for match in _ESCAPES.finditer(text):
        if match.group(1):
            line = first_line + line_of(text, match.start()) - 1
            raise AlbertError(f"{where(path, line)}: the escape {shown(match.group())} is half of a UTF-16 surrogate "
                              "pair, not a character; write the character itself or both halves of its pair")


def _refused(e: BaseException, path: str, line: int, text: str = "", offset: int = 0) -> AlbertError:
    """The one line for what the JSON parser refused (`text` from `offset`: what was being parsed, for positions;
    past a whole text's first line, a refusal the parser gives no position for is found again: `_position`)."""
    if isinstance(e, json.JSONDecodeError):
        line += line_of(text, e.pos) - line_of(text, offset)
        column = e.pos - max(text.rfind("\n", 0, e.pos), text.rfind("\r", 0, e.pos))
        return AlbertError(f"{where(path, line)}: not JSON ({e.msg} at column {column})")
    if offset == 0 and text:
        line += line_of(text, _position(e, text)) - 1
    if isinstance(e, _Duplicate):
        return AlbertError(f"{where(path, line)}: the key {shown(e.args[0])} appears twice in one object; keep one")
    if isinstance(e, _Constant):
        return AlbertError(f"{where(path, line)}: not JSON ({e.args[0]} is not a JSON value; write it as a string)")
    if isinstance(e, RecursionError):
        return AlbertError(f"{where(path, line)}: JSON nested too deep to read (over {sys.getrecursionlimit()} "
                           "levels): refused")
    return AlbertError(f"{where(path, line)}: a number of more than {sys.get_int_max_str_digits()} digits: refused")


_STRING = r'"(?:[^"\\]++|\\.)*+"'
_TOKENS = {  # what the parser met, found outside strings: the first such token is where it stopped
    _Constant: re.compile(rf"{_STRING}|(-?Infinity|NaN)"),
    ValueError: re.compile(rf"{_STRING}|(-?[0-9]{{{sys.get_int_max_str_digits() + 1},}})"),
    RecursionError: re.compile(rf"{_STRING}|([\[{{]|[\]}}])"),
}


def _position(e: BaseException, text: str) -> int:
    """Where in `text` the parser met what `e` says (0 when it cannot be found again)."""
    if isinstance(e, _Duplicate):
        return _duplicate_position(text)
    pattern = next((p for kind, p in _TOKENS.items() if isinstance(e, kind)), None)
    depth, deepest, at = 0, 0, 0
    for match in pattern.finditer(text) if pattern else ():
        token = match.group(1)
        if token is None:
            continue
        if not isinstance(e, RecursionError):
            return match.start()
        depth += 1 if token in "[{" else -1
        if depth > deepest:
            deepest, at = depth, match.start()
    return at


def _duplicate_position(text: str) -> int:
    """Where the object holding a key twice starts: the text parsed again by the pure-Python scanner, each object's
    start kept (only on this error path: the C scanner gives the hook no position)."""
    starts = []

    def parse_object(s_and_end, *args, **kwargs):
        starts.append(s_and_end[1] - 1)
        try:
            return json.decoder.JSONObject(s_and_end, *args, **kwargs)
        except _Duplicate as e:
            e.position = getattr(e, "position", starts[-1])
            raise
        finally:
            starts.pop()

    decoder = json.JSONDecoder(object_pairs_hook=_object, parse_constant=float)
    decoder.parse_object = parse_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    try:
        decoder.decode(text)
    except _Duplicate as e:
        return getattr(e, "position", 0)
    except (ValueError, RecursionError):
        pass
    return 0


def parse_json(text: str, path: str, line: int = 1, literal: bool = False):
    """One JSON value (a whole file, or the JSON Lines row on `line`), checked as the module docstring says;
    `literal`: numbers with a fraction or exponent as `JsonNumber`s, as written."""
    check_surrogates(text, path, line)
    try:
        return (_LITERAL if literal else _DECODER).decode(text)
    except (ValueError, RecursionError, _Duplicate, _Constant) as e:
        raise _refused(e, path, line, text) from None


def load_json(path: str, what: str = "JSON file"):
    """A user's JSON file, whole (a SQuAD file, predictions)."""
    return parse_json(read_text(path, what), path)


def json_values(text: str, path: str) -> list:
    """(line, value) of a text holding one JSON value, or one value a line (JSON Lines); none for a blank text."""
    if not text.strip():
        return []
    check_surrogates(text, path)
    try:
        return [(1, _DECODER.decode(text))]
    except json.JSONDecodeError as e:
        if e.msg != "Extra data":
            raise _refused(e, path, 1, text) from None
    except (ValueError, RecursionError, _Duplicate, _Constant) as e:
        raise _refused(e, path, 1, text) from None
    return list(json_lines(text, path))


def json_lines(text: str, path: str, literal: bool = False):
    """(line, value) of each non-blank line of a JSON Lines text."""
    for number, line in enumerate(lines(text), 1):
        if line.strip():
            yield number, parse_json(line, path, number, literal)


def json_array_items(text: str, path: str, not_array: str, literal: bool = False):
    """(line each item starts on, item) of a JSON text holding one array, parsed item by item; `not_array`: the
    message when it holds something else; `literal`: as `parse_json`'s."""
    decoder = _LITERAL if literal else _DECODER
    check_surrogates(text, path)
    position, line, counted = _WHITESPACE.match(text).end(), 1, 0

    def line_at(offset: int) -> int:
        nonlocal line, counted
        line += len(LINE_END.findall(text, counted, offset))
        counted = offset
        return line

    if not text.startswith("[", position):
        raise AlbertError(f"{where(path)}: {not_array}")
    position = _WHITESPACE.match(text, position + 1).end()
    if text.startswith("]", position):
        position += 1
    else:
        while True:
            start = line_at(position)
            try:
                item, position = decoder.raw_decode(text, position)
            except (ValueError, RecursionError, _Duplicate, _Constant) as e:
                raise _refused(e, path, start, text, position) from None
            yield start, item
            position = _WHITESPACE.match(text, position).end()
            if text.startswith(",", position):
                position = _WHITESPACE.match(text, position + 1).end()
            elif text.startswith("]", position):
                position += 1
                break
            else:
                raise AlbertError(f"{where(path, line_at(position))}: not JSON (expected ',' or ']' after an item)")
    if _WHITESPACE.match(text, position).end() != len(text):
        raise AlbertError(f"{where(path, line_at(position))}: not JSON (text after the array's closing ']')")
