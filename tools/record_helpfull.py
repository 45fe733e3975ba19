"""Record each command line's help as golden files: tests/fixtures/helpfull/<command>.txt (`--helpfull`) and
<command>.help.txt (`--help`).

    .venv/bin/python tools/record_helpfull.py            # write the files
    .venv/bin/python tools/record_helpfull.py --check    # exit 1 naming each command whose help differs

absl commands print `--helpfull` (every flag by the module it is filed under: names, types, defaults, help) and
`--help` (the command's own flags by what a user does with them, one line each: albert.ground.help); the argparse one
(albert.info) has `--help` only. tests/test_helpfull.py holds the command lines to these files, so a changed flag,
default or help text is a reviewed change of a file.
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "fixtures", "helpfull")
# command -> (argv after the interpreter, the help flag)
COMMANDS = {
    "run_classifier": (["run_classifier.py"], "--helpfull"),
    "run_squad": (["run_squad.py"], "--helpfull"),
    "run_race": (["run_race.py"], "--helpfull"),
    "run_ner": (["run_ner.py"], "--helpfull"),
    "run_pretraining": (["run_pretraining.py"], "--helpfull"),
    "create_pretraining_data": (["create_pretraining_data.py"], "--helpfull"),
    "export_to_tfhub": (["export_to_tfhub.py"], "--helpfull"),
    "export_checkpoints": (["export_checkpoints.py"], "--helpfull"),
    "albert.convert": (["-m", "albert.convert"], "--helpfull"),
    "albert.train_spm": (["-m", "albert.train_spm"], "--helpfull"),
    "albert.info": (["-m", "albert.info"], "--help"),
}


def helpfull(command: str, flag: str | None = None) -> str:
    """The command's help (`flag`: its full help by default) as a user sees it in a pipe (absl wraps at 80 columns
    when stdout is not a terminal, --help's lines are at most 100), the repository's path left out."""
    argv, full = COMMANDS[command]
    flag = flag or full
    env = dict(os.environ, PYTHONPATH=ROOT, COLUMNS="80")
    if flag == "--help":
        env.pop("COLUMNS")  # albert.ground.help: 100 columns in a pipe
    result = subprocess.run([sys.executable, *argv, flag], capture_output=True, text=True, cwd=ROOT, env=env,
                            timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"{command} {flag}: exit {result.returncode}\n{result.stderr[-2000:]}")
    return result.stdout.replace(ROOT + os.sep, "")


def golden_path(command: str, flag: str | None = None) -> str:
    short = flag == "--help" and COMMANDS[command][1] != "--help"
    return os.path.join(GOLDEN, f"{command}.help.txt" if short else f"{command}.txt")


def recorded() -> list:
    """(command, help flag) of every golden file: each command's full help, and the absl commands' --help."""
    return [(command, flag) for command, (_, full) in COMMANDS.items()
            for flag in ((full, "--help") if full == "--helpfull" else (full,))]


def main(argv):
    check = argv[1:] == ["--check"]
    differ = []
    for command, flag in recorded():
        text = helpfull(command, flag)
        if check:
            with open(golden_path(command, flag), encoding="utf-8") as f:
                if f.read() != text:
                    differ.append(f"{command} {flag}")
        else:
            os.makedirs(GOLDEN, exist_ok=True)
            with open(golden_path(command, flag), "w", encoding="utf-8") as f:
                f.write(text)
    if differ:
        print("help differs from tests/fixtures/helpfull/: " + ", ".join(differ), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
