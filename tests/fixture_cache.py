"""Heavy shared fixtures built once per run, not once per pytest-xdist worker: `cached(name, build)` builds into
`.test-cache/<name>-<key>/` under a lock, where the key is the SHA-256 of the code that could change what is built
(the package, the command lines, the tests' helpers, the requirements). A worker that finds the directory complete
uses it; one that finds another worker building waits for it; a directory left by a killed build (no `complete`
marker) is removed and built again. A later run with the same code reuses it; any change to that code builds anew,
and older entries of the same name are removed."""

import fcntl
import glob
import hashlib
import os
import shutil

from tests.helpers import ROOT

CACHE = os.environ.get("ALBERT_TEST_CACHE", os.path.join(ROOT, ".test-cache"))
COMPLETE = "complete"


def code_key() -> str:
    """SHA-256 over the bytes (and relative paths) of every file whose change could change a built fixture."""
    patterns = ("albert/**/*.py", "*.py", "tests/*_helpers.py", "tests/helpers.py", "tools/*.py", "requirements*.txt")
    paths = sorted({p for pattern in patterns for p in glob.glob(os.path.join(ROOT, pattern), recursive=True)})
    digest = hashlib.sha256()
    for path in paths:
        digest.update(os.path.relpath(path, ROOT).encode() + b"\0")
        with open(path, "rb") as f:
            digest.update(f.read() + b"\0")
    return digest.hexdigest()[:16]


def cached(name: str, build):
    """`build(directory)`'s result for a directory built once for this code; `build` must return the same value from
    the same directory (it is called again, with `reuse=True`, where the directory was built before)."""
    os.makedirs(CACHE, exist_ok=True)
    directory = os.path.join(CACHE, f"{name}-{code_key()}")
    with open(os.path.join(CACHE, f"{name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes: a killed builder releases it too
        if os.path.isfile(os.path.join(directory, COMPLETE)):
            return build(directory, reuse=True)
        for old in glob.glob(os.path.join(CACHE, f"{name}-*")):
            shutil.rmtree(old, ignore_errors=True)
        os.makedirs(directory)
        result = build(directory, reuse=False)
        open(os.path.join(directory, COMPLETE), "w").close()
        return result
