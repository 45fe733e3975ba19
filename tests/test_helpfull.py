"""Each command line's full help is what it was before its flags were generated from the settings dataclasses
(issue 60): flag names, types, defaults, help texts and the module headings absl files them under
(tests/fixtures/helpfull/, written by tools/record_helpfull.py)."""

import difflib

import pytest

from tools.record_helpfull import COMMANDS, golden_path, helpfull


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_full_help_is_the_recorded_one(command):
    with open(golden_path(command), encoding="utf-8") as f:
        golden = f.read()
    text = helpfull(command)
    assert text == golden, "".join(difflib.unified_diff(golden.splitlines(True), text.splitlines(True),
                                                        "recorded", "now"))
