"""pyproject.toml: `pip install .` gives an importable `albert` (every module, outside the repository), and the
command-line help lists the runtime flags with the script's own."""

import ast
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import pytest

from tests.helpers import ROOT
from tools.record_helpfull import COMMANDS, golden_path


@pytest.mark.slow
def test_pip_install_gives_every_module_outside_the_repository(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, name), source / name)
    shutil.copytree(os.path.join(ROOT, "albert"), source / "albert",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    target = tmp_path / "site"
    result = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                             "--disable-pip-version-check", f"--target={target}", str(source)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    wanted = sorted(os.path.relpath(os.path.join(d, f), ROOT) for d, _, files in os.walk(os.path.join(ROOT, "albert"))
                    for f in files if f.endswith(".py"))
    installed = sorted(os.path.relpath(os.path.join(d, f), target) for d, _, files in os.walk(target / "albert")
                       for f in files if f.endswith(".py"))
    assert installed == wanted
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(target)
    result = subprocess.run([sys.executable, "-c", "import albert, albert.tasks.squad.evaluate, albert.model.sizing; "
                             "print(albert.__file__); print(albert.AlbertConfig.preset('base_v2').hidden_size)"],
                            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == [str(target / "albert" / "__init__.py"), "768"]


@pytest.mark.parametrize("script, flags", [
    ("run_pretraining.py", ["--strategy", "--mixed_precision", "--jit_compile", "--log_every_steps", "--recompute",
                            "--deterministic"]),
    ("run_classifier.py", ["--strategy", "--mixed_precision", "--random_seed", "--recompute", "--deterministic"]),
    ("run_squad.py", ["--strategy", "--mixed_precision", "--recompute", "--deterministic"]),
    ("run_race.py", ["--strategy", "--mixed_precision", "--recompute", "--deterministic"]),
    ("export_to_tfhub.py", ["--albert_directory", "--checkpoint_name"]),
    ("albert/convert.py", ["--input", "--output", "--to", "--architecture"]),
])
def test_help_lists_the_shared_flags_and_keeps_the_usage_lines(script, flags):
    result = subprocess.run([sys.executable, os.path.join(ROOT, script), "--help"], capture_output=True, text=True,
                            timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))
    name = os.path.basename(script)[:-3]
    with open(os.path.join(ROOT, "albert", "commands", f"{name}.py"), encoding="utf-8") as f:
        doc = ast.get_docstring(ast.parse(f.read()), clean=False)  # the script's command: its docstring heads --help
    assert result.stdout.startswith(doc.split("\n")[0]), result.stderr[-2000:]
    for flag in flags:
        assert re.search(rf"^  {flag} ", result.stdout, re.M), flag
    assert result.stdout.startswith(doc.strip() + "\n")  # the usage example as written, line continuations kept
    assert result.returncode == 0  # absl's --help exits 1; here a help request is a success


@pytest.mark.parametrize("script, argument, message", [
    ("run_classifier.py", "--max_seq_length=abc", "flag --max_seq_length=abc: invalid literal for int() with base 10: "
                                                  "'abc'; see --help"),
    ("run_pretraining.py", "--no_such_flag=1", "Unknown command line flag 'no_such_flag'; see --help"),
    ("run_squad.py", "--doc_stride=", "flag --doc_stride=: invalid literal for int() with base 10: ''; see --help"),
    ("albert/convert.py", "--to=onnx", "flag --to=onnx: value should be one of <release|huggingface>; see --help"),
])
def test_flag_errors_are_one_line_and_exit_2(script, argument, message):
    result = subprocess.run([sys.executable, os.path.join(ROOT, script), argument], capture_output=True, text=True,
                            timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"{os.path.basename(script)}: error: {message}"]


def package_source(tmp_path):
    """The files `pip install .` reads, copied (a build writes build/ and *.egg-info beside its source)."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, name), source / name)
    shutil.copytree(os.path.join(ROOT, "albert"), source / "albert",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return source


def console_name(command: str) -> str:
    return "albert-" + command.removeprefix("albert.").replace("_", "-")


@pytest.mark.slow
def test_the_wheel_installs_a_command_for_every_script_run_from_outside_the_checkout(tmp_path):
    """The wheel, installed into a fresh virtual environment (its dependencies: this one's packages, read through a
    .pth file, nothing downloaded), gives albert-<name> for every command line: each one's --help and --helpfull
    are the checkout's (the golden files), and real runs work from a directory outside the checkout: albert-info on
    a preset, albert-train-spm and albert-create-pretraining-data on a small corpus, a runner's one-line error under
    its own name."""
    wheels = tmp_path / "wheels"
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                             "--disable-pip-version-check", f"--wheel-dir={wheels}", str(package_source(tmp_path))],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    (wheel,) = wheels.iterdir()
    with zipfile.ZipFile(wheel) as archive:
        entry_points = next(n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt"))
        scripts = dict(re.findall(r"^(albert-[\w-]+) = (\S+)$", archive.read(entry_points).decode(), re.M))
    assert scripts == {console_name(c): f"albert.commands.{c.removeprefix('albert.')}:command" for c in COMMANDS}

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    site = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(site, "zz_parent_environment.pth"), "w") as f:  # after the wheel's own files
        f.write(f"import site; site.addsitedir({sysconfig.get_path('purelib')!r})\n")
    result = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                             "--disable-pip-version-check", str(wheel)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]

    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"

    def run(*argv):
        return subprocess.run(argv, capture_output=True, text=True, cwd=work, env=env, timeout=300)

    located = run("python", "-c", "import albert.commands; print(albert.commands.__file__)")
    assert located.stdout.strip() == os.path.join(site, "albert", "commands", "__init__.py"), located.stderr
    for command, (_, full) in COMMANDS.items():
        for flag in {full, "--help"}:
            result = run(console_name(command), flag)
            assert result.returncode == 0, (command, flag, result.stderr[-2000:])
            with open(golden_path(command, flag), encoding="utf-8") as f:
                golden = f.read()
            if command == "albert.info":  # argparse's usage names the program and wraps to its length: the rest
                golden, text = golden.split("\n\n", 1)[1], result.stdout.split("\n\n", 1)[1]
                assert result.stdout.startswith("usage: albert-info [-h]")
            else:
                text = result.stdout
            assert text == golden, (command, flag)

    info = run("albert-info", "--preset", "base_v2")
    assert info.returncode == 0 and "11,683,584" in info.stdout, info.stdout + info.stderr
    corpus = work / "corpus.txt"
    corpus.write_text("".join(f"The {word} sat on mat number {i}.\nIt was a fine {word} indeed.\n\n"
                              for i, word in enumerate(["cat", "dog", "bird", "fish"] * 10)))
    spm = run("albert-train-spm", f"--input_file={corpus}", f"--model_prefix={work / 'tiny'}", "--vocab_size=45")
    assert (spm.returncode, spm.stdout) == (0, f"wrote {work / 'tiny.model'} (45 pieces from 80 lines)\n"), spm.stderr
    data = run("albert-create-pretraining-data", f"--input_file={corpus}", f"--output_file={work / 'train.tfrecord'}",
               f"--spm_model_file={work / 'tiny.model'}", "--max_seq_length=32", "--max_predictions_per_seq=5",
               "--dupe_factor=2", "--noprogress")
    assert data.returncode == 0, data.stderr[-2000:]
    assert data.stdout.splitlines()[-1] == f"wrote {work / 'train.tfrecord'}"
    assert (work / "train.tfrecord").stat().st_size > 1000
    refused = run("albert-run-classifier", f"--output_dir={work / 'out'}", "--task_name=RTE")
    assert (refused.returncode, refused.stderr) == (
        2, "albert-run-classifier: error: --albert_config_file is required: pass it, or --init_checkpoint naming a "
           "model directory, or an --output_dir of a finished run (its albert_config.json)\n")
    assert sorted(os.listdir(work)) == ["corpus.txt", "tiny.model", "tiny.vocab", "train.tfrecord"]
