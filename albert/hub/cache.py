"""The cache of everything not kept by a hub's own client: `$ALBERT_CACHE` (default `~/.cache/albert`, under
`$XDG_CACHE_HOME` if set). TF Hub handles are laid out as tensorflow_hub lays out its cache (`<sha1 of the
handle>/` and a `.descriptor` beside it), in `$TFHUB_CACHE_DIR` when that is set, so tensorflow_hub and this
project share downloads. Hugging Face repos stay in huggingface_hub's own cache.

An entry is a directory renamed into place once whole; one process at a time fills it (a lock file beside it),
and a second process asking for it waits, then reads what the first one wrote.
"""

import contextlib
import fcntl
import hashlib
import os
import shutil
import socket
import time

from albert.ground.errors import AlbertError
from albert.hub import archives, download, endpoints


def root() -> str:
    if os.environ.get("ALBERT_CACHE"):
        return os.environ["ALBERT_CACHE"]
    base = endpoints.user_cache()
    return os.path.join(base, "albert")


def key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def tfhub_entry(handle: str) -> str:
    return os.path.join(os.environ.get("TFHUB_CACHE_DIR") or os.path.join(root(), "tfhub"), key(handle))


@contextlib.contextmanager
def locked(target: str):
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target + ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def not_cached(reference: str, target: str) -> AlbertError:
    return AlbertError(f"{reference}: {endpoints.not_cached_offline(f'the cache ({target})')}")


def location(target: str) -> str:
    """Where an entry would be, as a network failure's line names it: the cache's folder for its kind."""
    return f"the cache ({os.path.dirname(target)})"


def fetched(reference: str, url: str, target: str, headers: dict | None = None, check=None,
            descriptor: bool = False, shown: str | None = None) -> str:
    """The model folder of the archive at `url`, downloaded once into the cache entry `target`. `check(folder)`
    raises for an archive that is not what `reference` promised (the entry is then removed); `descriptor` writes
    tensorflow_hub's descriptor file beside the entry (a TF Hub handle's). `shown`: the reference as the user
    wrote it, for the messages (default `reference`)."""
    shown = shown or reference
    if os.path.isdir(target):
        return archives.model_folder(target)
    if endpoints.offline():
        raise not_cached(shown, target)
    with locked(target):
        if os.path.isdir(target):  # another process downloaded it while this one waited
            return archives.model_folder(target)
        archive = target + ".archive"
        if not os.path.isfile(archive):
            download.fetch(url, archive, shown, location(target), headers)
        try:
            folder = archives.unpack(archive, target)
        finally:
            os.remove(archive)  # unpacked, or not an archive: the next run starts again
        try:
            if check:
                check(folder)
        except AlbertError:
            shutil.rmtree(target, ignore_errors=True)
            raise
        if descriptor:
            _describe(target, reference)
    return folder


def _describe(target: str, handle: str):
    """tensorflow_hub's descriptor file beside a module it cached."""
    with open(target + ".descriptor", "w") as f:
        f.write(f"Module: {handle}\nDownload Time: {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
                f"Downloader Hostname: {socket.gethostname()} (albert)\n")


def unpacked(archive: str) -> str:
    """A local archive's model folder, unpacked once into the cache (keyed by its path, size and time)."""
    stat = os.stat(archive)
    target = os.path.join(root(), "archives", key(f"{os.path.abspath(archive)}:{stat.st_size}:{stat.st_mtime_ns}"))
    if os.path.isdir(target):
        return archives.model_folder(target)
    with locked(target):
        if os.path.isdir(target):
            return archives.model_folder(target)
        return archives.unpack(archive, target)
