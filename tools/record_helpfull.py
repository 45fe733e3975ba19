"""Record each command line's full help as a golden file: tests/fixtures/helpfull/<command>.txt.

    .venv/bin/python tools/record_helpfull.py            # write the files
    .venv/bin/python tools/record_helpfull.py --check    # exit 1 naming each command whose help differs

absl commands print `--helpfull` (every flag by the module it is filed under: names, types, defaults, help); the
argparse ones (albert.info) `--help`. Recorded before the flags were generated from the settings dataclasses
(issue 60), so tests/test_helpfull.py holds the command lines to what users and the original's scripts knew.
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


def helpfull(command: str) -> str:
    """The command's help as a user sees it in an 80-column pipe (absl wraps at 80 when stdout is not a terminal),
    the repository's path left out (absl heads a `python -m` module's flags with its file's absolute path)."""
    argv, flag = COMMANDS[command]
    env = dict(os.environ, PYTHONPATH=ROOT, COLUMNS="80")
    result = subprocess.run([sys.executable, *argv, flag], capture_output=True, text=True, cwd=ROOT, env=env,
                            timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"{command} {flag}: exit {result.returncode}\n{result.stderr[-2000:]}")
    return result.stdout.replace(ROOT + os.sep, "")


def golden_path(command: str) -> str:
    return os.path.join(GOLDEN, f"{command}.txt")


def main(argv):
    check = argv[1:] == ["--check"]
    differ = []
    for command in COMMANDS:
        text = helpfull(command)
        if check:
            with open(golden_path(command), encoding="utf-8") as f:
                if f.read() != text:
                    differ.append(command)
        else:
            os.makedirs(GOLDEN, exist_ok=True)
            with open(golden_path(command), "w", encoding="utf-8") as f:
                f.write(text)
    if differ:
        print("help differs from tests/fixtures/helpfull/: " + ", ".join(differ), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
