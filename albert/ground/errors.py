"""The one exception type for user mistakes.

Every error a user can cause (a bad config key, a missing file, a checkpoint of another shape) is raised as
`AlbertError` with a one-line message that names the file, line or key and says how to fix it. The command-line
entry points print that line to stderr and exit with status 2; library callers can catch it like any ValueError.
"""


class AlbertError(ValueError):
    """A user-facing error: the message names what is wrong and how to fix it."""
