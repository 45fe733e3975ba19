"""A byte-level fuzz of every reader of a user's files (tests/reader_targets.py): random bytes and mutations of a
seed corpus (slices of ../shared/glue_real and ../shared/conll2003 read in place, and files written by the tests).
Each input gives a result, or one AlbertError line of bounded length naming the file: never another exception, a
message of several lines, or a read past the per-input time bound. Deterministic: a fixed seed per reader. The
long campaign is tools/fuzz_readers.py."""

import os
import random
import zlib

import pytest

from tests import reader_targets
from tests.reader_targets import TARGETS, judge, mutate

INPUTS = 250  # per reader
SECONDS = 2.0  # per input
SEEDS = reader_targets.seeds()


@pytest.mark.parametrize("name", TARGETS)
def test_every_input_is_read_or_refused_in_one_line(tmp_path, name):
    rng = random.Random(zlib.crc32(name.encode()))
    inputs = list(SEEDS[name]) + [mutate(rng, SEEDS[name]) for _ in range(INPUTS - len(SEEDS[name]))]
    failures, hangs = {}, 0
    for data in inputs:
        outcome = judge(name, data, str(tmp_path), SECONDS)
        if outcome.kind == "failure":
            failures.setdefault(outcome.key, (data, outcome.detail))
            hangs += outcome.key == "hang"
            if hangs == 2:
                break  # each hang costs the whole bound: two say enough
    assert not failures, "\n".join(f"{key}: input {data[:300]!r} ({len(data)} bytes)\n  {detail[-600:]}"
                                   for key, (data, detail) in failures.items())


def test_seeds_are_read():
    """The seed corpus is read (not refused): the mutations start from files the readers take."""
    import tempfile
    refused = {}
    for name, seed_list in reader_targets._seeds().items():
        with tempfile.TemporaryDirectory() as work:
            for index, data in enumerate(seed_list):
                outcome = judge(name, data, work, SECONDS)
                if outcome.kind != "result":
                    refused[f"{name}[{index}]"] = outcome.detail[:200]
    assert refused == {}


ODD_DIRECTORY = "we\nird\u2028dir\x85"


@pytest.mark.parametrize("name", TARGETS)
def test_a_path_with_line_breaks_is_quoted_in_the_one_line(tmp_path, name):
    """A file whose path holds a line break (LF, U+2028, U+0085): the refusal is still one line, the path quoted."""
    work = tmp_path / ODD_DIRECTORY
    work.mkdir()
    outcome = judge(name, b"\xff\xfe bad\n", str(work), SECONDS)
    assert outcome.kind == "refused", outcome
    assert repr(str(work))[1:-1] in outcome.detail, outcome.detail


@pytest.mark.parametrize("kind", ["fifo", "directory", "missing"])
@pytest.mark.parametrize("name", TARGETS)
def test_what_is_no_regular_file_is_one_line_never_read(tmp_path, name, kind):
    """A FIFO (nobody writing to it: reading would block forever), a directory or nothing where the reader's file
    should be: one line naming it, at once."""
    path = tmp_path / reader_targets.FILES[name]
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    outcome = judge(name, None, str(tmp_path), SECONDS)
    assert outcome.kind == "refused", outcome
    words = {"fifo": "FIFO", "directory": "directory", "missing": "not found"}[kind]
    if kind == "missing" and name.startswith("race"):
        words = "no questions"  # RACE reads every file of a level's directory: here there is none
    assert words in outcome.detail, outcome.detail
