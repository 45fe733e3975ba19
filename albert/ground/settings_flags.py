"""Settings declared once: the fields of a settings dataclass carry their help text and their group (what a user
is doing with the flag: the heading --help lists it under) and, where they need them, enum choices, a range check,
the heading `--helpfull` files the flag under, a parser from the flag's text; the command lines' absl flags are
generated from those fields, as Hugging Face's HfArgumentParser makes its arguments from `TrainingArguments`; the
parsed flags then build the dataclass (`Flags.build`).

    @dataclasses.dataclass(frozen=True)
    class GlueRun(Settings):
        train_step: int = setting(1000, "Training steps (the decay horizon).", group="training", check=at_least(1))

    GLUE = define(GlueRun)              # in albert/commands/run_classifier.py: declared at import, made by cli.run
    settings = GLUE.build(flags.FLAGS)  # in its main, after parsing

What differs between command lines is said where the flags are generated: `defaults` / `helps` (the original's
default or help text of one runner, or a help text true only of that command), `names` (the original's flag name for a field, e.g. RACE's
--num_keep_checkpoint), `only` / `skip` (the fields a command line has). A field with `parse` has a string flag
(e.g. --seeds) turned into the field's value by that function.
"""

import dataclasses
import sys
import types
import typing
import weakref

from absl import flags

from albert.ground.errors import AlbertError
from albert.ground.validators import check_at_least, check_finite, check_probability

# absl files a flag under the module that defines it: flags generated here are the calling command line's.
flags.disclaim_key_flags()

# The heading --helpfull lists the flags the runners share under (the module that defined them by hand first).
SHARED = "albert.ground.cli"

# What a user is doing with a flag: the headings of a command's --help, in this order (albert.ground.help).
GROUPS = {
    "inputs": "Inputs and outputs",
    "own_files": "Your own files (instead of --task_name and --data_dir)",
    "instances": "Pretraining instances",
    "model": "Model and weights",
    "training": "Training",
    "evaluation": "Evaluation and prediction",
    "export": "Export",
    "hardware": "Hardware and distribution",
    "compatibility": "Accepted for compatibility with the original (no effect)",
}


def setting(default=dataclasses.MISSING, help: str = "", *, group: str, choices: tuple | None = None,
            module: str | None = None, check=None, parse=None, why: str = "", derived=None) -> dataclasses.Field:
    """A settings field and its flag: `help` (the flag's help text; its first sentence, up to the first '.', ':' or
    ';', is the flag's line in --help), `group` (what a user does with it: a key of GROUPS, its --help heading),
    `choices` (an enum flag; a value outside them is refused when the settings are built), `module` (the --helpfull
    heading; default: the command line's own; SHARED for the runners' shared flags), `check` (a function of (flag
    name, value) raising AlbertError: a range check, e.g. at_least(1)), `parse` (the flag is a string, this function
    of (flag name, text) makes the value), `why` (a field without a default is required: why, said in the
    message), `derived` (a function of the built settings: the value when the flag is not given, e.g. a stride from
    the sequence length; the default is then None and the help says what it is)."""
    if group not in GROUPS:
        raise TypeError(f"group {group!r} is none of {', '.join(GROUPS)}")
    metadata = {"help": help, "group": group, "choices": choices, "module": module, "check": check, "parse": parse,
                "why": why, "derived": derived}
    if derived is not None and default is not None:
        raise TypeError("a derived setting's default is None (the derived value stands in for it)")
    if isinstance(default, (list, dict, set)):
        raise TypeError("a setting's default must be immutable (a tuple, not a list)")
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


REQUIRED = dataclasses.MISSING  # own(REQUIRED): a shared field that one settings class requires


@dataclasses.dataclass(frozen=True)
class Own:
    """What one settings class says differently of a field it inherits from a shared group (`own`)."""

    default: object = None
    help: str | None = None
    check: object = None
    why: str | None = None
    given: bool = False  # whether `default` was given (None may be a default)


def own(default=None, help: str | None = None, *, check=None, why: str | None = None) -> Own:
    """One settings class's own default (REQUIRED: none, the flag is required), help text, check or `why` of a
    field declared once in a shared group; what is not given stays the group's."""
    return Own(default, help, check, why, given=default is not None)


def specialise(cls, changes: dict):
    """`cls` (a settings class, before @dataclasses.dataclass) with the fields it inherits changed as `changes`
    ({field name: own(...)}) says: the same type, group, choices and --helpfull heading as declared in the shared
    group, this class's default, help, check or why. The field is still declared once; a class's differences are
    one row of its command's table."""
    inherited = {field.name: field for base in cls.__mro__[1:] if dataclasses.is_dataclass(base)
                 for field in dataclasses.fields(base)}
    unknown = set(changes) - set(inherited)
    if unknown:
        raise TypeError(f"{cls.__name__} inherits no field {', '.join(sorted(unknown))}")
    annotations = cls.__dict__.get("__annotations__")
    if annotations is None:
        annotations = {}
        cls.__annotations__ = annotations
    for name, change in changes.items():
        field = inherited[name]
        metadata = dict(field.metadata)
        for key in ("help", "check", "why"):
            if getattr(change, key) is not None:
                metadata[key] = getattr(change, key)
        default = change.default if change.given else field.default
        annotations[name] = field.type
        setattr(cls, name, dataclasses.field(metadata=metadata, kw_only=True) if default is REQUIRED
                else dataclasses.field(default=default, metadata=metadata, kw_only=True))
    return cls


def at_least(minimum, why: str = ""):
    """A field's check: a number of at least `minimum` (albert.ground.validators.check_at_least; `why`: said in the
    message)."""
    def check(name, value):
        if value is not None:
            check_at_least(name, value, minimum, why)
    return check


def probability(name, value):
    """A field's check: a probability in [0, 1]."""
    if value is not None:
        check_probability(name, value)


def finite(name, value):
    """A field's check: a finite number of at least 0 (a learning rate, a number of epochs: not NaN, not negative)."""
    if value is not None:
        check_finite(name, value)


@dataclasses.dataclass(frozen=True)
class Settings:
    """A settings dataclass whose fields check themselves when it is built: a field without a default is required,
    then each field's `choices` and `check`; the message names the field's flag (`Flags.build` records a flag of
    another name)."""

    def __post_init__(self):
        names = getattr(self, "_flag_names", {})
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.default is dataclasses.MISSING and (value is None or value == ""):
                why = field.metadata.get("why")
                raise AlbertError(f"--{names.get(field.name, field.name)} is required" + (f": {why}" if why else ""))
        for field in dataclasses.fields(self):  # a derived default: from the other settings, when not given
            if field.metadata.get("derived") and getattr(self, field.name) is None:
                object.__setattr__(self, field.name, field.metadata["derived"](self))
        for field in dataclasses.fields(self):
            value, name = getattr(self, field.name), names.get(field.name, field.name)
            choices = field.metadata.get("choices")
            if choices and value is not None and value not in choices:
                raise AlbertError(f"--{name} {value!r} is unknown; use one of {', '.join(choices)}")
            if field.metadata.get("check"):
                field.metadata["check"](name, value)


_KINDS = {bool: flags.DEFINE_bool, int: flags.DEFINE_integer, float: flags.DEFINE_float, str: flags.DEFINE_string}


def flag_type(field: dataclasses.Field):
    """The flag's Python type: the field's type without `| None`; a string for a field parsed from text."""
    if field.metadata.get("parse"):
        return str
    kind = field.type
    if isinstance(kind, types.UnionType):  # X | None
        kinds = [k for k in typing.get_args(kind) if k is not type(None)]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind not in _KINDS:
        raise TypeError(f"{field.name}: no flag type for {field.type!r}; give the setting a parse function")
    return kind


@dataclasses.dataclass(frozen=True)
class Flags:
    """The flags generated for one settings dataclass on one command line: field name -> flag name."""

    cls: type
    names: dict

    def build(self, values=flags.FLAGS, **overrides):
        """The settings from the parsed flags (`overrides`: values worked out at the command line, e.g. a model
        directory's files); a field with no flag here keeps its default."""
        fields = {}
        for field in dataclasses.fields(self.cls):
            if field.name in overrides:
                fields[field.name] = overrides[field.name]
            elif field.name in self.names:
                value = values[self.names[field.name]].value
                parse = field.metadata.get("parse")
                if parse:
                    value = field.default if value is None else parse(self.names[field.name], value)
                fields[field.name] = value
        settings = self.cls.__new__(self.cls)
        object.__setattr__(settings, "_flag_names", {k: v for k, v in self.names.items() if k != v})
        settings.__init__(**fields)
        return settings

    def value(self, field: str, values=flags.FLAGS):
        """A flag's parsed value by its field's name (a check before the settings are built)."""
        return values[self.names[field]].value

    def given(self, values=flags.FLAGS, unchecked: tuple = ()) -> types.SimpleNamespace:
        """The fields as the flags give them, text parsed, before the settings are built and their ranges checked:
        what a command line checks before it resolves a model reference (which may download). A required field
        left empty is one line, except those in `unchecked` (which a model reference may supply)."""
        given = {}
        for field in dataclasses.fields(self.cls):
            if field.name in self.names and field.name not in unchecked and field.default is dataclasses.MISSING \
                    and values[self.names[field.name]].value in (None, ""):
                why = field.metadata.get("why")
                raise AlbertError(f"--{self.names[field.name]} is required" + (f": {why}" if why else ""))
            if field.name not in self.names:
                given[field.name] = None if field.default is dataclasses.MISSING else field.default
                continue
            value = values[self.names[field.name]].value
            parse = field.metadata.get("parse")
            if parse:
                value = field.default if value is None else parse(self.names[field.name], value)
            given[field.name] = value
        return types.SimpleNamespace(**given)


def define(cls, *, only: tuple | None = None, skip: tuple = (), defaults: dict | None = None,
           helps: dict | None = None, names: dict | None = None, values=None) -> Flags:
    """The flags of the dataclass `cls` for one command line (the fields in `only`, less `skip`): each with its type,
    default (`defaults` first), help (`helps` first), enum choices and --helpfull heading from the field; the flag's
    name is the field's (or `names'`). Returns what `build` needs. Nothing is defined at import: the flags are made
    when the command line runs (`define_pending`, from albert.ground.cli.run), so importing any number of command
    modules in one process defines no flag; `values` given (a test's own FlagValues), they are made there now."""
    defaults, helps, names = defaults or {}, helps or {}, names or {}
    known = {field.name for field in dataclasses.fields(cls)}
    unknown = (set(only or ()) | set(skip) | set(defaults) | set(helps) | set(names)) - known
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
    fields = [field for field in dataclasses.fields(cls)
              if (only is None or field.name in only) and field.name not in skip]
    for field in fields:
        flag_type(field)  # a field with no flag type is the declaration's mistake: said where it is declared
    made = Flags(cls, {field.name: names.get(field.name, field.name) for field in fields})
    declared_in = sys._getframe(1).f_globals.get("__name__")  # --helpfull files the flags under the command's module
    spec = (made, fields, defaults, helps, declared_in)
    if values is not None:
        _make(spec, values)
    else:
        _PENDING.setdefault(declared_in, []).append(spec)
    return made


# module name -> the flags its command line declared and has not made yet, in declaration order.
_PENDING = {}


def define_pending(module: str, values=flags.FLAGS):
    """Make the flags the module `module` declared with `define` (once: a second call makes nothing)."""
    for spec in _PENDING.pop(module, []):
        _make(spec, values)


def _make(spec, values):
    made, fields, defaults, helps, declared_in = spec
    own = set(made.cls.__dict__.get("__annotations__", {}))
    for base in made.cls.__mro__[1:]:  # a shared group of the command's own settings is listed as its own
        if base.__dict__.get("LISTED_AS_OWN"):
            own |= set(base.__dict__.get("__annotations__", {}))
    for field in fields:
        name = made.names[field.name]
        default = defaults.get(field.name, None if field.default is dataclasses.MISSING else field.default)
        if field.metadata.get("parse"):
            default = defaults.get(field.name)  # the flag's text; unset: the field's default
        text = helps.get(field.name, field.metadata.get("help", ""))
        module = field.metadata.get("module")
        choices = field.metadata.get("choices")
        if choices:
            flags.DEFINE_enum(name, default, list(choices), text, flag_values=values,
                              module_name=module or declared_in)
        else:
            _KINDS[flag_type(field)](name, default, text, flag_values=values, module_name=module or declared_in)
        if module:
            flags.declare_key_flag(name, flag_values=values)  # --helpfull lists it with the command line's own flags
        LINES.setdefault(values, []).append(Line(
            name, field.metadata["group"], field.default is dataclasses.MISSING and field.name not in defaults,
            field.name not in own, text))


@dataclasses.dataclass(frozen=True)
class Line:
    """What a command's --help says of one generated flag (albert.ground.help): its name, its group, whether it is
    required, whether its field is inherited (listed after the class's own), its help text."""

    name: str
    group: str
    required: bool
    inherited: bool
    help: str


# flag values -> the Lines of the flags generated into them, in the order they were defined.
LINES = weakref.WeakKeyDictionary()
