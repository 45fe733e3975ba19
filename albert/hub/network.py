"""A network failure in one line, whichever client met it (urllib here; huggingface_hub's httpx; requests, urllib3 and
the sockets under them): what went wrong in a few words, the model reference, the host, and the ways out that can
work from here. The one timeout every download of this project uses is declared here too."""

import errno
import os
import socket
import ssl
import urllib.error
import urllib.parse

from albert.ground.errors import AlbertError
from albert.hub.endpoints import OFFLINE_SWITCH

TIMEOUT_VARIABLE = "ALBERT_DOWNLOAD_TIMEOUT"
_CLIENTS = ("httpx", "httpcore", "requests", "urllib3", "http.client", "h11", "h2", "ssl")  # their own error classes
_UNREACHABLE = {errno.ENETUNREACH: "network unreachable", errno.EHOSTUNREACH: "host unreachable",
                errno.ENETDOWN: "network down", errno.EADDRNOTAVAIL: "no address to connect from"}


def timeout() -> float:
    """Seconds a connection may wait for the server's next bytes (read at each call; default 60)."""
    value = os.environ.get(TIMEOUT_VARIABLE, "60")
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise AlbertError(f"{TIMEOUT_VARIABLE}={value!r}: not a number of seconds; set it to a positive number "
                          "(default 60) or unset it")
    return seconds


def _chain(error: BaseException):
    """`error`, what it wraps (urllib's `reason`) and what it was raised from, in that order, each once."""
    seen, todo = [], [error]
    while todo and len(seen) < 16:
        item = todo.pop(0)
        if isinstance(item, BaseException) and all(item is not s for s in seen):
            seen.append(item)
            todo += [getattr(item, "reason", None), item.__cause__, item.__context__]
    return seen


def _names(error: BaseException) -> list:
    return [cls.__name__ for cls in type(error).__mro__]


def _client(error: BaseException) -> bool:
    """An error class of an HTTP client or the layers under it (httpx2 counts as httpx)."""
    return type(error).__module__.split(".")[0].rstrip("0123456789") in _CLIENTS


def _is_status(error: BaseException) -> bool:
    """An HTTP status the server sent: an answer, not a network failure."""
    return isinstance(error, urllib.error.HTTPError) or getattr(error, "response", None) is not None


def reason(error: BaseException) -> str | None:
    """What went wrong on the way to the server, in a few words, or None when `error` is no network failure."""
    chain = _chain(error)
    for item in chain:  # the most telling cause first, wherever it sits in the chain
        if isinstance(item, socket.gaierror):
            return "DNS: the host name does not resolve"
        if isinstance(item, TimeoutError) or _client(item) and any("Timeout" in name for name in _names(item)):
            return f"no answer in {timeout():g} s"
        if isinstance(item, ConnectionRefusedError):
            return "connection refused"
        if isinstance(item, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)):
            return "the connection was reset"
        if isinstance(item, OSError) and item.errno in _UNREACHABLE:
            return _UNREACHABLE[item.errno]
        if isinstance(item, ssl.SSLError):
            return f"the TLS handshake failed ({_first_line(item)})"
    for item in chain:
        if _is_status(item) or not (_client(item) or isinstance(item, urllib.error.URLError)):
            continue
        if any(name in ("RemoteProtocolError", "ProtocolError", "IncompleteRead") for name in _names(item)):
            return "the server closed the connection without an answer"
        return _first_line(item)
    return None


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:160]


def host(url: str) -> str:
    return urllib.parse.urlsplit(url).netloc or url


def unreachable(reference: str, url: str, why: str, cache: str, cached: bool = False) -> AlbertError:
    """The one line for a model that could not be downloaded from `url`'s host: `cache` is where it would be kept
    (`cached`: it is there, and offline mode can serve it)."""
    if cached:
        offline = f"or set {OFFLINE_SWITCH} to use the copy in {cache}"
    else:
        offline = f"{OFFLINE_SWITCH} cannot help: it is not in {cache}"
    return AlbertError(f"{reference}: cannot be downloaded from {host(url)} ({why}); connect to the network and run "
                       f"again, or pass a local model directory, archive or file; {offline}")
