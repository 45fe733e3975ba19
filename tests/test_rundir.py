"""One writer per output directory (albert/ground/rundir.py): a second run stops at once naming the first; a killed run's
lock is taken over; the lock file goes when the run ends; a directory made only for a failed run is removed."""

import functools
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.helpers import one_line_error, ROOT, run_command

HOLD = textwrap.dedent("""
    import sys, time
    from albert.ground.rundir import exclusive
    with exclusive(sys.argv[1]):
        print("held", flush=True)
        time.sleep(120)
""")


def holder(directory):
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(directory)], stdout=subprocess.PIPE, text=True,
                               env=dict(os.environ, PYTHONPATH=ROOT), stderr=subprocess.PIPE)
    assert process.stdout.readline().strip() == "held", process.stderr.read()
    return process


run = functools.partial(run_command, timeout=120)


@pytest.mark.parametrize("script", ["run_pretraining.py", "run_classifier.py", "run_squad.py", "run_race.py"])
def test_second_run_on_a_directory_stops_naming_the_first(script, tmp_path):
    out = tmp_path / "out"
    first = holder(out)
    try:
        result = run(script, f"--output_dir={out}")
        assert result.returncode == 2, result.stderr[-2000:]
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"{script}: error: {out}: in use by another run (pid "
                                                       f"{first.pid} on "), lines
        assert lines[0].endswith("; wait for it to end or pass another --output_dir")
        assert os.listdir(out) == [".albert.lock"]  # the first run's, untouched
    finally:
        first.kill()
        first.wait()


def test_a_killed_runs_lock_is_taken_over_and_the_file_removed_at_the_end(tmp_path):
    out = tmp_path / "out"
    first = holder(out)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    assert os.listdir(out) == [".albert.lock"]  # left by the kill
    code = "from albert.ground.rundir import exclusive\nwith exclusive(%r):\n    open(%r, 'w').write('x')\n" % (
        str(out), str(out / "result.txt"))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=ROOT))
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(f"{out}: taking over from a run that ended without releasing it (pid {first.pid} ")
    assert os.listdir(out) == ["result.txt"]


def test_a_failed_run_leaves_no_directory_and_a_file_is_refused(tmp_path):
    out = tmp_path / "new"
    result = run("run_classifier.py", f"--output_dir={out}", "--task_name=MRPC")  # no model, no --data_dir
    assert one_line_error(result) == (
        "run_classifier.py: error: --albert_config_file is required: pass it, or --init_checkpoint naming a model "
        "directory, or an --output_dir of a finished run (its albert_config.json)")
    assert os.listdir(tmp_path) == []
    (tmp_path / "file").write_text("x")
    assert one_line_error(run("run_pretraining.py", f"--output_dir={tmp_path / 'file'}")) == \
        f"run_pretraining.py: error: {tmp_path / 'file'}: --output_dir is a file; pass a directory"


def test_workers_of_one_multi_worker_run_lock_their_own_names(monkeypatch):
    from albert.ground.rundir import lock_name

    for tf_config, name in [(None, ".albert.lock"), ('{"task": {"type": "worker", "index": 0}}', ".albert.lock"),
                            ('{"task": {"type": "worker", "index": 1}}', ".albert.lock.worker_1"),
                            ('{"task": {"type": "chief", "index": 0}}', ".albert.lock")]:
        if tf_config is None:
            monkeypatch.delenv("TF_CONFIG", raising=False)
        else:
            monkeypatch.setenv("TF_CONFIG", tf_config)
        assert lock_name() == name
