"""The one exception type for user mistakes, and how a message shows what it quotes.

Every error a user can cause (a bad config key, a missing file, a checkpoint of another shape) is raised as
`AlbertError` with a one-line message that names the file, line or key and says how to fix it. The command-line
entry points print that line to stderr and exit with status 2; library callers can catch it like any ValueError.
A message is one line whatever it quotes: values are shown with `shown` (quoted, long ones cut), paths with
`shown_path`, and a line break that still reaches the message is written as an escape.
"""

import re

MAX_SHOWN = 200  # the most characters of any one value a message quotes
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def shown(value, limit: int = MAX_SHOWN) -> str:
    """`value` as a message quotes it: repr-style (quotes, escapes), cut to about `limit` characters with an
    ellipsis."""
    text = repr(value)
    if len(text) <= limit:
        return text
    head = repr(str(value)[:limit])
    return head[:-1] + "…" + head[-1]


def shown_path(path) -> str:
    """A path as messages name it: as written, or quoted (repr) when it holds a control character or a line break."""
    path = str(path)
    return shown(path, 4 * MAX_SHOWN) if _CONTROL.search(path) else path


class AlbertError(ValueError):
    """A user-facing error: the message names what is wrong and how to fix it, on one line."""

    def __init__(self, message="", *args):
        if isinstance(message, str) and ("\n" in message or "\r" in message):
            message = message.replace("\r", "\\r").replace("\n", "\\n")
        super().__init__(message, *args)
