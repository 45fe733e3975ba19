"""Archives unpacked safely: every member checked before anything is written (a member that is a link, a device,
an absolute path or a path leading outside the archive refuses the whole archive), unpacked under a temporary
name beside the target and renamed into place; a folder that is the archive's only top-level entry (the release
tarballs' `albert_base/`) is where the model is.

Before anything is written, the headers' declared sizes are weighed: more than MAX_MEMBERS members, a total larger
than MAX_RATIO times the archive's own size (the release tarballs unpack to about 1.1x; a model archive does not
compress a hundredfold), or more than the target disk's free space less a margin, and the archive is refused in one
line (a full cache disk would fail every other process using it too)."""

import errno
import os
import shutil
import tarfile

from albert.ground.errors import AlbertError

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")
MAX_MEMBERS = 10_000  # a model archive holds a handful of files (a SavedModel a few dozen)
MAX_RATIO = 100  # declared bytes / the archive's bytes
FREE_MARGIN = 64 << 20  # left free on the target disk after unpacking


def is_archive(path: str) -> bool:
    return path.lower().endswith(ARCHIVE_SUFFIXES)


def _check(archive: str, members) -> None:
    for member in members:
        name = member.name
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or ".." in parts or (len(name) > 1 and name[1] == ":"):
            raise AlbertError(f"{archive}: member {name} points outside the archive; refused, nothing extracted")
        if member.issym() or member.islnk():
            raise AlbertError(f"{archive}: member {name} is a link ({member.linkname}); refused, nothing extracted")
        if not (member.isfile() or member.isdir()):
            raise AlbertError(f"{archive}: member {name} is not a file or folder; refused, nothing extracted")


def _check_sizes(archive: str, members, target_disk: str) -> None:
    """What the headers declare, against what the archive is and where it goes."""
    if len(members) > MAX_MEMBERS:
        raise AlbertError(f"{archive}: {len(members):,} members, more than a model archive holds ({MAX_MEMBERS:,}); "
                          "refused, nothing extracted")
    declared = sum(m.size for m in members if m.isfile())
    own = os.path.getsize(archive)
    free = shutil.disk_usage(target_disk).free
    if declared > free - FREE_MARGIN:
        raise AlbertError(f"{target_disk}: {archive} declares {_mib(declared)} of files but the disk has "
                          f"{_mib(free)} free (keeping {_mib(FREE_MARGIN)}); free space or set ALBERT_CACHE to a "
                          "larger disk; nothing extracted")
    if declared > MAX_RATIO * max(own, 1):
        raise AlbertError(f"{archive}: declares {_mib(declared)} of files in {_mib(own)}, more than {MAX_RATIO}x "
                          "its own size: not a model archive; refused, nothing extracted")


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.1f} MiB"


def unpack(archive: str, target: str) -> str:
    """Unpack `archive` into the new directory `target` (nothing there if it fails). Returns the model's folder."""
    tmp = f"{target}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            _check(archive, members)
            _check_sizes(archive, members, os.path.dirname(os.path.abspath(target)))
            os.makedirs(tmp)
            tar.extractall(tmp, members=members, filter="data")
    except (tarfile.TarError, EOFError, OSError) as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError) and e.errno == errno.ENOSPC:
            raise AlbertError(f"{os.path.dirname(target)}: disk full while unpacking {archive}; free space or set "
                              "ALBERT_CACHE to a larger disk") from None
        raise AlbertError(f"{archive}: not a readable tar archive ({str(e).splitlines()[0][:120]}); it is damaged "
                          "or not a model archive") from None
    except AlbertError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    os.replace(tmp, target)
    return model_folder(target)


def model_folder(directory: str) -> str:
    """`directory`, or its one sub-folder when that is all it holds (an archive with a top-level folder)."""
    entries = [e for e in os.listdir(directory) if not e.startswith(".")]
    if len(entries) == 1 and os.path.isdir(os.path.join(directory, entries[0])):
        return os.path.join(directory, entries[0])
    return directory
