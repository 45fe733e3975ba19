"""Output directories written whole, and never over what the command did not write.

An export or a conversion writes its directory under a temporary name beside it (`<dir>.tmp-<pid>`) and moves it
into place when complete. It takes the place of `<dir>` only when `<dir>` is absent, empty, or an earlier output of
the same command: one holding the marker this module writes in each output (`MARKER`: the command and every file it
wrote) and nothing else, or, written by a version without the marker, one whose files are all among those of the
new output. Anything else is refused in one line naming the directory and the files in it, nothing touched: before
any work where that can be told (`check`), and again at the last moment before anything is moved.

Always refused: `/`, the working directory and the home directory (or a directory above either), and a directory
that is, or holds, one of the command's inputs. A single file the user names as an output (a TFRecord, a
checkpoint prefix, Keras' `save(path)`) is albert.ground.atomic's, and may be replaced; a directory never is
emptied.

Writers nest: a directory written inside an output that is being written (a runner's export holding a serving
SavedModel and `text/`) goes straight into the outer temporary, which is moved into place once, whole.
"""

import contextlib
import errno
import fnmatch
import json
import os
import re
import shutil

from albert.ground import interrupts
from albert.ground.atomic import alive
from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote
from albert.ground.validators import check_parent_writable

MARKER = ".albert-output.json"
# What a version of this project without the marker wrote at the top of an output directory (exports, conversions):
# an unmarked directory holding only these may be an earlier output, and is checked file by file at the end.
EARLIER_OUTPUTS = ("saved_model.pb", "fingerprint.pb", "variables", "assets", "assets.extra", "model.tflite",
                   "model.onnx", "text", "encoder", "preprocessor", "mlm", "fill_mask", "config.json",
                   "tokenizer_config.json", "model.safetensors", "spiece.model", "albert_config.json", "checkpoint",
                   "model.ckpt*", "*.model", "*.vocab", "labels.txt", "*.tflite")
_SHOWN = 5  # files named in a refusal

_writing = []  # the temporaries this process is writing, innermost last


def _files(directory: str) -> list:
    """Every file (and symbolic link) under `directory`, as sorted relative paths; an empty directory as `name/`."""
    found = []
    for root, dirs, files in os.walk(directory):
        for name in dirs:
            path = os.path.join(root, name)
            if os.path.islink(path):
                found.append(os.path.relpath(path, directory))
            elif not os.listdir(path):
                found.append(os.path.relpath(path, directory) + "/")
        found.extend(os.path.relpath(os.path.join(root, name), directory) for name in files)
    return sorted(found)


def _marker(directory: str) -> dict | None:
    """The marker of `directory`, or None (absent, or not one this module wrote)."""
    try:
        with open(os.path.join(directory, MARKER), encoding="utf-8") as f:
            marker = json.load(f)
    except (OSError, ValueError):
        return None
    if not (isinstance(marker, dict) and isinstance(marker.get("command"), str)
            and isinstance(marker.get("files"), list) and all(isinstance(f, str) for f in marker["files"])):
        return None
    return marker


def _listing(paths: list) -> str:
    shown = ", ".join(repr(p) if any(c in p for c in ",' \n") else p for p in paths[:_SHOWN])
    return shown + (f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else "")


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _refuse_always(path: str, name: str, inputs):
    real = os.path.realpath(path)
    places = (("/", "the root directory"), (os.path.realpath(os.getcwd()), "the working directory"),
              (os.path.realpath(os.path.expanduser("~")), "your home directory"))
    for place, what in places:
        if _within(place, real):
            what = what if place == real else f"above {what}"
            raise AlbertError(f"{name} {path} is {what}: write the output into a new directory of its own "
                              f"(e.g. {os.path.join(path, 'export')})")
    for source in inputs:
        if source and not is_remote(source) and _within(os.path.realpath(source), real):
            what = "is" if os.path.realpath(source) == real else f"holds {source},"
            raise AlbertError(f"{name} {path} {what} an input of this command: write the output into a new "
                              "directory")
    if os.path.exists(path) and not os.path.isdir(path):
        raise AlbertError(f"{name} {path} is a file; pass a directory")


def _others(path: str, command: str, new_files: list | None) -> list:
    """What `path` holds that this command did not write (empty: it may be replaced). `new_files`: the new
    output's files, for a directory without the marker (None: not written yet, judge by EARLIER_OUTPUTS)."""
    present = [f for f in _files(path) if f != MARKER]
    if not present:
        return []
    marker = _marker(path)
    if marker is not None:
        if marker["command"] != command:
            return present
        return [f for f in present if f not in set(marker["files"])]
    if new_files is None:
        return [f for f in present
                if not any(fnmatch.fnmatch(f.split(os.sep)[0].rstrip("/"), p) for p in EARLIER_OUTPUTS)]
    written = [f for f in new_files if f != MARKER]
    if _tops(present) != _tops(written):  # not laid out as this command's output: a user's files of those names
        return present
    return [f for f in present if f not in set(written)]


def _tops(files: list) -> set:
    return {f.split(os.sep)[0].rstrip("/") for f in files}


def _refusal(path: str, name: str, command: str, others: list) -> AlbertError:
    marker = _marker(path)
    if marker is not None and marker["command"] != command:
        return AlbertError(f"{name} {path} holds the output of {marker['command']}, not of {command}: pass a new or "
                           "empty directory (nothing was written)")
    return AlbertError(f"{name} {path} holds files this command did not write ({_listing(others)}): pass a new or "
                       "empty directory (nothing was written)")


def check(path: str, command: str, name: str, inputs=()):
    """Before any work: AlbertError unless `path` may become `command`'s output (module docstring). `name`: how the
    messages call it (`--export_dir`, `filepath`); `inputs`: the command's input paths."""
    if not path or is_remote(path) or _inside_an_output(path):
        return
    _refuse_always(path, name, inputs)
    if os.path.isdir(path):
        others = _others(path, command, None)
        if others:
            raise _refusal(path, name, command, others)
    check_parent_writable(name, path)


def _inside_an_output(path: str) -> bool:
    real = os.path.realpath(path)
    return any(_within(real, os.path.realpath(tmp)) for tmp in _writing)


@contextlib.contextmanager
def writing(path: str, command: str, name: str, inputs=()):
    """Yield the directory to write `command`'s output in: a temporary beside `path`, moved into place when the
    block succeeds (with the marker), removed when it fails; inside an output being written, `path` itself."""
    if not os.fspath(path):
        raise AlbertError(f"{name} is empty; pass the directory to write")
    path = os.fspath(path).rstrip("/") or "/"
    if _inside_an_output(path):
        os.makedirs(path, exist_ok=True)
        yield path
        return
    if os.path.islink(path):
        path = os.path.realpath(path)  # a link is the user's: the output goes where it points, the link stays
    check(path, command, name, inputs)
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    base = os.path.basename(os.path.abspath(path))
    _remove_stale(parent, base)
    tmp = os.path.join(parent, f"{base}.tmp-{os.getpid()}")
    if os.path.lexists(tmp):
        raise AlbertError(f"{name} {path}: {tmp} is in the way (this process's temporary name); move it")
    os.makedirs(tmp)
    _writing.append(tmp)
    try:
        with open(os.path.join(tmp, MARKER), "w", encoding="utf-8") as f:
            json.dump({"command": command, "files": []}, f)  # whose temporary this is, should the writer die
        yield tmp
        interrupts.check()  # a stop request swallowed on the way (in a finalizer) still keeps the output out
        _writing.remove(tmp)
        written = [f for f in _files(tmp) if f != MARKER]
        with open(os.path.join(tmp, MARKER), "w", encoding="utf-8") as f:
            json.dump({"command": command, "files": written}, f, indent=1)
            f.write("\n")
        _move_into_place(tmp, path, name, command, written)
    finally:
        if tmp in _writing:
            _writing.remove(tmp)
        shutil.rmtree(tmp, ignore_errors=True)


def _remove_stale(parent: str, base: str):
    """Remove what a killed writer of `base` left beside it: `<base>.tmp-<pid>` and `<base>.old-<pid>` directories
    of a process no longer running that hold this module's marker (a directory of that name without it is not
    ours, and stays)."""
    pattern = re.compile(re.escape(base) + r"\.(?:tmp|old)-(\d+)")
    for entry in os.listdir(parent):
        match = pattern.fullmatch(entry)
        target = os.path.join(parent, entry)
        if (match and int(match.group(1)) != os.getpid() and not alive(int(match.group(1)))
                and os.path.isdir(target) and not os.path.islink(target) and _marker(target) is not None):
            shutil.rmtree(target, ignore_errors=True)


def _move_into_place(tmp: str, path: str, name: str, command: str, written: list):
    """Replace `path` by `tmp`, after checking once more that `path` holds nothing but the command's files."""
    if os.path.isdir(path):
        others = _others(path, command, written)
        if others:
            raise _refusal(path, name, command, others)
    if not os.path.lexists(path):
        os.replace(tmp, path)
        return
    old = f"{path}.old-{os.getpid()}"
    if os.path.lexists(old):
        raise AlbertError(f"{name} {path}: {old} is in the way (this process's name for the earlier output); move it")
    try:
        os.replace(path, old)
    except OSError as e:
        if e.errno not in (errno.EBUSY, errno.EXDEV, errno.EPERM, errno.EACCES):
            raise
        _move_entries(tmp, path)  # a mount point (a container's volume), or a directory one may not rename
        return
    try:
        os.replace(tmp, path)
    except OSError:
        os.replace(old, path)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _move_entries(tmp: str, path: str):
    """Put the new output into the directory `path` itself, entry by entry: its earlier files (all the command's
    own, checked) removed first."""
    for entry in os.listdir(path):
        target = os.path.join(path, entry)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        else:
            os.remove(target)
    for entry in os.listdir(tmp):
        os.replace(os.path.join(tmp, entry), os.path.join(path, entry))
