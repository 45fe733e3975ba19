"""create_pretraining_data.py --runner: the same job as an Apache Beam pipeline, byte for byte the local output.

The Python runner is named explicitly (FnApiRunner: what DirectRunner falls back to when Beam's Prism runner cannot
be fetched, as here), in memory and in two worker processes; DirectRunner itself is run once, whatever it picks.
"""

import os
import subprocess
import sys

import apache_beam  # noqa: F401  (requirements-beam.txt, installed by scripts/test.sh: missing fails, never skips)
import pytest

from tests.helpers import ROOT, refusing_extras
from tests.task_data_helpers import write_corpus_files

COMMON = ["--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=2", "--random_seed=3",
          "--noprogress"]


def cpd(*args, env=None):
    environment = dict(os.environ, PYTHONPATH=ROOT)
    environment.update(env or {})
    environment.pop("TF_CPP_MIN_LOG_LEVEL", None)
    return subprocess.run([sys.executable, os.path.join(ROOT, "create_pretraining_data.py"), *args],
                          capture_output=True, text=True, timeout=300, env=environment)


@pytest.fixture(scope="module")
def inputs(corpus_dir, tmp_path_factory):
    directory = tmp_path_factory.mktemp("beam_inputs")
    write_corpus_files(corpus_dir, directory)
    return directory, f"--spm_model_file={corpus_dir / 'sp.model'}"


@pytest.mark.slow
@pytest.mark.parametrize("nsp", [False, True], ids=["sop", "nsp"])
def test_beam_shards_concatenate_to_the_local_generators_bytes(inputs, tmp_path, nsp):
    directory, spm = inputs
    mode = ["--random_next_sentence"] if nsp else []
    local = cpd(f"--input_file={directory}/*", f"--output_file={tmp_path}/local.tfrecord", spm, *COMMON, *mode)
    assert local.returncode == 0, local.stderr[-2000:]
    expected = (tmp_path / "local.tfrecord").read_bytes()
    runs = {"in_memory": ["--runner=FnApiRunner", "--num_output_shards=3"],
            "two_processes": ["--runner=FnApiRunner", "--direct_running_mode=multi_processing",
                              "--direct_num_workers=2", "--num_output_shards=2"]}
    if not nsp:
        runs["direct"] = ["--runner=DirectRunner"]
    for name, flags in runs.items():
        result = cpd(f"--input_file={directory}/*", f"--output_file={tmp_path}/{name}/train", spm, *COMMON, *mode,
                     *flags)
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stderr == ""  # Beam's and its workers' log lines stay out of a successful run's stderr
        shards = sorted(os.listdir(tmp_path / name))
        count = {"in_memory": 3, "two_processes": 2}.get(name, len(shards))
        assert shards == [f"train-{i:05d}-of-{count:05d}" for i in range(count)]
        assert b"".join((tmp_path / name / s).read_bytes() for s in shards) == expected, name
        assert "documents 301, instances " in result.stdout


def test_beam_errors_are_one_line_exit_2_and_leave_nothing(inputs, tmp_path):
    directory, spm = inputs
    (tmp_path / "one.txt").write_text("a first sentence here\nand a second one\n", encoding="utf-8")
    cases = [
        (["--runner=NoSuchRunner"], "--runner 'NoSuchRunner' is not a Beam runner here"),
        (["--runner=FnApiRunner", "--direct_running_mode=bogus"],
         "a Beam pipeline option: argument --direct_running_mode: invalid choice: 'bogus'"),
        (["--runner=FnApiRunner", "--no_such_option=3"], "unknown flag(s) ['--no_such_option=3']: neither"),
        (["--direct_num_workers=2"], "unknown flag '--direct_num_workers=2'; see --help (Beam pipeline options "
                                     "need --runner)"),
        (["--runner=FnApiRunner", f"--output_file={tmp_path}/out/a,{tmp_path}/out/b"],
         "--runner writes shards named after one --output_file prefix; pass one path, not 2"),
        ([f"--input_file={tmp_path}/one.txt", "--runner=FnApiRunner", "--random_next_sentence"],
         f"{tmp_path}/one.txt: one document of 2 sentence(s): its pairs would take segment B from itself"),
        ([f"--input_file={tmp_path}/one.txt", "--runner=FnApiRunner", "--direct_running_mode=multi_processing",
          "--direct_num_workers=2", "--random_next_sentence"], f"{tmp_path}/one.txt: one document of 2 sentence(s)"),
    ]
    for flags, expected in cases:
        args = {"input_file": f"--input_file={directory}/*", "output_file": f"--output_file={tmp_path}/out/train"}
        for flag in flags:
            args[flag.split("=")[0].lstrip("-")] = flag
        result = cpd(spm, *COMMON, *args.values())
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1, (flags, result.stderr[-2000:])
        assert lines[0].startswith("create_pretraining_data.py: error: ") and expected in lines[0], lines[0]
        assert sorted(os.listdir(tmp_path)) == ["one.txt"], flags  # no output directory, no shard, no temp


def test_runner_without_beam_installed_names_the_install_command(inputs, tmp_path):
    directory, spm = inputs
    cases = (("DirectRunner", None, "--runner needs the 'beam' extra (apache_beam not installed)"),
             ("DaskRunner", ["dask", "distributed"],
              "--runner=DaskRunner needs the 'beam' extra (dask, distributed not installed)"))
    for index, (runner, refused, expected) in enumerate(cases):
        (tmp_path / f"core{index}").mkdir()
        env = refusing_extras(str(tmp_path / f"core{index}"), refused)
        result = cpd(f"--input_file={directory}/*", f"--output_file={tmp_path}/out/train", spm, *COMMON,
                     f"--runner={runner}", env={"PYTHONPATH": env["PYTHONPATH"]})
        assert result.returncode == 2, result.stderr[-2000:]
        assert result.stderr.strip() == (f"create_pretraining_data.py: error: {expected}: pip install '.[beam]' "
                                         "(or -r requirements-beam.txt)")
    assert sorted(os.listdir(tmp_path)) == ["core0", "core1"]
