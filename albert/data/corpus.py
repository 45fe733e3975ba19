"""Reading a pretraining corpus: comma-separated globs of plain or gzip text, one sentence per line (LF, CRLF or CR
line ends), a blank line between documents. Local paths are read directly; URLs (gs://, hdfs://, ...) through
tf.io.gfile."""

import gzip
import os
import zlib

from albert.ground.errors import AlbertError, shown_path
from albert.ground.paths import glob_files, is_remote, open_file
from albert.ground.userfiles import check_readable, stream_lines


def no_documents(files: list) -> AlbertError:
    """The error of a corpus without a document (every line blank)."""
    return AlbertError(f"{', '.join(files)}: no documents (no non-blank line); the input must be text, one sentence "
                       "per line, a blank line between documents")


def expand_inputs(spec: str, kind: str = "input file") -> list[str]:
    """Comma-separated file names or globs -> the sorted list of files; a pattern matching nothing is an error."""
    files = []
    for pattern in (p.strip() for p in spec.split(",")):
        if not pattern:
            continue
        matches = glob_files(pattern)
        if not matches and not is_remote(pattern) and os.path.lexists(pattern):
            check_readable(pattern, "input file")  # there, but no regular file: says what it is
        if not matches:
            raise AlbertError(f"{pattern}: no {kind} matches; check --input_file")
        files.extend(matches)
    if not files:
        raise AlbertError(f"--input_file is empty; pass one or more {kind}s (comma-separated, globs allowed)")
    return files


def _open_binary(path: str):
    if is_remote(path):
        try:
            raw = open_file(path, "rb")
        except OSError as e:
            raise AlbertError(f"{path}: cannot read the input file ({e.strerror})") from None
    else:
        check_readable(path, "input file")  # a directory, a FIFO or a device: one line, never read
        try:
            raw = open(path, "rb")
        except OSError as e:
            raise AlbertError(f"{shown_path(path)}: cannot read the input file ({e.strerror})") from None
    head = raw.read(2)
    raw.seek(0)
    if head == b"\x1f\x8b":  # gzip magic, whatever the file is called
        return gzip.GzipFile(fileobj=raw)
    return raw


def read_lines(path: str):
    """Yield (line number, text) of a file, lines ending at LF, CRLF or CR (albert.ground.userfiles), decoding UTF-8
    strictly: invalid bytes are an error naming the line."""
    with _open_binary(path) as f:
        try:
            yield from stream_lines(f, path)
        except (OSError, EOFError, zlib.error) as e:
            raise AlbertError(f"{shown_path(path)}: cannot read the input file ({e})") from None


def read_documents(paths: list[str], tokenize_to_ids, normalize) -> list:
    """Documents as lists of sentences of token ids. `normalize(line)` gives the text to tokenize; a line that
    normalizes to nothing ends the current document. Empty documents are dropped."""
    documents = [[]]
    for path in paths:
        for _, line in read_lines(path):
            text = normalize(line)
            if not text:
                documents.append([])
                continue
            ids = tokenize_to_ids(text)
            if ids:
                documents[-1].append(ids)
    return [d for d in documents if d]
