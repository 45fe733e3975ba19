"""A command's --help and --helpfull. --help: the command's summary and examples (its module's docstring), then its
own flags grouped by what a user is doing (albert.ground.settings_flags.GROUPS: inputs, model and weights, training,
evaluation and prediction, export, hardware and distribution), one entry each: the flag, its default (or `required`)
and the whole first sentence of its help, wrapped onto indented lines when it is longer than the line. --helpfull:
absl's full listing (every flag by the module that defines it, with its whole help), under the same docstring."""

import re
import shutil
import textwrap

from absl import flags

from albert.ground.settings_flags import GROUPS, LINES

STEPS = ("do_train", "do_eval", "do_predict")  # each leads its group, after the required flags
WIDTH = 100  # when stdout is no terminal (a pipe, a file): the lines of a golden file
# A sentence (or a clause that stands alone) ends at a '.' or ';' before a space or the end: not at a ':' (what follows
# it belongs to the sentence) nor inside a number (2.0) or an abbreviation (e.g., i.e., etc.).
SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)[.;](?=\s|$)")


def width() -> int:
    """The terminal's width (at least 80), or WIDTH in a pipe."""
    return max(80, shutil.get_terminal_size((WIDTH, 24)).columns)


def summary(text: str) -> str:
    """A help text's first sentence: up to its first '.' or ';' that ends a clause outside parentheses (a ':' does
    not end it: "2.0: beam size over start positions" stays whole)."""
    depth = 0
    for index, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth == 0 and char in ".;" and SENTENCE_END.match(text, index):
            return text[:index].strip()
    return text.strip()


def fit(text: str, room: int) -> list:
    """`text` in lines of `room` characters: one line whole, else one line without its parentheses, else the text
    without its parentheses wrapped at words onto as many lines as it takes (a sentence is never cut short)."""
    if len(text) <= room:
        return [text]
    bare = re.sub(r"\s*\([^()]*\)", "", text)
    return textwrap.wrap(bare, room, break_long_words=False, break_on_hyphens=False) or [bare]


def default_text(flag) -> str:
    if isinstance(flag.default, bool):
        return "true" if flag.default else "false"
    if flag.default is None or flag.default == "":
        return ""
    return flag.default_as_str.strip("'") if isinstance(flag.default, str) else flag.serialize().split("=", 1)[1]


def flag_lines(values=flags.FLAGS, columns: int | None = None) -> str:
    """The grouped one-line listing of the flags generated into `values` (albert.ground.settings_flags.define)."""
    lines = [line for line in LINES.get(values, []) if line.name in values]
    order = list(GROUPS)
    lines = sorted(lines, key=lambda line: (order.index(line.group), not line.required, line.name not in STEPS,
                                            line.inherited))
    shown = {line.name: ("required" if line.required else default_text(values[line.name])) for line in lines}
    name_width = max((len(name) for name in shown), default=0) + 4
    default_width = max((len(text) for text in shown.values() if len(text) <= 16), default=0) + 2
    columns = columns or width()
    out, group = [], None
    for line in lines:
        if line.group != group:
            group = line.group
            out.append(f"\n{GROUPS[group]}:")
        flag = values[line.name]
        text = summary(line.help)
        head = f"  --{line.name}".ljust(name_width) + "  " + shown[line.name].ljust(default_width)
        allowed = getattr(flag.parser, "enum_values", None) or ()
        choices = ", ".join(allowed)
        named = all(re.search(rf"\b{re.escape(value)}\b", text) for value in allowed)  # the sentence lists them
        if choices and not named and len(head) + len(text) + 2 + len(choices) <= columns:
            text = f"{text}: {choices}"
        first, *more = fit(text, columns - len(head))
        out.append((head + first).rstrip())
        out.extend(" " * len(head) + line for line in more)
    return "\n".join(out) + "\n"


def short_help(doc: str, values=flags.FLAGS) -> str:
    """--help: the docstring, the flags in groups, how to switch a true / false flag and where the rest is."""
    return (doc.rstrip("\n") + "\n\nflags (true / false ones: --flag, --noflag):\n" + flag_lines(values) +
            "\n--helpfull: every flag with its whole help, absl's logging flags too.\n")


def full_help(doc: str, values=flags.FLAGS) -> str:
    """--helpfull: the docstring and absl's listing of every flag."""
    return doc + "\nflags:\n" + values.get_help() + "\n"  # as absl.app.usage writes it
