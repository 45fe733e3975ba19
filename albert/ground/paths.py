"""Local paths and remote ones (gs://, hdfs://, s3://...: read and written through TensorFlow's file systems, where
they are), told apart in one place, and the few file operations that differ between the two. TensorFlow is loaded
only for a remote path."""

import glob
import os


def is_remote(path) -> bool:
    """A URL of one of TensorFlow's file systems (nothing of this machine's disk: no locks, no realpath)."""
    return bool(path) and "://" in str(path)


def _gfile():
    import tensorflow as tf

    return tf.io.gfile


def open_file(path: str, mode: str = "rb"):
    """A file object for `path`: TensorFlow's GFile for a remote path, else open() (text as UTF-8)."""
    if is_remote(path):
        return _gfile().GFile(path, mode)
    return open(path, mode) if "b" in mode else open(path, mode, encoding="utf-8")


def file_size(path: str) -> int:
    return _gfile().stat(path).length if is_remote(path) else os.path.getsize(path)


def glob_files(pattern: str) -> list:
    """The files matching `pattern`, sorted (a remote pattern through TensorFlow's file systems)."""
    if is_remote(pattern):
        return sorted(_gfile().glob(pattern))
    return sorted(m for m in glob.glob(pattern) if os.path.isfile(m))
