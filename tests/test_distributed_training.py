"""The training loop under MirroredStrategy (2 logical CPUs) and MultiWorkerMirroredStrategy (2 local processes)."""

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from tests.helpers import ROOT
from tests.pretraining_helpers import run_on_two_cpus, run_pretraining, write_config, write_original_records

MIRRORED = r"""
losses = {}
for name, strategy in (("one", tf.distribute.OneDeviceStrategy("/cpu:0")),
                       ("mirrored", tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))):
    losses[name], _ = train_losses(strategy, f"{out}/{name}", 5)
    losses[name + "_replicas"] = strategy.num_replicas_in_sync
print("RESULT " + json.dumps(losses))
"""


@pytest.mark.slow
def test_mirrored_loss_trajectory_equals_one_device(tmp_path):
    result = run_on_two_cpus(MIRRORED, tmp_path)
    assert result["one_replicas"] == 1
    assert result["mirrored_replicas"] == 2
    assert len(result["one"]) == len(result["mirrored"]) == 5
    np.testing.assert_allclose(result["mirrored"], result["one"], atol=1e-4, rtol=0)
    assert abs(result["one"][0] - result["one"][-1]) > 1e-3  # the weights did move


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


@pytest.mark.slow
def test_multi_worker_two_local_processes_end_with_identical_weights(tmp_path):
    records = [write_original_records(str(tmp_path / f"train-{i}.tfrecord"), 16, seed=i) for i in range(2)]
    config = write_config(str(tmp_path / "config.json"))
    out = tmp_path / "out"
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(2)]}
    procs = []
    for index in range(2):
        tf_config = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})
        procs.append(run_pretraining(f"--input_file={tmp_path}/train-*.tfrecord", f"--output_dir={out}",
                                     f"--albert_config_file={config}", "--strategy=multi_worker",
                                     "--train_batch_size=8", "--num_train_steps=4", "--num_warmup_steps=1",
                                     "--learning_rate=0.01", "--save_checkpoints_steps=2", "--iterations_per_loop=2",
                                     env={"TF_CONFIG": tf_config}, popen=True))
    try:
        outputs = [p.communicate(timeout=240) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for p, (stdout, stderr) in zip(procs, outputs):
        assert p.returncode == 0, stderr[-3000:]
        assert "step 4/4" in stdout
    chief = tf.train.load_checkpoint(str(out / "model.ckpt-4"))
    other = tf.train.load_checkpoint(str(out / "worker_1" / "model.ckpt-4"))
    # Every variable (the model's, reached first through the optimizer's list, and the optimizer's slots); the
    # iterator state differs by design: each worker reads its own shard.
    names = [n for n, d in chief.get_variable_to_dtype_map().items() if d != tf.variant]
    assert len(names) > 60
    assert (set(names) == {n for n, d in other.get_variable_to_dtype_map().items()
                                              if d != tf.variant})
    for name in names:
        np.testing.assert_array_equal(chief.get_tensor(name), other.get_tensor(name), err_msg=name)
    initial = tf.train.load_checkpoint(str(out / "model.ckpt-2"))
    moved = sum(not np.array_equal(chief.get_tensor(n), initial.get_tensor(n)) for n in names)
    assert moved > 10


XLA_ON_LOGICAL_CPUS = r"""
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from albert import AlbertConfig, AlbertPretrainer
from albert.ground.errors import AlbertError
from albert.train.optimizers import create_optimizer
from albert.tasks.pretraining.objective import pretraining_loss
from albert.train.loop import Trainer
from albert.train.settings import LoopConfig

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = AlbertPretrainer(AlbertConfig(vocab_size=40, embedding_size=8, hidden_size=16, num_hidden_layers=1,
                                          num_attention_heads=2, intermediate_size=16, max_position_embeddings=16))
    optimizer = create_optimizer(0.01, 5, 1, "lamb", model=model)
for jit in (False, True):
    loop = LoopConfig(output_dir="out", num_train_steps=1, global_batch_size=8, steps_per_loop=1,
                      save_checkpoints_steps=1, jit_compile=jit)
    try:
        Trainer(strategy, model, optimizer, pretraining_loss, loop)
        print("accepted", jit)
    except AlbertError as e:
        print("refused", jit, e)
"""


def test_xla_under_mirrored_over_logical_cpus_is_refused_in_one_line(tmp_path):
    """It failed at the first step with `Trying to access resource .../replica_1/... located in device CPU:1 from
    device CPU:0` (reproduced with the loop above); now the Trainer refuses it before any work."""
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run([sys.executable, "-c", XLA_ON_LOGICAL_CPUS], capture_output=True, text=True, timeout=300,
                          env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[-2:] == [
        "accepted False",
        "refused True --jit_compile with MirroredStrategy over 2 CPU devices: TensorFlow places every replica's "
        "XLA-compiled step on the first CPU, which cannot reach the other replicas' variables; drop --jit_compile or "
        "train on one device"]
