"""SIGTERM and Ctrl-C as one request to stop, which no place in the program can swallow.

`kill`, `docker stop` or a scheduler's time limit send SIGTERM; the handler turns it (and SIGINT) into
KeyboardInterrupt, so the command unwinds and its outputs' temporaries are removed. Python drops an exception raised
while a finalizer (`__del__`) runs, and a library may wrap it in another exception; the request is therefore also
recorded: `check()` raises it again before an output is moved into place, and `requested()` lets the command line
say "interrupted" whatever exception the unwinding became.
"""

import signal
import sys

_requested = False


def _handler(signum, frame):
    global _requested
    _requested = True
    raise KeyboardInterrupt


def _unraisable(hook):
    def quiet(unraisable):
        if _requested and isinstance(unraisable.exc_value, KeyboardInterrupt):
            return  # the request dropped inside a finalizer: recorded, reported once by the command line
        hook(unraisable)
    return quiet


def install():
    """Route SIGTERM and SIGINT through the recorded request (the command line's main thread calls this)."""
    signal.signal(signal.SIGTERM, _handler)
    signal.signal(signal.SIGINT, _handler)
    sys.unraisablehook = _unraisable(sys.unraisablehook)


def requested() -> bool:
    """Whether the process was asked to stop."""
    return _requested


def check():
    """Raise KeyboardInterrupt if the process was asked to stop (one raised earlier may have been swallowed)."""
    if _requested:
        raise KeyboardInterrupt
