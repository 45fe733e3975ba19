"""Files and directories written whole or not at all, and what a killed writer left behind.

Every temporary name carries its writer's pid (`<final>.tmp-<pid>`, `.<name>.spill-<pid>-...`,
`.<name>.corpus-<pid>-...`); `remove_leftovers` deletes those whose writer is no longer running, and TensorFlow's
`<checkpoint>_temp` directories, which a run killed mid-save leaves behind.
"""

import contextlib
import ctypes
import os
import re
import shutil
import signal

_PID = re.compile(r"(?:\.tmp-|\.spill-|\.corpus-)(\d+)")


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
    holding the directory: albert.rundir). Returns what was removed."""
    removed = []
    if not directory or "://" in directory or not os.path.isdir(directory):
        return removed
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        match = _PID.search(name)
        stale = (match is not None and name.lstrip(".").startswith(prefix) and int(match.group(1)) != os.getpid()
                 and not alive(int(match.group(1))))
        if tf_temp and name.endswith("_temp") and os.path.isdir(path):
            stale = True
        if stale:
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.remove(path)
            removed.append(name)
    return removed


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
def replacing_directory(path: str):
    """Yield a fresh temporary directory next to `path`; when the block succeeds it replaces `path` (an existing one
    is removed), when it fails nothing is left behind. A killed earlier writer's temporary is removed first."""
    path = path.rstrip("/")
    remove_leftovers(os.path.dirname(os.path.abspath(path)), os.path.basename(path) + ".tmp-")
    tmp = f"{path}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        yield tmp
        if os.path.exists(path):
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def replacing_file(path: str):
    """Yield a temporary name beside `path` (`<path>.tmp-<pid>`) to write; when the block succeeds it is renamed to
    `path`, when it fails it is removed. Local paths through os, remote ones (gs://...) through tf.io.gfile."""
    tmp = f"{path}.tmp-{os.getpid()}"
    if "://" in path:
        import tensorflow as tf

        rename, exists, remove = (lambda a, b: tf.io.gfile.rename(a, b, overwrite=True)), tf.io.gfile.exists, \
            tf.io.gfile.remove
    else:
        rename, exists, remove = os.replace, os.path.exists, os.remove
    try:
        yield tmp
        rename(tmp, path)
    finally:
        if exists(tmp):
            with contextlib.suppress(OSError):
                remove(tmp)


def write_text(path: str, text: str):
    """Write a small text file whole or not at all (local or gs://)."""
    with replacing_file(path) as tmp:
        if "://" in path:
            import tensorflow as tf

            with tf.io.gfile.GFile(tmp, "w") as f:
                f.write(text)
        else:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)


def copy_file(source: str, path: str):
    """Copy `source` to `path` whole or not at all (local paths)."""
    with replacing_file(path) as tmp:
        shutil.copyfile(source, tmp)
