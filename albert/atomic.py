"""Directories written whole or not at all."""

import contextlib
import os
import shutil


@contextlib.contextmanager
def replacing_directory(path: str):
    """Yield a fresh temporary directory next to `path`; when the block succeeds it replaces `path` (an existing one
    is removed), when it fails nothing is left behind."""
    path = path.rstrip("/")
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
