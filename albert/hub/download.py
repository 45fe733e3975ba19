"""One HTTP download, whole or not at all: streamed to `<file>.part` (resumed with a Range request when a killed
run left one and the server allows it, else restarted), checked against the size the server gave, renamed into
place. A progress bar with size and rate on a terminal (ALBERT_PROGRESS=1 forces it, ALBERT_NOPROGRESS=1 or a
non-terminal stderr keeps it quiet). Every failure is one AlbertError naming the URL or host and the fix; a network
failure (albert.hub.network) names the model reference too."""

import errno
import http.client
import os
import sys
import time
import urllib.error
import urllib.request

from albert.ground.errors import AlbertError
from albert.hub import network
from albert.hub.endpoints import token_variable

CHUNK = 1 << 20


def progress_wanted() -> bool:
    if os.environ.get("ALBERT_NOPROGRESS") == "1":
        return False
    return os.environ.get("ALBERT_PROGRESS") == "1" or sys.stderr.isatty()


class Progress:
    """`<label>: 12.3 of 45.6 MB, 3.1 MB/s` redrawn in place; one final line."""

    def __init__(self, label: str, total: int | None, start: int):
        self.label, self.total, self.done, self.start = label, total, start, start
        self.began, self.last = time.monotonic(), 0.0
        self.on = progress_wanted()

    def _line(self) -> str:
        elapsed = max(time.monotonic() - self.began, 1e-6)
        rate = (self.done - self.start) / elapsed
        size = f"{_size(self.done)} of {_size(self.total)}" if self.total else _size(self.done)
        return f"{self.label}: {size}, {_size(rate)}/s"

    def update(self, count: int):
        self.done += count
        if self.on and time.monotonic() - self.last > 0.2:
            self.last = time.monotonic()
            sys.stderr.write("\r" + self._line())
            sys.stderr.flush()

    def close(self):
        if self.on:
            sys.stderr.write("\r" + self._line() + ", done\n")
            sys.stderr.flush()


def _size(count: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count:.0f} B"


def http_error(url: str, code: int, headers=None) -> AlbertError:
    """The one line for an HTTP error status."""
    if code == 404:
        return AlbertError(f"{url}: not found (HTTP 404): check the name, organisation and version")
    if code in (401, 403):
        return AlbertError(f"{url}: access denied (HTTP {code}): a gated or private model; set "
                           f"{token_variable(url)} to a token that may read it")
    return AlbertError(f"{url}: the server answered HTTP {code}; try again later")


def fetch(url: str, path: str, reference: str, cache: str, headers: dict | None = None) -> str:
    """Download `url` to `path` (its directory exists), resuming `path`.part. Returns `path`. `reference` is what
    the user named, `cache` where its copy would be kept (both for the line a network failure gives)."""
    part = path + ".part"
    have = os.path.getsize(part) if os.path.isfile(part) else 0
    request = urllib.request.Request(url, headers=dict(headers or {}))
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=network.timeout())
    except urllib.error.HTTPError as e:
        if e.code == 416 and have:  # the part is not a prefix the server recognises: start again
            os.remove(part)
            return fetch(url, path, reference, cache, headers)
        raise http_error(url, e.code, e.headers) from None
    except (urllib.error.URLError, OSError) as e:  # whatever the socket met: one line, naming the reference
        raise network.unreachable(reference, url, network.reason(e) or str(e), cache) from None
    with response:
        if have and response.status != 206:
            have = 0  # the server sends the whole file again
        length = response.headers.get("Content-Length")
        total = have + int(length) if length is not None else None
        progress = Progress(f"downloading {reference}", total, have)
        try:
            with open(part, "ab" if have else "wb") as out:
                while True:
                    try:
                        chunk = response.read1(CHUNK)  # what has arrived: progress and .part keep up
                    except (OSError, urllib.error.URLError, http.client.HTTPException) as e:
                        why = network.reason(e) or str(e)
                        raise AlbertError(f"{reference}: the download from {network.host(url)} broke off after "
                                          f"{progress.done:,} bytes ({why}); run again to resume it") from None
                    if not chunk:
                        break
                    out.write(chunk)
                    progress.update(len(chunk))
        except OSError as e:
            if e.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
                os.remove(part)
                raise AlbertError(f"{os.path.dirname(path)}: disk full while downloading {url} ({e.strerror}); free "
                                  "space or set ALBERT_CACHE to a larger disk") from None
            raise
        progress.close()
    size = os.path.getsize(part)
    if total is not None and size != total:
        raise AlbertError(f"{url}: the download was cut short ({size:,} of {total:,} bytes); run again to resume it")
    os.replace(part, path)
    return path
