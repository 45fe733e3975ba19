"""SIGKILL at random moments: no orphan process, no leftover beside the outputs once the rerun is done, the rerun
completes, and a resumed run_classifier equals an uninterrupted one (run_pretraining's exact resume with dropout is
tests/test_run_pretraining.py's)."""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

from albert.ground.atomic import remove_leftovers, replacing_file
from albert.ground.outputs import MARKER, writing
from tests.helpers import ROOT
from tests.pretraining_helpers import step_losses


def processes_mentioning(text: str) -> list:
    """pids of live processes whose command line contains `text` (forked workers share their parent's)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().decode("utf-8", "replace")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(pid))
    return found


def command(script, *args):
    return [sys.executable, os.path.join(ROOT, script), *args]


ENV = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")


def start(script, *args):
    return subprocess.Popen(command(script, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=ENV)


def run(script, *args):
    return subprocess.run(command(script, *args), capture_output=True, text=True, timeout=300, env=ENV)


def kill_after(process, seconds: float):
    time.sleep(seconds)
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait()
    process.stdout.close()  # not communicate(): an orphaned child would hold the pipes open
    process.stderr.close()


def no_orphans(marker: str):
    # Orphaned workers notice their parent's death at their next poll; on a loaded machine that can take seconds, so
    # the bound is generous (it only caps the wait: a quiet machine returns in well under a second).
    deadline = time.time() + 60
    while processes_mentioning(marker) and time.time() < deadline:
        time.sleep(0.1)
    assert processes_mentioning(marker) == []


def dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_remove_leftovers_takes_only_a_dead_writers_files(tmp_path):
    dead, alive = dead_pid(), os.getpid()
    names = [f"a.tfrecord.tmp-{dead}", f".a.tfrecord.spill-{dead}-x1", f".sp.corpus-{dead}-y.txt",
             f"a.tfrecord.tmp-{alive}", "b.tfrecord", "model.ckpt-5_temp", "notes.tmp-x"]
    for name in names:
        (tmp_path / name).mkdir() if "spill" in name or name.endswith("_temp") else (tmp_path / name).write_text("")
    assert sorted(remove_leftovers(str(tmp_path), "a.tfrecord")) == [f".a.tfrecord.spill-{dead}-x1",
                                                                     f"a.tfrecord.tmp-{dead}"]
    assert sorted(remove_leftovers(str(tmp_path), tf_temp=True)) == [f".sp.corpus-{dead}-y.txt", "model.ckpt-5_temp"]
    assert sorted(os.listdir(tmp_path)) == ["a.tfrecord.tmp-" + str(alive), "b.tfrecord", "notes.tmp-x"]


def test_remove_leftovers_keeps_a_users_lookalikes(tmp_path):
    """A user's folder named like TensorFlow's `_temp` but holding their files, one named `_temp` without a
    checkpoint's name, and a file whose `.tmp-<digits>` runs on into other letters stay; TensorFlow's own half-written
    shard folder goes."""
    dead = dead_pid()
    (tmp_path / "data_temp").mkdir()
    (tmp_path / "model.ckpt-3_temp").mkdir()
    (tmp_path / "model.ckpt-3_temp" / "notes.txt").write_text("mine")
    (tmp_path / "model.ckpt-4_temp").mkdir()
    (tmp_path / "model.ckpt-4_temp" / "part-00000-of-00001.index").write_bytes(b"")
    (tmp_path / f"report.tmp-{dead}x.txt").write_text("mine")
    assert remove_leftovers(str(tmp_path), tf_temp=True) == ["model.ckpt-4_temp"]
    assert sorted(os.listdir(tmp_path)) == ["data_temp", "model.ckpt-3_temp", f"report.tmp-{dead}x.txt"]
    assert (tmp_path / "model.ckpt-3_temp" / "notes.txt").read_text() == "mine"


def test_replacing_file_and_directory_leave_nothing_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with replacing_file(str(target)) as tmp:
            open(tmp, "w").write("half")
            raise RuntimeError("killed")
    with pytest.raises(RuntimeError):
        with writing(str(tmp_path / "hub"), "export_to_tfhub.py", "--export_path") as tmp:
            open(os.path.join(tmp, "f"), "w").write("half")
            raise RuntimeError("killed")
    assert os.listdir(tmp_path) == []
    for leftover in (f"hub.tmp-{dead_pid()}", f"hub.old-{dead_pid()}"):  # killed writing, killed swapping into place
        (tmp_path / leftover).mkdir()
        (tmp_path / leftover / MARKER).write_text('{"command": "export_to_tfhub.py", "files": []}')
    mine = tmp_path / f"hub.tmp-{dead_pid()}"  # a user's folder of that shape, without the marker: not ours
    (mine / "notes").mkdir(parents=True)
    with writing(str(tmp_path / "hub"), "export_to_tfhub.py", "--export_path") as tmp:
        open(os.path.join(tmp, "f"), "w").write("whole")
    assert sorted(os.listdir(tmp_path)) == ["hub", mine.name]
    assert sorted(os.listdir(tmp_path / "hub")) == [MARKER, "f"]
    assert (tmp_path / "hub" / "f").read_text() == "whole"


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_create_pretraining_data_killed_leaves_no_worker_and_no_spill(workers, corpus_dir, tmp_path):
    out = tmp_path / "out"
    output = f"{out}/a.tfrecord,{out}/b.tfrecord"
    args = [f"--input_file={corpus_dir / 'corpus.txt'}", f"--output_file={output}",
            f"--spm_model_file={corpus_dir / 'sp.model'}", "--max_seq_length=64", "--max_predictions_per_seq=10",
            "--dupe_factor=200", f"--num_workers={workers}"]  # about 10 s of work, 1,000 tasks
    rng = random.Random(workers)
    for _ in range(3):
        process = start("create_pretraining_data.py", *args)
        deadline = time.time() + 60
        while not (out.exists() and [n for n in os.listdir(out) if ".spill-" in n]):  # it has started writing
            assert time.time() < deadline and process.poll() is None, process.communicate()
            time.sleep(0.01)
        kill_after(process, rng.uniform(0.0, 2.0))  # most tasks still to do: a full results pipe kept the
        # workers (each holding both ends of the queues) blocked for ever before they died with their parent
        no_orphans(str(out))
    result = run("create_pretraining_data.py", *args)
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted(os.listdir(out)) == ["a.tfrecord", "b.tfrecord"]  # no temporary output, no spill directory
    assert os.listdir(tmp_path) == ["out"]


@pytest.mark.slow
def test_train_spm_killed_leaves_no_corpus_copy(corpus_dir, tmp_path):
    args = [f"--input_file={corpus_dir / 'corpus.txt'}", f"--model_prefix={tmp_path / 'm' / 'sp'}",
            "--vocab_size=200"]
    process = subprocess.Popen([sys.executable, "-m", "albert.train_spm", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)
    deadline = time.time() + 60
    while not [n for n in os.listdir(tmp_path / "m") if ".corpus-" in n] if (tmp_path / "m").exists() else True:
        assert time.time() < deadline
        assert process.poll() is None
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate()
    assert [n for n in os.listdir(tmp_path / "m") if ".corpus-" in n]  # the kill left it ...
    result = subprocess.run([sys.executable, "-m", "albert.train_spm", *args], capture_output=True, text=True,
                            env=ENV, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted(os.listdir(tmp_path / "m")) == ["sp.model", "sp.vocab"]  # ... the rerun removed it


@pytest.mark.slow
def test_export_to_tfhub_killed_then_rerun_leaves_only_the_export(tmp_path):
    from tests.test_weights_formats import FIXTURES

    args = [f"--albert_directory={os.path.join(FIXTURES, 'hf_pretraining')}", f"--export_path={tmp_path / 'hub'}",
            "--seq_length=12"]
    process = start("export_to_tfhub.py", *args)
    deadline = time.time() + 120
    while not [n for n in os.listdir(tmp_path) if ".tmp-" in n]:  # killed while it writes
        assert time.time() < deadline
        assert process.poll() is None
        time.sleep(0.01)
    kill_after(process, random.Random(3).uniform(0.0, 2.0))
    result = run("export_to_tfhub.py", *args)
    assert result.returncode == 0, result.stderr[-2000:]
    assert os.listdir(tmp_path) == ["hub"]
    assert sorted(os.listdir(tmp_path / "hub")) == [MARKER, "encoder", "fill_mask", "mlm", "preprocessor"]


def eval_blocks(path) -> dict:
    """{global_step: {key: value}} of an eval_results.txt."""
    blocks, block = {}, {}
    for line in open(path).read().splitlines():
        key, value = line.split(" = ")
        block[key] = float(value)
        if key == "global_step":  # the last key of a block (sorted)
            blocks[int(value)] = block
            block = {}
    return blocks


@pytest.mark.slow
def test_run_classifier_killed_resumes_exactly_with_dropout(tmp_path):
    from tests.test_run_classifier import setup_task

    common = setup_task(tmp_path)
    config = json.loads((tmp_path / "albert_config.json").read_text())
    config.update(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    (tmp_path / "albert_config.json").write_text(json.dumps(config))
    common += ["--task_name=RTE", "--do_train", "--do_eval", "--train_batch_size=8", "--train_step=40",
               "--warmup_step=4", "--learning_rate=1e-3", "--save_checkpoints_steps=5", "--iterations_per_loop=1",
               "--log_every_steps=1", "--eval_batch_size=16", "--keep_checkpoint_max=2"]
    reference = run("run_classifier.py", *common, f"--output_dir={tmp_path / 'ref'}")
    assert reference.returncode == 0, reference.stderr[-2000:]
    expected = step_losses(reference.stdout)
    assert sorted(expected) == list(range(1, 41))

    out = tmp_path / "killed"
    process = start("run_classifier.py", *common, f"--output_dir={out}")
    deadline = time.time() + 240
    while not (out / "model.ckpt-15.index").exists() and process.poll() is None and time.time() < deadline:
        time.sleep(0.005)
    os.kill(process.pid, signal.SIGKILL)  # often while model.ckpt-15 is written or evaluated
    process.communicate()
    resumed = run("run_classifier.py", *common, f"--output_dir={out}")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    got = step_losses(resumed.stdout)
    assert got
    assert max(got) == 40
    assert min(got) > 5
    for step, loss in got.items():
        assert abs(loss - expected[step]) <= 1e-6, (step, loss, expected[step])
    reference_evals, evals = eval_blocks(tmp_path / "ref" / "eval_results.txt"), eval_blocks(out / "eval_results.txt")
    assert sorted(evals) == sorted(reference_evals) == list(range(5, 41, 5))
    for step, block in evals.items():
        assert all(abs(value - reference_evals[step][key]) <= 1e-6 for key, value in block.items()), step
    best, expected_best = (out / "best_trial.txt").read_text(), (tmp_path / "ref" / "best_trial.txt").read_text()
    assert best.split(":")[:2] == expected_best.split(":")[:2]
    assert abs(float(best.split(":")[2]) - float(expected_best.split(":")[2])) <= 1e-6
    assert not [n for n in os.listdir(out) if n.endswith("_temp") or ".tmp-" in n or n.startswith(".albert.lock")]


@pytest.mark.slow
def test_resume_skips_a_cut_checkpoint_and_refuses_another_config(tmp_path):
    """The newest checkpoint cut short (a kill or a full disk) and the `checkpoint` file garbled: the run resumes
    from the newest intact one, says so, and trains the same losses as the uninterrupted run; a checkpoint of another
    model configuration is one line, not a traceback or a silent fresh start."""
    from tests.test_run_classifier import setup_task

    common = setup_task(tmp_path) + ["--task_name=RTE", "--do_train", "--train_batch_size=8", "--train_step=15",
                                     "--warmup_step=2", "--learning_rate=1e-3", "--save_checkpoints_steps=5",
                                     "--iterations_per_loop=1", "--log_every_steps=1", "--keep_checkpoint_max=3"]
    reference = run("run_classifier.py", *common, f"--output_dir={tmp_path / 'ref'}")
    assert reference.returncode == 0, reference.stderr[-2000:]
    expected = step_losses(reference.stdout)
    out = tmp_path / "damaged"
    shutil.copytree(tmp_path / "ref", out)
    for name in os.listdir(out):
        if name.startswith("model.ckpt-15"):
            os.remove(out / name)
    data = out / "model.ckpt-10.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:data.stat().st_size // 2])
    (out / "checkpoint").write_text("garbage that is no CheckpointState\n")
    resumed = run("run_classifier.py", *common, f"--output_dir={out}")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"{out}/model.ckpt-10: cannot be read (" in resumed.stdout
    assert f"resumed from {out}/model.ckpt-5 at step 5" in resumed.stdout
    got = step_losses(resumed.stdout)
    assert sorted(got) == list(range(6, 16))
    assert all(abs(loss - expected[step]) <= 1e-6 for step, loss in got.items())

    config = json.loads((tmp_path / "albert_config.json").read_text())
    (tmp_path / "wider.json").write_text(json.dumps(dict(config, intermediate_size=48)))
    other = run("run_classifier.py", *common, f"--output_dir={tmp_path / 'ref'}", "--train_step=20",
                f"--albert_config_file={tmp_path / 'wider.json'}")
    assert other.returncode == 2
    line, = other.stderr.splitlines()
    assert line.startswith(f"run_classifier.py: error: {tmp_path / 'ref'}/model.ckpt-15: written for another model (")
    assert line.endswith("resume with the albert_config.json and flags it was trained with, or use another "
                         "--output_dir")


@pytest.mark.slow
def test_divergence_beyond_a_sane_loss_stops_before_the_checkpoint(tmp_path):
    """A loss that leaves any sane range (here AdamW at rate 1000: about 5,000 after one step, from 0.69) stops the
    run before that step is checkpointed, naming the last good checkpoint; nothing diverged is kept."""
    from tests.test_run_classifier import setup_task

    out = tmp_path / "out"
    result = run("run_classifier.py", *setup_task(tmp_path), "--task_name=RTE", "--do_train", f"--output_dir={out}",
                 "--train_batch_size=8", "--train_step=30", "--warmup_step=0", "--learning_rate=1000",
                 "--save_checkpoints_steps=1", "--iterations_per_loop=1", "--log_every_steps=1")
    assert result.returncode == 2
    line, = result.stderr.splitlines()
    assert line.startswith("run_classifier.py: error: loss ")
    assert " at step 2 is over 100 times this run's first (" in line
    assert line.endswith(f"training diverged; the last good checkpoint ({out}/model.ckpt-1) is intact: lower "
                         "--learning_rate or raise the warmup steps and rerun")
    assert (out / "model.ckpt-1.index").exists()
    assert not (out / "model.ckpt-2.index").exists()


@pytest.mark.slow
def test_export_to_tfhub_terminated_removes_its_temporary_and_says_so_in_one_line(tmp_path):
    """SIGTERM (kill, docker stop, a scheduler's time limit) while an export is written: the command unwinds, its
    temporary is removed, one line on stderr, exit status 130; nothing else is left."""
    from tests.test_weights_formats import FIXTURES

    process = start("export_to_tfhub.py", f"--albert_directory={os.path.join(FIXTURES, 'hf_pretraining')}",
                    f"--export_path={tmp_path / 'hub'}", "--seq_length=12")
    deadline = time.time() + 120
    while not [n for n in os.listdir(tmp_path) if ".tmp-" in n]:
        assert time.time() < deadline and process.poll() is None
        time.sleep(0.01)
    time.sleep(1.0)
    os.kill(process.pid, signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr.splitlines()) == (130, [
        "export_to_tfhub.py: interrupted; run the command again to finish (training resumes from its last "
        "checkpoint)"])
    assert os.listdir(tmp_path) == []
