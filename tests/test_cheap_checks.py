"""A runner's checks that need no model come before a model reference is resolved (which may download): a forgotten
--do_* flag, a missing data file or model file is one line, exit 2, with the resolver never called. Each case runs
the command in a process whose resolver (albert.runner.preflight.resolve) ends the process if it is called; the last
cases show it is called once the cheap checks pass."""

import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT

CODE = """
import sys
import albert.hub.resolve

def refuse(reference, *args, **kwargs):
    print(f"resolver called for {reference}", file=sys.stderr)
    sys.exit(3)

albert.hub.resolve.resolve = refuse  # before the command and albert.runner.preflight import it
from albert.commands import %s as command
sys.argv[0] = %r
command.command()
"""


def run(command: str, *args, cwd=None):
    program = f"{command}.py"
    return subprocess.run([sys.executable, "-c", CODE % (command, program), *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=dict(os.environ, PYTHONPATH=ROOT))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "train.csv").write_text("sentence,label\ngood,1\nbad,0\n")
    (tmp_path / "train.txt").write_text("EU B-ORG\nrejects O\n\nPeter B-PER\n")
    (tmp_path / "glue" / "RTE").mkdir(parents=True)
    return tmp_path


@pytest.mark.parametrize("command, args, message", [
    ("run_classifier", ["--task_name=RTE", "--data_dir={d}/glue"],
     "nothing to do: pass at least one of --do_train, --do_eval, --do_predict, --export_dir"),
    ("run_classifier", ["--task_name=RTE", "--data_dir={d}/nowhere", "--do_train"],
     "{d}/nowhere: --data_dir not found"),
    ("run_classifier", ["--train_file={d}/missing.csv", "--text_a_column=sentence", "--do_train"],
     "{d}/missing.csv: --train_file not found"),
    ("run_classifier", ["--task_name=RTE", "--data_dir={d}/glue", "--do_train", "--albert_config_file={d}/no.json"],
     "{d}/no.json: --albert_config_file not found"),
    ("run_ner", ["--train_file={d}/train.txt"],
     "nothing to do: pass at least one of --do_train, --do_eval, --do_predict, --export_dir"),
    ("run_ner", ["--do_train"], "pass --train_file (for --do_train)"),
    ("run_squad", [], "nothing to do: pass --do_train, --do_predict and/or --export_dir"),
    ("run_squad", ["--do_train", "--train_file={d}/train-v1.1.json"], "{d}/train-v1.1.json: --train_file not found"),
    ("run_race", ["--data_dir={d}", "--do_train=false", "--do_eval=false"],
     "nothing to do: pass at least one of --do_train, --do_eval, --do_predict, --export_dir"),
    ("run_pretraining", ["--input_file={d}/x.tfrecord", "--do_train=false"],
     "nothing to do: pass --do_train and/or --do_eval"),
])
def test_nothing_to_do_and_missing_files_before_any_download(files, command, args, message):
    args = [a.format(d=files) for a in args]
    result = run(command, f"--output_dir={files / 'out'}", "--init_checkpoint=albert_base_v2", *args)
    assert (result.returncode, result.stderr.splitlines()) == (2, [f"{command}.py: error: {message.format(d=files)}"])
    assert not (files / "out").exists()


@pytest.mark.parametrize("command, args, message", [
    ("export_to_tfhub", ["--export_path={d}/hub", "--spm_model_file={d}/no.model"],
     "{d}/no.model: --spm_model_file not found"),
    ("export_to_tfhub", ["--export_path={d}/train.csv"], "--export_path {d}/train.csv is a file; pass a directory"),
    ("export_checkpoints", ["--export_path={d}/glue"], "--export_path {d}/glue is a directory; pass a file name"),
    ("convert", ["--output={d}/train.csv", "--to=release"], "--output {d}/train.csv is a file; pass a directory"),
])
def test_the_export_tools_check_their_files_before_any_download(files, command, args, message):
    reference = "--input=albert_base_v2" if command == "convert" else "--albert_directory=albert_base_v2"
    result = run(command, reference, *[a.format(d=files) for a in args])
    assert (result.returncode, result.stderr.splitlines()) == (2, [f"{command}.py: error: {message.format(d=files)}"])


OUT = "--output_dir={d}/out"


@pytest.mark.parametrize("command, args", [
    ("run_classifier", [OUT, "--task_name=RTE", "--data_dir={d}/glue", "--do_predict",
                        "--init_checkpoint=albert_base_v2"]),
    ("run_classifier", [OUT, "--albert_hub_module_handle=albert_base_v2", "--task_name=RTE", "--data_dir={d}/glue",
                        "--do_predict"]),
    ("run_ner", [OUT, "--train_file={d}/train.txt", "--do_train", "--init_checkpoint=albert_base_v2"]),
    ("run_pretraining", [OUT, "--input_file={d}/x.tfrecord", "--init_checkpoint=albert_base_v2"]),
    ("export_to_tfhub", ["--albert_directory=albert_base_v2", "--export_path={d}/hub"]),
    ("convert", ["--input=albert_base_v2", "--output={d}/hf", "--to=huggingface"]),
])
def test_the_resolver_is_called_once_the_cheap_checks_pass(files, command, args):
    result = run(command, *[a.format(d=files) for a in args])
    assert (result.returncode, result.stderr.splitlines()) == (3, ["resolver called for albert_base_v2"])
