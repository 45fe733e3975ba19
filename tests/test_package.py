"""pyproject.toml: `pip install .` gives an importable `albert` (every module, outside the repository), and the
command-line help lists the runtime flags with the script's own."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.helpers import ROOT


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
    result = subprocess.run([sys.executable, "-c", "import albert, albert.tasks.squad_eval, albert.model.sizing; "
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
    first_line = open(os.path.join(ROOT, script)).read().split("\n")[0].lstrip('r"')
    assert result.stdout.startswith(first_line), result.stderr[-2000:]
    for flag in flags:
        assert f"  {flag}:" in result.stdout or f"  --[no]{flag[2:]}:" in result.stdout, flag
    assert " " * 9 + "--" not in result.stdout  # the usage example keeps its line continuations
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
