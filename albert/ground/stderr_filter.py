"""TensorFlow's native start-up chatter kept off the terminal, so that an error is the one line the user reads.

Importing TensorFlow 2.21 writes, from C++ and before its logging is set up (so TF_CPP_MIN_LOG_LEVEL cannot stop
them), about seven lines to file descriptor 2: `WARNING: All log messages before absl::InitializeLog() ...`, `I0000
... port.cc] oneDNN custom operations are on ...`, `Could not find cuda drivers ...`, the CPU-instructions note and,
on a machine without a GPU, `E0000 ... failed call to cuInit`; SentencePiece logs `normalizer.cc(51) LOG(INFO) ...`
from C++ when it loads a model without a normalization map. `filtered()` points descriptor 2 at a pipe for the
duration of a command; a thread forwards every line to the real stderr except those (native INFO and WARNING lines,
SentencePiece's INFO lines, the absl preamble, the CPU-instructions note, the no-GPU cuInit error) and the LiteRT
interpreter's XNNPACK notice. Python tracebacks, warnings and TensorFlow's native errors pass.
TF_CPP_MIN_LOG_LEVEL=0 or 1 set by the user turns the filter off.

In Python, `import_quietly(name)` filters the same lines while TensorFlow is first imported and lists its devices
(albert's lazy names load their modules inside it), and only then: TensorFlow's log level is left as it is, so its
later warnings reach the user.
"""

import contextlib
import importlib
import os
import re
import sys
import threading

NOISE = re.compile(
    rb"^(WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    rb"|[IW]\d{4} \d+:\d+:\d+\.\d+ +\d+ [\w.]+:\d+\] "
    rb"|\w+\.cc\(\d+\) LOG\(INFO\) "  # SentencePiece's native INFO (a model without a normalization map)
    rb"|E\d{4} \d+:\d+:\d+\.\d+ +\d+ cuda_\w+\.cc:\d+\] failed call to cuInit"
    rb"|To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler flags\."
    rb"|INFO: Created TensorFlow Lite XNNPACK delegate for CPU\.)")

_terminal = None


def stderr_is_terminal() -> bool:
    """Whether the user's stderr is a terminal (descriptor 2 itself is a pipe while the filter runs)."""
    return sys.stderr.isatty() if _terminal is None else _terminal


def _write(fd: int, data: bytes):
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:  # the reader of stderr went away: keep draining the pipe, so that writers never block
        pass


def _pump(read_fd: int, out_fd: int):
    pending = b""
    while True:
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        kept = b"".join(line + b"\n" for line in lines if not NOISE.match(line))
        if b"\r" in pending:  # a progress bar redrawing its line: show it now
            cut = pending.rindex(b"\r") + 1
            kept, pending = kept + pending[:cut], pending[cut:]
        if kept:
            _write(out_fd, kept)
    if pending and not NOISE.match(pending):
        _write(out_fd, pending)
    os.close(read_fd)


def import_quietly(name: str):
    """`importlib.import_module(name)`, TensorFlow's start-up lines filtered if this import starts TensorFlow: those
    of the import, and the no-GPU cuInit error of the first device listing (done here; devices can still be
    configured after it)."""
    if "tensorflow" in sys.modules:
        return importlib.import_module(name)
    with filtered(quiet_logs=False):
        module = importlib.import_module(name)
        if "tensorflow" in sys.modules:
            sys.modules["tensorflow"].config.list_physical_devices()
    return module


@contextlib.contextmanager
def filtered(quiet_logs: bool = True):
    """Descriptor 2 through the filter while the block runs; `quiet_logs`: TensorFlow's native INFO and WARNING
    logs off too (TF_CPP_MIN_LOG_LEVEL=2, unless the user set it), as a command line wants."""
    global _terminal
    if os.environ.get("TF_CPP_MIN_LOG_LEVEL", "").strip() in ("0", "1"):
        yield
        return
    if quiet_logs:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    _terminal = sys.stderr.isatty()
    sys.stderr.flush()
    saved = os.dup(2)
    read_fd, write_fd = os.pipe()
    os.dup2(write_fd, 2)
    os.close(write_fd)
    thread = threading.Thread(target=_pump, args=(read_fd, saved), daemon=True, name="stderr-filter")
    thread.start()
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved, 2)  # the pipe's last writer in this process closes: the thread drains it and ends
        thread.join(timeout=5)  # a still-running child holding the pipe: do not wait for it
        if not thread.is_alive():
            os.close(saved)
        _terminal = None
