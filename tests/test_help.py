"""albert/ground/help.py: a command's --help lists its own flags by what a user is doing (the `group` each setting
declares), one entry each with its default or `required` and the whole first sentence of its help (a colon or a
version number does not end it; a long one wraps); every help text is true for
the command that prints it; the project's own flag names have no double negative."""

import dataclasses
import os
import re
import subprocess
import sys

import pytest
from absl import flags

from albert.ground.help import flag_lines, fit, summary
from albert.ground.settings_flags import GROUPS, Settings, define, setting
from tools.record_helpfull import COMMANDS, ROOT, golden_path


@dataclasses.dataclass(frozen=True, kw_only=True)
class Job(Settings):
    learning_rate: float = setting(5e-5, "Peak learning rate. Warmup reaches it.", group="training")
    output_dir: str = setting(help="Checkpoints (model.ckpt-N), eval results: all of it.", group="inputs")
    use_tpu: bool = setting(False, "Use a TPU (same as --strategy=tpu).", group="hardware")
    do_train: bool = setting(False, "Train.", group="training")
    optimizer: str = setting("adamw", "Optimizer.", choices=("adamw", "lamb"), group="training")
    cached_dir: str | None = setting(None, "Where features are cached; default --output_dir.", group="inputs")


def test_flags_by_group_required_first_then_the_steps_one_line_each():
    values = flags.FlagValues()
    define(Job, values=values, defaults={"learning_rate": 1e-4})
    assert flag_lines(values, columns=56) == (  # a sentence too long for its line loses its parentheses, then wraps
        "\nInputs and outputs:\n"
        "  --output_dir     required  Checkpoints, eval results:\n"
        "                             all of it\n"
        "  --cached_dir               Where features are cached\n"
        "\nTraining:\n"
        "  --do_train       false     Train\n"
        "  --learning_rate  0.0001    Peak learning rate\n"
        "  --optimizer      adamw     Optimizer: adamw, lamb\n"
        "\nHardware and distribution:\n"
        "  --use_tpu        false     Use a TPU\n")
    assert "  --output_dir     required  Checkpoints (model.ckpt-N), eval results: all of it\n" in flag_lines(
        values, columns=80)


def test_a_summary_is_the_first_sentence_outside_parentheses_and_fits_its_lines():
    assert summary("Directory (e.g. MNLI/, CoLA/: the task's) in the GLUE layout. More.") == (
        "Directory (e.g. MNLI/, CoLA/: the task's) in the GLUE layout")
    # a colon or a version number does not end the sentence (run_squad.py's help showed "2.0" for four flags)
    assert summary("Lengths a batch is cut to: default or none") == "Lengths a batch is cut to: default or none"
    assert summary("2.0: beam size over start positions.") == "2.0: beam size over start positions"
    assert summary("Where features are cached; default --output_dir.") == "Where features are cached"
    assert fit("Tokens per example (at most max_position_embeddings)", 30) == ["Tokens per example"]
    assert fit("Show a progress bar while a model is downloaded", 30) == ["Show a progress bar while a",
                                                                         "model is downloaded"]


def test_run_squad_help_says_what_its_squad_2_flags_do():
    """Each help line holds its whole first sentence: the four flags of SQuAD 2.0 read "2.0" no more."""
    result = subprocess.run([sys.executable, "run_squad.py", "--help"], capture_output=True, text=True, cwd=ROOT,
                            env=dict(os.environ, PYTHONPATH=ROOT, COLUMNS="100"), timeout=120)  # a 100-column window
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for name, text in (("start_n_top", "5          2.0: beam size over start positions"),
                       ("end_n_top", "5          2.0: beam size over end positions per start"),
                       ("dropout_prob", "0.1        2.0: dropout in the answer-class head"),
                       ("version_2_with_negative", "false      SQuAD 2.0: questions may have no answer")):
        assert f"  --{name:<27}{text}" in lines, name
    start = lines.index("  --null_score_diff_threshold             2.0: predict no answer where the no-answer "
                        "score exceeds")
    assert lines[start + 1] == " " * 42 + "this"


def test_every_setting_declares_a_known_group():
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'group'"):
        setting(1, "One.")
    with pytest.raises(TypeError, match="group 'trainig' is none of inputs, own_files, instances, model"):
        setting(1, "One.", group="trainig")


HELP_COMMANDS = sorted(command for command, (_, flag) in COMMANDS.items() if flag == "--helpfull")


@pytest.mark.parametrize("command", HELP_COMMANDS)
def test_the_recorded_help_is_one_entry_per_flag_within_100_columns(command):
    """The golden --help files (tests/test_helpfull.py holds each command to its file): no line wider than 100, no
    summary cut short (a long sentence goes on, indented, on the next lines), each of the command's flags once,
    under a known heading."""
    with open(golden_path(command, "--help"), encoding="utf-8") as f:
        text = f.read()
    body = text.split("\nflags (true / false ones: --flag, --noflag):\n", 1)[1]
    assert all(len(line) <= 100 for line in body.splitlines())
    assert "…" not in body
    headings = re.findall(r"^(\S.*):$", body, re.M)
    assert headings and all(h in GROUPS.values() for h in headings)
    names = re.findall(r"^  --(\w+) ", body, re.M)
    assert len(names) == len(set(names)) > 3
    with open(golden_path(command), encoding="utf-8") as f:
        full = f.read()
    own = re.search(r"^albert\.commands\.\w+:\n(.*?)\n\n", full, re.M | re.S).group(1)
    assert set(re.findall(r"^  --(?:\[no\])?(\w+):", own, re.M)) <= set(names)


def test_no_double_negative_in_the_flag_names():
    """A true / false flag is switched off with --no<name>: no flag of the project is named no_... (--header:
    --noheader)."""
    for command in HELP_COMMANDS:
        with open(golden_path(command, "--help"), encoding="utf-8") as f:
            names = re.findall(r"^  --(\w+) ", f.read(), re.M)
        assert not [name for name in names if name.startswith("no")], command


def test_run_ner_says_nothing_true_only_of_other_commands():
    with open(golden_path("run_ner"), encoding="utf-8") as f:
        text = " ".join(f.read().split())
    for words in ("The original's flag", "the original's batches", "TF Hub encoder", "SQuAD", "MediaPipe",
                  "Task Library"):
        assert words not in text, words
    assert "Lengths a batch is cut to, so padding is not computed." in text


@pytest.mark.parametrize("command, words", [
    ("run_squad", "default: fixed for SQuAD 1.1 (as the TFLite Task Library's BertQuestionAnswerer needs)"),
    ("export_to_tfhub", "default: fixed, as MediaPipe's TextEmbedder needs."),
    ("run_classifier", "so that MediaPipe Tasks' TextClassifier and the TFLite Task Library run it on raw text"),
])
def test_the_commands_own_help_where_a_shared_flag_means_more(command, words):
    with open(golden_path(command), encoding="utf-8") as f:
        assert words in " ".join(f.read().split())


def test_the_help_files_exist_for_every_command():
    for command in HELP_COMMANDS:
        assert os.path.isfile(golden_path(command, "--help")), command
