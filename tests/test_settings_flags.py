"""albert/ground/settings_flags.py: a settings dataclass is the one declaration of its flags (type, default, help,
choices, heading), the parsed flags build it, and its fields check themselves (no TensorFlow: plain absl flags)."""

import dataclasses

import pytest
from absl import flags

from albert.ground.errors import AlbertError
from albert.ground.settings_flags import SHARED, Settings, at_least, define, finite, probability, setting


def seeds(name, text):
    try:
        return tuple(int(s) for s in text.split(","))
    except ValueError:
        raise AlbertError(f"--{name} must be integers, got {text!r}") from None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Shared(Settings):
    precision: str = setting("fp32", "Compute precision.", choices=("fp32", "bf16"), module=SHARED, group="hardware")


@dataclasses.dataclass(frozen=True)
class Job(Shared):
    data_dir: str = setting(help="Where the data is.", group="inputs")
    steps: int = setting(10, "Training steps.", check=at_least(1), group="training")
    rate: float = setting(0.5, "Peak rate.", check=finite, group="training")
    dropout: float = setting(0.1, "Dropout.", check=probability, group="training")
    keep: int = setting(5, "Checkpoints kept.", check=at_least(1), group="training")
    verbose: bool = setting(False, "Talk.", group="training")
    threshold: float | None = setting(None, "A threshold.", group="training")
    seeds: tuple = setting((), "Comma-separated seeds.", parse=seeds, group="training")


def generated(argv=(), **options):
    values = flags.FlagValues()
    made = define(Job, values=values, **options)
    values(["program", *argv])
    return values, made


def test_each_field_becomes_a_flag_of_its_type_default_help_and_choices():
    values, _ = generated()
    assert {name: (type(flag).__name__, flag.default, flag.help) for name, flag in values._flags().items()} == {
        "precision": ("EnumFlag", "fp32", "<fp32|bf16>: Compute precision."),
        "data_dir": ("Flag", None, "Where the data is."),
        "steps": ("Flag", 10, "Training steps."),
        "rate": ("Flag", 0.5, "Peak rate."),
        "dropout": ("Flag", 0.1, "Dropout."),
        "keep": ("Flag", 5, "Checkpoints kept."),
        "verbose": ("BooleanFlag", False, "Talk."),
        "threshold": ("Flag", None, "A threshold."),
        "seeds": ("Flag", None, "Comma-separated seeds."),
    }
    assert [values[n].flag_type() for n in ("steps", "rate", "threshold", "seeds")] == ["int", "float", "float",
                                                                                      "string"]


def test_headings_the_command_line_own_and_the_shared_module():
    values, _ = generated()
    by_module = {module: sorted(f.name for f in found) for module, found in values.flags_by_module_dict().items()}
    assert by_module[SHARED] == ["precision"]
    assert by_module[__name__] == ["data_dir", "dropout", "keep", "rate", "seeds", "steps", "threshold", "verbose"]
    assert "precision" in {f.name for f in values.get_key_flags_for_module(__name__)}  # --help lists it too


def test_the_parsed_flags_build_the_dataclass_overrides_first_and_text_parsed():
    values, made = generated(["--data_dir=d", "--steps=3", "--precision=bf16", "--seeds=1,2", "--verbose"])
    assert made.build(values, rate=0.25) == Job(data_dir="d", steps=3, rate=0.25, precision="bf16", seeds=(1, 2),
                                                verbose=True)
    values, made = generated(["--data_dir=d"])
    assert made.build(values).seeds == ()  # unset: the field's default


def test_per_command_defaults_helps_names_and_fields():
    values, made = generated(["--data_dir=d", "--num_keep=0"], defaults={"steps": 100}, helps={"steps": "Other."},
                             names={"keep": "num_keep"}, skip=("threshold",))
    assert (values["steps"].default, values["steps"].help) == (100, "Other.")
    assert "threshold" not in values and "keep" not in values
    with pytest.raises(AlbertError, match=r"^--num_keep must be at least 1, got 0$"):  # the flag's own name
        made.build(values)
    with pytest.raises(TypeError, match="Job has no field stepz"):
        define(Job, values=flags.FlagValues(), only=("stepz",))


@pytest.mark.parametrize("argv,message", [
    ([], "--data_dir is required"),
    (["--data_dir="], "--data_dir is required"),
    (["--data_dir=d", "--steps=0"], "--steps must be at least 1, got 0"),
    (["--data_dir=d", "--rate=nan"], "--rate must be a finite number of at least 0, got nan"),
    (["--data_dir=d", "--dropout=1.5"], "--dropout must be a probability in [0, 1], got 1.5"),
    (["--data_dir=d", "--seeds=1,x"], "--seeds must be integers, got '1,x'"),
])
def test_fields_check_themselves_when_built(argv, message):
    values, made = generated(argv)
    with pytest.raises(AlbertError) as raised:
        made.build(values)
    assert str(raised.value) == message


def test_a_library_caller_meets_the_same_checks():
    with pytest.raises(AlbertError, match=r"^--precision 'fp16' is unknown; use one of fp32, bf16$"):
        Job(data_dir="d", precision="fp16")
    with pytest.raises(AlbertError, match=r"^--steps must be at least 1, got -1$"):
        Job(data_dir="d", steps=-1)


def test_a_field_without_a_flag_type_needs_a_parser():
    @dataclasses.dataclass(frozen=True)
    class Odd(Settings):
        sizes: tuple = setting((), "Sizes.", group="training")

    with pytest.raises(TypeError, match="sizes: no flag type"):
        define(Odd, values=flags.FlagValues())
    with pytest.raises(TypeError, match="immutable"):
        setting([], "A list.", group="training")


def test_the_given_values_before_the_settings_are_built():
    """What a command line checks before a model reference is resolved: the flags' values, text parsed, no range
    check yet; a required field left empty is one line unless a model reference may supply it (`unchecked`)."""
    values, made = generated(["--data_dir=d", "--steps=0", "--seeds=3,4"])
    given = made.given(values)
    assert (given.data_dir, given.steps, given.seeds, given.threshold) == ("d", 0, (3, 4), None)
    values, made = generated(["--steps=2"])
    with pytest.raises(AlbertError, match=r"^--data_dir is required$"):
        made.given(values)
    assert made.given(values, unchecked=("data_dir",)).data_dir is None


def test_a_field_declared_once_in_a_shared_group_takes_each_class_s_own_default_help_and_requirement():
    """`specialise` (what albert.runner.settings.RUNNERS applies): the group's field, this class's default, help,
    check or requirement; the rest (type, group, heading) as declared once; a field the class does not inherit is
    refused where the class is made."""
    from albert.ground.settings_flags import REQUIRED, own, specialise

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Group(Settings):
        batch: int = setting(32, "Batch.", check=at_least(1), group="training")
        model: str | None = setting(None, "Model file.", group="model")

    class Big(Group):  # made a dataclass below, once specialised
        other: int = setting(1, "Other.", group="training")

    @dataclasses.dataclass(frozen=True)
    class Small(Group):
        pass

    Big = dataclasses.dataclass(frozen=True)(specialise(Big, {"batch": own(4096, "Global batch."),
                                                             "model": own(REQUIRED, why="features need it")}))
    fields = {f.name: f for f in dataclasses.fields(Big)}
    assert (fields["batch"].default, fields["batch"].metadata["help"], fields["batch"].metadata["group"]) == \
        (4096, "Global batch.", "training")
    assert fields["model"].default is dataclasses.MISSING and fields["model"].type == (str | None)
    assert Big(model="m").batch == 4096 and Small().batch == 32 and Small().model is None
    with pytest.raises(AlbertError, match=r"^--model is required: features need it$"):
        Big(model="")
    with pytest.raises(AlbertError, match="--batch"):
        Big(model="m", batch=0)  # the group's check stays
    values = flags.FlagValues()
    define(Big, values=values)
    values(["program", "--model=m"])
    assert values["batch"].default == 4096 and values["batch"].help == "Global batch."
    with pytest.raises(TypeError, match="Small inherits no field steps"):
        specialise(type("Small", (Group,), {}), {"steps": own(3)})


def test_every_runner_keeps_the_original_s_defaults_of_the_fields_it_shares():
    """The runners' shared fields (albert.runner.settings), each runner's value: the original's defaults."""
    from albert.tasks.classification.settings import GlueRun
    from albert.tasks.ner.settings import NerRun
    from albert.tasks.pretraining.settings import PretrainingRun
    from albert.tasks.race.settings import RaceRun
    from albert.tasks.squad.settings import SquadRun

    def defaults(cls):
        return {f.name: f.default for f in dataclasses.fields(cls)
                if f.name in ("max_seq_length", "do_train", "train_batch_size", "learning_rate", "do_eval")}

    assert defaults(PretrainingRun) == {"max_seq_length": 512, "do_train": True, "train_batch_size": 4096,
                                        "learning_rate": 0.00176, "do_eval": False}
    assert defaults(GlueRun) == {"max_seq_length": 512, "do_train": False, "train_batch_size": 32,
                                 "learning_rate": 5e-5, "do_eval": False}
    assert defaults(SquadRun) == {"max_seq_length": 384, "do_train": False, "train_batch_size": 32,
                                  "learning_rate": 5e-5}
    assert defaults(RaceRun) == {"max_seq_length": 512, "do_train": True, "train_batch_size": 32,
                                 "learning_rate": 1e-5, "do_eval": True}
    assert defaults(NerRun)["max_seq_length"] == 128
    with pytest.raises(AlbertError, match="^--spm_model_file is required"):
        SquadRun(albert_config_file="c.json", output_dir="out", spm_model_file="")
