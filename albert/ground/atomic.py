"""Files and directories written whole or not at all, and what a killed writer left behind.

Every temporary name carries its writer's pid (`<final>.tmp-<pid>`, `<dir>.old-<pid>`, `.<name>.spill-<pid>-...`,
`.<name>.corpus-<pid>-...`); `remove_leftovers` deletes those whose writer is no longer running, and TensorFlow's
`<checkpoint>_temp` directories, which a run killed mid-save leaves behind.
"""

import contextlib
import ctypes
import os
import re
import shutil
import signal

from albert.ground.paths import is_remote, open_file

# The pid ends the name or is followed by `-` (tempfile's letters) or `.` (a suffix): `notes.tmp-2024x` is not ours.
_PID = re.compile(r"(?:\.tmp-|\.old-|\.spill-|\.corpus-)(\d+)(?=$|[-.])")
# TensorFlow's sharded save: `<checkpoint prefix>_temp/part-<i>-of-<n>.index / .data-...`; a folder of that name
# holding anything else is a user's, and stays.
_TF_TEMP = re.compile(r"[\w.-]*ckpt[\w.-]*_temp")
_TF_PART = re.compile(r"part-\d+-of-\d+(?:\.index|\.data-\d+-of-\d+)?(?:\.tempstate\d+)?")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_leftovers(directory: str, prefix: str = "", tf_temp: bool = False) -> list:
    """Remove, in `directory`, the temporary files and directories (names starting with `prefix`, or `.prefix`)
    whose writer's pid is dead, and with `tf_temp` TensorFlow's `*_temp` checkpoint directories (call it only while
    holding the directory: albert.ground.rundir). Returns what was removed."""
    removed = []
    if not directory or is_remote(directory) or not os.path.isdir(directory):
        return removed
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        match = _PID.search(name)
        stale = (match is not None and name.lstrip(".").startswith(prefix) and int(match.group(1)) != os.getpid()
                 and not alive(int(match.group(1))))
        if tf_temp and _TF_TEMP.fullmatch(name) and _holds_only_shards(path):
            stale = True
        if stale:
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.remove(path)
            removed.append(name)
    return removed


def _holds_only_shards(path: str) -> bool:
    """A directory (not a link) whose every entry is a file of TensorFlow's sharded checkpoint save."""
    if not os.path.isdir(path) or os.path.islink(path):
        return False
    try:
        return all(_TF_PART.fullmatch(entry) and os.path.isfile(os.path.join(path, entry))
                   for entry in os.listdir(path))
    except OSError:
        return False


def die_with_parent():
    """In a forked worker: have the kernel kill this process when its parent dies (Linux), so that a killed
    command leaves no worker behind; exit at once if the parent is already gone."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() == 1:
        os._exit(1)


@contextlib.contextmanager
def new_directories(path: str):
    """Make directory `path` and its missing parents; when the block fails, remove again those made here that are
    still empty, so that a failed command leaves nothing behind."""
    made, parent = [], os.path.abspath(path)
    while not os.path.exists(parent):
        made.append(parent)
        parent = os.path.dirname(parent)
    os.makedirs(path, exist_ok=True)
    try:
        yield
    except BaseException:
        for directory in made:  # the deepest first
            try:
                os.rmdir(directory)
            except OSError:
                break
        raise


@contextlib.contextmanager
def replacing_files(paths: list, suffix: str = ""):
    """Yield a temporary name beside each of `paths` (`<path>.tmp-<pid><suffix>`) to write; when the block succeeds
    each is renamed to its path, in order (the last one last: make it the file readers look for), when it fails
    they are removed. Local paths through os, remote ones (gs://...) through tf.io.gfile."""
    temps = [f"{path}.tmp-{os.getpid()}{suffix}" for path in paths]
    try:
        yield temps
        for tmp, path in zip(temps, paths):
            _file_system(path).rename(tmp, path)
    finally:
        for tmp in temps:
            fs = _file_system(tmp)
            if fs.exists(tmp):
                with contextlib.suppress(OSError):
                    fs.remove(tmp)


@contextlib.contextmanager
def replacing_file(path: str, suffix: str = ""):
    """`replacing_files` for one path: yields its temporary name."""
    with replacing_files([path], suffix) as (tmp,):
        yield tmp


class _Local:
    rename, exists, remove = staticmethod(os.replace), staticmethod(os.path.exists), staticmethod(os.remove)


class _Remote:
    @staticmethod
    def rename(a, b):
        import tensorflow as tf

        tf.io.gfile.rename(a, b, overwrite=True)

    @staticmethod
    def exists(path):
        import tensorflow as tf

        return tf.io.gfile.exists(path)

    @staticmethod
    def remove(path):
        import tensorflow as tf

        tf.io.gfile.remove(path)


def _file_system(path: str):
    return _Remote if is_remote(path) else _Local


def write_text(path: str, text: str):
    """Write a small text file whole or not at all (local or gs://)."""
    with replacing_file(path) as tmp, open_file(tmp, "w") as f:
        f.write(text)


def copy_file(source: str, path: str):
    """Copy `source` to `path` whole or not at all (local paths)."""
    with replacing_file(path) as tmp:
        shutil.copyfile(source, tmp)
