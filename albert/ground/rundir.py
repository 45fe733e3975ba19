"""What every runner does to its output directory, once: one writer at a time.

`exclusive(output_dir)` holds an advisory lock (`fcntl.flock`) on `<output_dir>/.albert.lock` for the whole run, so
a second run on the same directory stops at once with one line naming the first (its pid, host, command and start
time). The kernel drops the lock of a killed run, so the next run takes the directory over (and says so, and removes
the temporary files and half-written checkpoints the killed run left: albert.ground.atomic.remove_leftovers); the lock
file is removed when the run ends, and a directory the run created and left empty (a bad flag found after the lock
was taken) is removed too; a run that fails before its first checkpoint in a new or empty directory removes what it
wrote there (`remove_unfinished`). In a multi-worker run each worker locks its own name (`.albert.lock.<task>_<index>`),
as each keeps its own checkpoints. Remote paths (gs://...) are not locked: flock needs a local file system.
"""

import contextlib
import fcntl
import json
import os
import shutil
import socket
import sys
import time

from albert.ground.atomic import remove_leftovers
from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote

LOCK = ".albert.lock"
CHECKPOINT = "model.ckpt"  # the training loop's checkpoints: model.ckpt-<step>
BEST_CHECKPOINT = "model.ckpt-best"  # the best evaluated one, under the original's names (and released models')
BEST_TRIAL = "best_trial.txt"  # `global_step:best_step:best_value` of the evaluations so far, as the original


def lock_name() -> str:
    """`.albert.lock` for the chief (or a single-process run), `.albert.lock.worker_<i>` for the other workers."""
    try:
        task = json.loads(os.environ.get("TF_CONFIG") or "{}").get("task") or {}
    except ValueError:
        task = {}
    kind, index = task.get("type"), int(task.get("index", 0) or 0)
    if kind in (None, "chief") or (kind == "worker" and index == 0):
        return LOCK
    return f"{LOCK}.{kind}_{index}"


@contextlib.contextmanager
def exclusive(output_dir: str):
    if not output_dir or is_remote(output_dir):
        yield
        return
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise AlbertError(f"{output_dir}: --output_dir is a file; pass a directory")
    created = not os.path.exists(output_dir)
    made = _missing_parents(output_dir)  # the folders above it this run makes, removed with it if left empty
    fresh = created or not os.listdir(output_dir)  # nothing of an earlier run: what is here at a failure is ours
    try:
        os.makedirs(output_dir, exist_ok=True)
        path = os.path.join(output_dir, lock_name())
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise AlbertError(f"{output_dir}: cannot write to --output_dir ({e.strerror})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "a run that is starting"
        os.close(fd)
        raise AlbertError(f"{output_dir}: in use by another run ({holder}); wait for it to end or pass another "
                          "--output_dir") from None
    previous = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
    if previous:
        print(f"{output_dir}: taking over from a run that ended without releasing it ({previous})", file=sys.stderr)
    # A killed run's temporary files (`*.tmp-<pid>`) and, for the chief, TensorFlow's half-written `*_temp` checkpoint
    # directories (no other worker writes before the chief has started).
    removed = remove_leftovers(output_dir, tf_temp=lock_name() == LOCK)
    if removed:
        print(f"{output_dir}: removed what a killed run left: {', '.join(sorted(removed))}", file=sys.stderr)
    command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}, started "
                  f"{time.strftime('%Y-%m-%d %H:%M:%S')}: {command[:300]}\n".encode(), 0)
    try:
        yield
    except Exception:
        if fresh:
            remove_unfinished(output_dir)
        raise
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # still holding the lock: a run waiting on this inode fails, a new one makes its own
        os.close(fd)
        with contextlib.suppress(OSError):
            if created and not os.listdir(output_dir):
                os.rmdir(output_dir)
                for parent in made:
                    os.rmdir(parent)  # only an empty one: a refused run leaves no folder it made


def _missing_parents(path: str) -> list:
    """The folders above `path` that do not exist yet, deepest first."""
    missing, parent = [], os.path.dirname(os.path.abspath(path))
    while parent and not os.path.exists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    return missing


def remove_unfinished(output_dir: str):
    """What a run that failed before its first checkpoint wrote in its (new or empty) directory: its copies of the
    config and SentencePiece model, feature records, summaries. Once a checkpoint is there, nothing is removed (a
    rerun resumes from it)."""
    for _, _, files in os.walk(output_dir):  # a --seeds run's checkpoints are in seed_<s>/
        if any(name.startswith((CHECKPOINT, "checkpoint")) for name in files):
            return
    for name in os.listdir(output_dir):
        if name.startswith(LOCK):
            continue
        target = os.path.join(output_dir, name)
        with contextlib.suppress(OSError):
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            else:
                os.unlink(target)
