"""The checks of a Python caller's arguments, in one place: every public entry point on raw text
(`AlbertPretrainer.fill_mask`, `AlbertSquadV1/V2.answer`, `AlbertMultipleChoice.choose`, the raw-text `predict`)
checks its arguments here first.

Each check raises AlbertError (a ValueError) with one sentence that names the entry point, the argument and, inside a
list, the position (`texts[2]`, `x[0][1]`), and says what it takes: a wrong type is the same error as a value out
of range, never a TypeError from deep inside. What a message quotes is cut to a bounded length (`shown`); a value
that is not a string, a number or None is named by its type (`a value of type dict`), so a message never holds
another object's repr.
"""

import math
import numbers
import re

from albert.ground.errors import AlbertError, shown

_SURROGATE = re.compile("[\ud800-\udfff]")  # half of a UTF-16 pair: no UTF-8 encodes it (bytes decoded loosely)

_ARRAY_TYPES = ("ndarray",)  # NumPy's array, named here without importing NumPy


def described(value) -> str:
    """A value as a message names it: a string, number, bool or None quoted as written (cut to a bounded length),
    anything else by its type (`a value of type dict`)."""
    if value is None or isinstance(value, (str, bytes, bool, numbers.Number)):
        return shown(value)
    return f"a value of type {type(value).__name__}"


def _is_array(value) -> bool:
    return type(value).__name__ in _ARRAY_TYPES and hasattr(value, "ndim") and hasattr(value, "tolist")


def _sequence(value) -> list | None:
    """A list, a tuple or a one-dimensional array as a list; anything else None."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if _is_array(value) and value.ndim == 1:
        return list(value)
    return None


def _string(where: str, position: str, value) -> str:
    """One string, as a plain str; a lone surrogate in it refused (no tokenizer can encode it)."""
    if not isinstance(value, str):
        raise AlbertError(f"{where}: {position} is {described(value)}, not a string")
    found = _SURROGATE.search(value)
    if found:
        raise AlbertError(f"{where}: {position} holds a lone surrogate (U+{ord(found.group()):04X} at character "
                          f"{found.start()}), which is not text; decode its bytes strictly (errors='strict')")
    return str(value)


def texts(where: str, name: str, value, single: bool = True) -> tuple:
    """(the strings, one string given): `value` is a string (with `single`) or a list, tuple or one-dimensional
    array of strings; an empty list is an empty list."""
    if isinstance(value, str):
        if not single:
            raise AlbertError(f"{where}: {name} is one string, {described(value)}; pass a list of strings")
        return [_string(where, name, value)], True
    items = _sequence(value)
    if items is None:
        taken = "a string or a list of strings" if single else "a list of strings"
        raise AlbertError(f"{where}: {name} is {described(value)}, not {taken}")
    return [_string(where, f"{name}[{index}]", item) for index, item in enumerate(items)], False


def text(where: str, name: str, value) -> str:
    """Exactly one string."""
    return _string(where, name, value)


def text_lists(where: str, name: str, value) -> list:
    """A list (tuple, array) of lists of strings, as lists: `options` of several questions."""
    rows = _sequence(value)
    if rows is None:
        raise AlbertError(f"{where}: {name} is {described(value)}, not a list of lists of strings")
    checked = []
    for index, row in enumerate(rows):
        items = None if isinstance(row, str) else _sequence(row)
        if items is None:
            raise AlbertError(f"{where}: {name}[{index}] is {described(row)}, not a list of strings")
        checked.append([_string(where, f"{name}[{index}][{position}]", item) for position, item in enumerate(items)])
    return checked


def _batch_text(where: str, position: str, value):
    """One text of a batch: a string, or bytes holding UTF-8."""
    if isinstance(value, bytes):
        try:
            value.decode("utf-8")
        except UnicodeDecodeError as error:
            raise AlbertError(f"{where}: {position} is {described(value)}, not UTF-8 (byte "
                              f"0x{value[error.start]:02x} at {error.start}); pass a str") from None
    else:
        _string(where, position, value)


def text_batch(where: str, name: str, value) -> list:
    """A batch of texts as Keras' `predict` takes it: a list (or tuple) of strings, or of lists of strings, every row
    as long as the first (a text may be bytes holding UTF-8). Returns the batch's shape, [0] when empty."""
    if isinstance(value, (str, bytes)):
        raise AlbertError(f"{where}: {name} is one string, {described(value)}; pass a list of strings (a batch)")
    rows = _sequence(value)
    if rows is None:
        raise AlbertError(f"{where}: {name} is {described(value)}, not a list of strings")
    if not rows:
        return [0]
    nested = _sequence(rows[0]) is not None and not isinstance(rows[0], (str, bytes))
    width = None
    for index, row in enumerate(rows):
        if not nested:
            _batch_text(where, f"{name}[{index}]", row)
            continue
        items = None if isinstance(row, (str, bytes)) else _sequence(row)
        if items is None:
            raise AlbertError(f"{where}: {name}[{index}] is {described(row)}, not a list of strings like "
                              f"{name}[0]")
        if not items:
            raise AlbertError(f"{where}: {name}[{index}] is an empty list; every row needs at least one string")
        for position, item in enumerate(items):
            _batch_text(where, f"{name}[{index}][{position}]", item)
        if width is None:
            width = len(items)
        elif len(items) != width:
            raise AlbertError(f"{where}: {name}[{index}] holds {len(items)} strings and {name}[0] {width}; every row "
                              "needs the same number")
    return [len(rows)] if not nested else [len(rows), width]


def whole(where: str, name: str, value, minimum: int, optional: bool = False, maximum: int | None = None):
    """A whole number (not a bool) of at least `minimum` (and at most `maximum`), as an int; with `optional`, None
    too (the default)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum or (
            maximum is not None and value > maximum):
        span = f"of at least {minimum}" if maximum is None else f"from {minimum} to {maximum}"
        default = " (or None: the default)" if optional else ""
        raise AlbertError(f"{where}: {name} must be a whole number {span}{default}, got {described(value)}")
    return int(value)


def finite(where: str, name: str, value) -> float:
    """A real number (not a bool) that is finite: not NaN, not infinite."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise AlbertError(f"{where}: {name} must be a finite number, got {described(value)}")
    return float(value)


def flag(where: str, name: str, value) -> bool:
    """True or False (NumPy's bool too)."""
    numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")
    if not (isinstance(value, bool) or numpy_bool):
        raise AlbertError(f"{where}: {name} must be True or False, got {described(value)}")
    return bool(value)
