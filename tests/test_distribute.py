"""The encoder under MirroredStrategy on two logical CPU devices gives the one-device outputs.

Runs in a fresh subprocess: the CPU must be split into logical devices before TensorFlow touches it.
"""

import json
import os
import subprocess
import sys

from tests.helpers import FIXTURES, ROOT

SCRIPT = r"""
import json, sys
import numpy as np
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

from albert import AlbertConfig, AlbertPretrainer, load_original_checkpoint

directory = sys.argv[1]
config = AlbertConfig.from_json_file(directory + "/albert_config.json")
golden = dict(np.load(directory + "/golden.npz"))
keys = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")
inputs = {k: np.concatenate([golden[k], golden[k][:1]]) for k in keys}  # 4 rows: 2 per replica

single = AlbertPretrainer(config)
load_original_checkpoint(single, directory + "/model.ckpt")
expected = single.with_hidden_states(inputs)

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = AlbertPretrainer(config)
load_original_checkpoint(model, directory + "/model.ckpt")
dataset = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(inputs).batch(4))

@tf.function
def forward(batch):
    return strategy.run(lambda b: model.with_hidden_states(b, training=False), args=(batch,))

outputs = forward(next(iter(dataset)))
result = {"replicas": strategy.num_replicas_in_sync,
          "per_replica_rows": [int(v.shape[0]) for v in outputs["sequence_output"].values],
          "variable_devices": [v.device.split("/")[-1] for v in model.weights[0].value.values]}
for key in ("sequence_output", "pooled_output", "mlm_logits", "sop_logits"):
    got = strategy.gather(outputs[key], axis=0).numpy()
    result[key] = float(np.abs(got - np.asarray(expected[key])).max())
    result[key + "_golden"] = float(np.abs(got[:3] - golden[key]).max())
print("RESULT " + json.dumps(result))
"""


def test_mirrored_strategy_matches_one_device():
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, os.path.join(FIXTURES, "groups3_inner2")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
    result = json.loads(line[len("RESULT "):])
    assert result["replicas"] == 2
    assert result["per_replica_rows"] == [2, 2]
    assert result["variable_devices"] == ["device:CPU:0", "device:CPU:1"]  # mirrored on both logical devices
    for key in ("sequence_output", "pooled_output", "mlm_logits", "sop_logits"):
        assert result[key] < 1e-5, (key, result[key])
        assert result[key + "_golden"] < 1e-5, (key, result[key + "_golden"])
