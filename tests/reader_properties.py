"""What the property tests of the readers of a user's files share (tests/test_reader_properties*.py): seeded
Hypothesis settings, arbitrary Unicode text with the characters readers trip on, the line ends, and the rule a row
written by a standard writer is held to (read back exactly, or refused in one line naming the file)."""

import os
import re

import pytest
from hypothesis import HealthCheck, settings, strategies as st

from albert.ground.errors import AlbertError
from albert.tasks.classification.own_data import Row
from tests.reader_targets import message_fault


SCALE = int(os.environ.get("ALBERT_PROPERTY_SCALE", "1"))  # tools/fuzz_readers.py --properties: more examples


def examples(count: int):
    """Seeded Hypothesis settings: `count` examples in the fast tier (times SCALE in a campaign, seeded anew)."""
    return settings(max_examples=count * SCALE, derandomize=SCALE == 1, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large])


# ----------------------------------------------------------------------------------------------------- texts
SPECIALS = ('"', "'", ",", ";", "\t", "\r", "\n", "\r\n", " ", "\u00a0", "\u2028", "\u2029", "\x85", "\x0c", "\x0b",
            "\x1c", "\x1e", "\ufeff", "\\", "{", "}", "[", "]", "é", "😀", "\u0301", "\x00", "-DOCSTART-", "0", "1",
            "\\ud800", "\\\\udc00", "\\u00e9", "𝄞")  # a backslash then `ud800` is text, no surrogate
ANY_CHAR = st.characters(blacklist_categories=("Cs",))  # every code point but lone surrogates (no UTF-8 for them)
PIECE = st.one_of(st.sampled_from(SPECIALS), ANY_CHAR, st.text(ANY_CHAR, min_size=250, max_size=400))


def texts(without: str = "", max_pieces: int = 8):
    """Text of pieces: specials, any character, now and then a long run (over the 200 a message shows)."""
    return st.lists(PIECE, max_size=max_pieces).map("".join).map(lambda t: "".join(c for c in t if c not in without))


LINE_ENDS = st.sampled_from(["\n", "\r\n", "\r"])
LINE_END = re.compile(r"\r\n|\r|\n")
LABEL_BREAKS = "\t\r\n"  # a label holding one of these (after trimming) must be refused
MAYBE_BREAKS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")  # refused or kept (control characters)


def refused_in_one_line(call, path) -> str:
    """The one-line message of the AlbertError `call` raises (naming `path`)."""
    with pytest.raises(AlbertError) as caught:
        call()
    message = str(caught.value)
    assert message_fault(message, str(path)) is None, (message_fault(message, str(path)), message)
    return message


def label_outcome(label: str):
    """What a label cell reads as: the trimmed text, None (no label: refused), or "refused" (a break inside);
    "either" where the break is one of the Unicode separators a reader may refuse or keep."""
    trimmed = label.strip()
    if not trimmed:
        return None
    if any(c in trimmed for c in LABEL_BREAKS):
        return "refused"
    return "either" if MAYBE_BREAKS.search(trimmed) else trimmed


def expect_rows(path, read, written, lines: bool = True):
    """`written`: [(line, text_a, text_b, label)] as written; the reader gives exactly those rows (texts as written,
    labels trimmed), or refuses in one line when a row has no text, no label or a label with a line break.
    `lines` False: the rows' line numbers are not compared (their order is)."""
    refuse, either = not written, False
    for _, text_a, text_b, label in written:
        outcome = label_outcome(label)
        refuse |= not text_a.strip() or (text_b is not None and not text_b.strip()) or outcome in (None, "refused")
        either |= outcome == "either"
    if refuse:
        refused_in_one_line(read, path)
        return
    try:
        rows = read()
    except AlbertError as e:
        assert either, str(e)  # only a label with a Unicode separator inside may be refused here
        assert message_fault(str(e), str(path)) is None, str(e)
        return
    expected = [Row(line, a, b, label.strip()) for line, a, b, label in written]
    if not lines:
        rows = [Row(0, r.text_a, r.text_b, r.label) for r in rows]
        expected = [Row(0, r.text_a, r.text_b, r.label) for r in expected]
    assert rows == expected


# --------------------------------------------------------------------------- CoNLL words and tags, a RACE article
WORD = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=6).filter(
    lambda w: not any(c.isspace() for c in w) and w != "-DOCSTART-" and not w.startswith("\ufeff"))
TAG = st.one_of(st.just("O"), st.builds(lambda p, t: f"{p}-{t}", st.sampled_from("BI"),
                                        st.sampled_from(["PER", "LOC", "ORG", "MISC", "X", "é"])))
RACE_ARTICLE = {"id": "m1.txt", "article": "a", "questions": ["q"], "options": [["a", "b", "c", "d"]],
                "answers": ["A"]}
