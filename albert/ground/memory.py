"""How much memory this process may use: the lower of the kernel's MemAvailable and the cgroup's limit (v2
`memory.max` less `memory.current`, or v1 `memory.limit_in_bytes` less its usage), or `ALBERT_MEMORY_LIMIT` (bytes,
or a number with a K / M / G / T suffix, powers of 1024) when set. Read before a model from someone else's config is
built, so a config whose weights cannot fit is one line instead of an out-of-memory kill (albert.model.sizing)."""

import os
import re

from albert.ground.errors import AlbertError

VARIABLE = "ALBERT_MEMORY_LIMIT"
SUFFIXES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _number(path: str):
    try:
        with open(path, encoding="ascii") as f:
            text = f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def _mem_available():
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room():
    for limit, usage in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                         ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                          "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        cap = _number(limit)  # "max" (no limit) reads as None
        if cap is not None and cap < 1 << 60:
            return max(0, cap - (_number(usage) or 0))
    return None


def parse_size(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.I)
    if not match:
        raise AlbertError(f"{VARIABLE}={text!r} is not a size; use bytes or a number with K, M, G or T (e.g. 8G)")
    return int(float(match.group(1)) * SUFFIXES[match.group(2).upper()])


def available() -> tuple:
    """(bytes this process may still use, where that figure comes from); bytes None when nothing says."""
    if os.environ.get(VARIABLE):
        return parse_size(os.environ[VARIABLE]), VARIABLE
    sources = ((_mem_available(), "MemAvailable"), (_cgroup_room(), "the cgroup's memory limit"))
    found = [(value, name) for value, name in sources if value is not None]
    return min(found) if found else (None, "nothing")
