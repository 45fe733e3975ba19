"""albert/ground/extras.py: with the core install alone (every extra refused by tests/helpers.py's finder), asking
for a feature whose extra is missing is one line naming the extra and its install command, exit 2, before TensorFlow
starts and before anything is written; asking for nothing optional needs nothing. (Importing every module without
the extras: tests/test_architecture.py; Beam's --runner: tests/test_beam_pipeline.py.)"""

import os
import subprocess
import sys

import pytest

from albert.ground import extras
from albert.ground.errors import AlbertError
from tests.export_helpers import SPM
from tests.helpers import ROOT, refusing_extras

ONNX_LINE = ("needs the 'onnx' extra (tf2onnx, onnx, onnxruntime not installed): pip install '.[onnx]' (or -r "
             "requirements-onnx.txt), or pass --onnx_export=none")


def test_require_names_what_is_missing_and_the_install_command(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("dask", "distributed") else real(name, *a))
    assert extras.missing("dask") == ["dask", "distributed"] and extras.missing("onnx") == []
    extras.require("onnx", "--onnx_export=float32")  # installed: nothing said
    with pytest.raises(AlbertError) as raised:
        extras.require("dask", "--runner=DaskRunner")
    assert str(raised.value) == ("--runner=DaskRunner needs the 'beam' extra (dask, distributed not installed): "
                                 "pip install '.[beam]' (or -r requirements-beam.txt)")


def test_each_extra_is_the_pyproject_extra_and_the_requirements_file_it_names():
    import tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        optional = tomllib.load(f)["project"]["optional-dependencies"]
    for name, extra in extras.EXTRAS.items():
        with open(os.path.join(ROOT, extra.requirements), encoding="utf-8") as f:
            pinned = {line.split("==")[0].strip().lower() for line in f if "==" in line and not line.startswith("#")}
        declared = {spec.split("=")[0].split("<")[0].split(">")[0].strip().lower() for spec in optional[extra.extra]}
        assert pinned <= declared | {"protobuf"}, (name, pinned - declared)
        for package in extra.packages:  # each import name comes from a pinned distribution of that file
            assert any(package.replace("_", "-") == p or package == p for p in pinned), (name, package)


@pytest.mark.parametrize("script", ["run_classifier.py", "run_squad.py", "run_race.py"])
def test_onnx_export_without_the_extra_is_one_line_before_tensorflow_and_writes_nothing(script, tmp_path):
    (tmp_path / "core").mkdir()
    env = refusing_extras(str(tmp_path / "core"))
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    config = tmp_path / "albert_config.json"
    config.write_text('{"vocab_size": 30000, "hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8}')
    data = {"run_classifier.py": ["--task_name=SST-2", f"--data_dir={tmp_path}"],
            "run_squad.py": [f"--train_file={config}", "--max_query_length=16"],
            "run_race.py": [f"--data_dir={tmp_path}", "--max_qa_length=16"]}[script]
    code = ("import runpy, sys; sys.argv = sys.argv[1:]; "
            "import atexit; atexit.register(lambda: print('TF' if 'tensorflow' in sys.modules else 'no TF', "
            "file=sys.stderr)); runpy.run_path(sys.argv[0], run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", code, os.path.join(ROOT, script), *data,
                             f"--output_dir={tmp_path / 'out'}", f"--albert_config_file={config}", f"--spm_model_file={SPM}",
                             "--do_train", "--max_seq_length=64", f"--export_dir={tmp_path / 'serving'}",
                             "--onnx_export=float32"], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip().splitlines() == [f"{script}: error: --onnx_export=float32 {ONNX_LINE}", "no TF"]
    assert sorted(os.listdir(tmp_path)) == ["albert_config.json", "core"]
