"""create_pretraining_data.py --runner=DaskRunner on a real dask.distributed cluster on 127.0.0.1: a scheduler and
two worker processes (one thread each, the project on their PYTHONPATH), started here and always torn down.

The shards concatenate, byte for byte, to the local generator's single file; the summary's counts are the local
run's; both workers executed tasks; a successful run's stderr is empty; a worker-side error, a worker that cannot
import the project and a scheduler that does not answer are each one line, exit 2, nothing written.
"""

import os
import re
import subprocess
import sys
import time

import apache_beam  # noqa: F401  (requirements-beam.txt, installed by scripts/test.sh: missing fails, never skips)
import distributed  # noqa: F401
import pytest

from tests.helpers import ROOT
from tests.task_data_helpers import write_corpus_files
from tools.dask_cluster import LocalProcessCluster

COMMON = ["--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=2", "--random_seed=3",
          "--noprogress"]


def cpd(*args, timeout=300):
    environment = dict(os.environ, PYTHONPATH=ROOT)
    environment.pop("TF_CPP_MIN_LOG_LEVEL", None)
    start = time.monotonic()
    result = subprocess.run([sys.executable, os.path.join(ROOT, "create_pretraining_data.py"), *args],
                            capture_output=True, text=True, timeout=timeout, env=environment)
    result.seconds = time.monotonic() - start
    return result


@pytest.fixture(scope="module")
def inputs(corpus_dir, tmp_path_factory):
    directory = tmp_path_factory.mktemp("dask_inputs")
    write_corpus_files(corpus_dir, directory)  # plain with blank-line runs, gzip, a one-line document
    return directory, f"--spm_model_file={corpus_dir / 'sp.model'}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LocalProcessCluster(tmp_path_factory.mktemp("dask_cluster"), workers=2) as cluster:
        yield cluster
    assert all(p.poll() is not None for p in cluster.processes)  # torn down: no process left


def summary(stdout: str) -> list:
    """The summary lines without the timing part."""
    lines = stdout.strip().splitlines()[:4]
    return [re.sub(r"\(in \d+ file\(s\), .*\)$", "", lines[0]).strip(), *lines[1:]]


@pytest.mark.slow
@pytest.mark.parametrize("nsp", [False, True], ids=["sop", "nsp"])
def test_dask_shards_are_the_local_bytes_and_every_worker_works(inputs, cluster, tmp_path, nsp):
    directory, spm = inputs
    mode = ["--random_next_sentence"] if nsp else []
    local = cpd(f"--input_file={directory}/*", f"--output_file={tmp_path}/local.tfrecord", spm, *COMMON, *mode)
    assert local.returncode == 0, local.stderr[-2000:]
    before = cluster.executed()
    result = cpd(f"--input_file={directory}/*", f"--output_file={tmp_path}/dask/train", spm, *COMMON, *mode,
                 "--runner=DaskRunner", f"--dask_client_address={cluster.address}", "--num_output_shards=3")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr == ""
    after = cluster.executed()
    shards = sorted(os.listdir(tmp_path / "dask"))
    assert shards == [f"train-{i:05d}-of-00003" for i in range(3)]  # no temporary or .counts file left
    joined = b"".join((tmp_path / "dask" / s).read_bytes() for s in shards)
    expected = (tmp_path / "local.tfrecord").read_bytes()
    assert joined == expected
    assert len(expected) > 10_000
    assert summary(result.stdout) == summary(local.stdout)
    assert summary(result.stdout)[0].startswith("documents 301, instances ")
    tasks = {worker: after[worker] - before.get(worker, 0) for worker in after}
    print(f"\n{'nsp' if nsp else 'sop'}: {len(expected):,} bytes identical to the local file; tasks per worker "
          f"{sorted(tasks.values())}; {result.seconds:.1f} s; {summary(result.stdout)[0]}")
    assert len(tasks) == 2 and all(n > 0 for n in tasks.values()), tasks


@pytest.mark.slow
def test_a_worker_side_error_is_one_line_and_leaves_nothing(inputs, cluster, tmp_path):
    _, spm = inputs
    (tmp_path / "one.txt").write_text("a first sentence here\nand a second one\n", encoding="utf-8")
    result = cpd(f"--input_file={tmp_path}/one.txt", f"--output_file={tmp_path}/out/train", spm, *COMMON,
                 "--random_next_sentence", "--runner=DaskRunner", f"--dask_client_address={cluster.address}")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr[-3000:]
    assert lines[0] == (f"create_pretraining_data.py: error: {tmp_path}/one.txt: one document of 2 sentence(s): its "
                        "pairs would take segment B from itself; give each input file at least two documents (a "
                        "blank line between them)")
    assert sorted(os.listdir(tmp_path)) == ["one.txt"]


@pytest.mark.slow
def test_the_runners_own_local_cluster_is_closed_inside_the_run(inputs, tmp_path):
    directory, spm = inputs
    local = cpd(f"--input_file={directory}/*", f"--output_file={tmp_path}/local.tfrecord", spm, *COMMON)
    assert local.returncode == 0, local.stderr[-2000:]
    result = cpd(f"--input_file={directory}/*", f"--output_file={tmp_path}/dask/train", spm, *COMMON,
                 "--runner=DaskRunner", "--num_output_shards=2")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr == ""  # nothing from the LocalCluster's shutdown after the run
    joined = b"".join((tmp_path / "dask" / f"train-{i:05d}-of-00002").read_bytes() for i in range(2))
    assert joined == (tmp_path / "local.tfrecord").read_bytes()


@pytest.mark.slow
def test_workers_that_cannot_import_the_project_or_no_scheduler_are_one_line(inputs, tmp_path):
    directory, spm = inputs
    args = [f"--input_file={directory}/*", f"--output_file={tmp_path}/out/train", spm, *COMMON, "--runner=DaskRunner"]
    with LocalProcessCluster(tmp_path / "cluster", workers=1, pythonpath=None) as lonely:
        result = cpd(*args, f"--dask_client_address={lonely.address}", timeout=180)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr[-3000:]
    assert lines[0].startswith(f"create_pretraining_data.py: error: a Dask worker of the Dask scheduler at "
                               f"{lonely.address} cannot import this project (ModuleNotFoundError: No module named "
                               "'albert'"), lines[0]
    # a scheduler that is not there: the connection timeout, then one line
    result = cpd(*args, "--dask_client_address=tcp://127.0.0.1:9", "--dask_connection_timeout=3", timeout=120)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr[-3000:]
    assert lines[0].startswith("create_pretraining_data.py: error: cannot reach the Dask scheduler at "
                               "tcp://127.0.0.1:9 within 3 s"), lines[0]
    assert result.seconds < 60
    assert sorted(os.listdir(tmp_path)) == ["cluster"]  # no output directory, no shard


def test_shutdown_noise_is_dropped_and_nothing_else():
    """asyncio's report of a TimeoutError nobody retrieved (what distributed's shutdown leaves on a busy machine) is
    dropped; the same report for another error, and any other asyncio message, still shows."""
    import asyncio
    import gc
    import logging

    from albert.data.beam_dask import quiet_shutdown

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage().splitlines()[0] + " " + type(record.exc_info[1]).__name__)

    logger = logging.getLogger("asyncio")
    handler = Keep()
    logger.addHandler(handler)
    try:
        quiet_shutdown()
        quiet_shutdown()  # once per process
        loop = asyncio.new_event_loop()
        for error in (TimeoutError("Timeout"), ValueError("a real one")):
            future = loop.create_future()
            future.set_exception(error)
            del future  # never retrieved: asyncio reports it when the future is collected
            gc.collect()
        loop.close()
    finally:
        logger.removeHandler(handler)
    assert records == ["Future exception was never retrieved ValueError"]
    assert sum(type(f).__name__ == "ShutdownNoise" for f in logger.filters) == 1


@pytest.mark.slow
def test_a_busy_machine_leaves_a_successful_runs_stderr_empty(inputs, tmp_path):
    """Three DaskRunner runs (the runner's own LocalCluster) while a CPU-bound process per core keeps the machine
    busy: each succeeds with an empty stderr (issue: a stray TimeoutError from the client's shutdown under load)."""
    directory, spm = inputs
    burn = "import time\nend = time.monotonic() + 240\nwhile time.monotonic() < end:\n    pass\n"
    burners = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(os.cpu_count() or 2)]
    try:
        for run in range(3):
            result = cpd(f"--input_file={directory}/*", f"--output_file={tmp_path}/run{run}/train", spm, *COMMON,
                         "--runner=DaskRunner", "--num_output_shards=2")
            assert result.returncode == 0, result.stderr[-3000:]
            assert result.stderr == "", f"run {run + 1} of 3 under load: {result.stderr[-3000:]}"
            print(f"run {run + 1} of 3 under load: exit 0, stderr empty, {result.seconds:.1f} s")
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
