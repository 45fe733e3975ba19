"""Each command line's help is the recorded one (tests/fixtures/helpfull/, written by tools/record_helpfull.py):
`--helpfull`, absl's full listing (flag names, types, defaults, help texts and the module headings absl files them
under), and `--help`, the command's own flags by what a user does with them, one line each."""

import difflib

import pytest

from tools.record_helpfull import golden_path, helpfull, recorded


@pytest.mark.parametrize("command, flag", sorted(recorded()))
def test_the_help_is_the_recorded_one(command, flag):
    with open(golden_path(command, flag), encoding="utf-8") as f:
        golden = f.read()
    text = helpfull(command, flag)
    assert text == golden, "".join(difflib.unified_diff(golden.splitlines(True), text.splitlines(True),
                                                        "recorded", "now"))
