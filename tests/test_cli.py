"""albert/ground/cli.py: a settings dataclass and the flags of a command line are one setting declared twice, and
`cli.settings` / `cli.check_every_flag_read` refuse any disagreement (no TensorFlow: plain absl flags)."""

import dataclasses

import pytest
from absl import flags

from albert.ground import cli


@dataclasses.dataclass(frozen=True)
class Job:
    data_dir: str
    steps: int = 10
    rate: float = 0.5
    per_runner: int = dataclasses.field(default=7, metadata={"runner_default": True})


def parsed(**defaults) -> flags.FlagValues:
    """A FlagValues with the flags of `Job` (their defaults `defaults`, else the field's), parsed from no arguments;
    each key flag of this module."""
    values = flags.FlagValues()
    given = dict({"data_dir": None, "steps": 10, "rate": 0.5, "per_runner": 7}, **defaults)
    kinds = {str: flags.DEFINE_string, int: flags.DEFINE_integer, float: flags.DEFINE_float}
    for name, default in given.items():
        kind = {"data_dir": str, "steps": int, "rate": float, "per_runner": int}.get(name, str)
        kinds[kind](name, default, "help", flag_values=values)
    values(["program"])
    return values


def test_fields_take_their_flags_values_and_overrides_come_first():
    values = parsed()
    values.steps = 3
    assert cli.settings(Job, values, rate=0.25) == Job(data_dir=None, steps=3, rate=0.25, per_runner=7)


def test_a_field_without_its_flag_is_refused():
    values = flags.FlagValues()
    flags.DEFINE_string("data_dir", None, "help", flag_values=values)
    values(["program"])
    with pytest.raises(cli.SettingsMismatch, match=r"^Job\.steps has no --steps flag in "):
        cli.settings(Job, values)


def test_a_default_that_differs_from_the_flags_is_refused_unless_the_field_is_per_runner():
    with pytest.raises(cli.SettingsMismatch, match=r"^Job\.steps defaults to 10 but --steps to 20 in "):
        cli.settings(Job, parsed(steps=20))
    assert cli.settings(Job, parsed(per_runner=100)).per_runner == 100  # each runner's own default


def test_every_flag_of_the_program_must_set_a_field_or_be_read_by_the_command_line():
    values = parsed(extra="x")
    with pytest.raises(cli.SettingsMismatch, match=r": --extra set no field of Job$"):
        cli.check_every_flag_read(values, (Job,), module=__name__)
    cli.check_every_flag_read(values, (Job,), cli_only=("extra",), module=__name__)
