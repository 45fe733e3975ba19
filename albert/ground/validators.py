"""The checks of a command line's values that need no TensorFlow, each raising AlbertError with one line that names
the flag: ranges, output paths that can be written. (A field's own range check, and whether it is required, are
declared with the field: albert.ground.settings_flags.)"""

import math
import os

from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote


def check_probability(name: str, value: float):
    if not 0.0 <= value <= 1.0:
        raise AlbertError(f"--{name} must be a probability in [0, 1], got {value}")


def check_at_least(name: str, value: int, minimum: int, why: str = ""):
    if value < minimum:
        raise AlbertError(f"--{name} must be at least {minimum}, got {value}" + (f" ({why})" if why else ""))


def check_finite(name: str, value: float, minimum: float = 0.0):
    """A float flag that must be a finite number of at least `minimum` (a learning rate: not NaN, not negative)."""
    if not math.isfinite(value) or value < minimum:
        raise AlbertError(f"--{name} must be a finite number of at least {minimum:g}, got {value}")


def check_output_path(flag: str, path: str, inputs: tuple = (), directory: bool = False):
    """Before any work: a local output `path` (a file, or with `directory` a directory the command writes files
    into, such as a feature cache) can be written: it is not an input, not of the other kind, and its parent is a
    directory that exists or can be made and can be written. Remote paths (gs://...) are left to the writer. (A
    directory written whole, an export, is albert.ground.outputs'.)"""
    if not path or is_remote(path):
        return
    real = os.path.realpath(path)
    for source in inputs:
        if source and not is_remote(source) and os.path.realpath(source) == real:
            raise AlbertError(f"--{flag} {path} is an input of this command: write the output elsewhere")
        if directory and source and not is_remote(source) and os.path.realpath(source).startswith(real + os.sep):
            raise AlbertError(f"--{flag} {path} holds {source}, an input of this command: write the output "
                              "elsewhere")
    if os.path.isdir(path) and not directory:
        raise AlbertError(f"--{flag} {path} is a directory; pass a file name")
    if os.path.exists(path) and not os.path.isdir(path) and directory:
        raise AlbertError(f"--{flag} {path} is a file; pass a directory")
    check_parent_writable(f"--{flag}", path)


def check_parent_writable(name: str, path: str):
    """The nearest existing folder above `path` is a directory this process may write in (`name`: how messages
    call the path)."""
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise AlbertError(f"{name} {path}: {parent} is a file, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise AlbertError(f"{name} {path}: {parent} is not writable")


def check_output_files(flag: str, paths: list, inputs: tuple = ()):
    """check_output_path for each of a comma-separated flag's files, none named twice."""
    seen = set()
    for path in paths:
        key = path if is_remote(path) else os.path.realpath(path)
        if key in seen:
            raise AlbertError(f"--{flag} names {path} twice; give each output once")
        seen.add(key)
        check_output_path(flag, path, inputs)
