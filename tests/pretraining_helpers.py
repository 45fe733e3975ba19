"""Tiny pretraining setups for the training tests: records written with TensorFlow's own proto API in the
original release's format (spec §6.8), a tiny config, and a runner for run_pretraining.py."""

import json
import os
import subprocess
import sys

import numpy as np
import tensorflow as tf

from tests.helpers import ROOT

SEQ, PRED, VOCAB = 16, 3, 40
TINY_CONFIG = {"vocab_size": VOCAB, "embedding_size": 8, "hidden_size": 16, "num_hidden_layers": 2,
               "num_attention_heads": 2, "intermediate_size": 32, "max_position_embeddings": SEQ,
               "initializer_range": 0.1}


def write_original_records(path, count, seed=0, learnable=True):
    """Records exactly as the original writer made them: tf.train.Example with the §6.8 features. With
    `learnable`, the masked tokens are a fixed function of their neighbours and the SOP label of the order of
    two marker tokens, so a tiny model can learn both."""
    rng = np.random.default_rng(seed)
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(count):
            length = int(rng.integers(8, SEQ + 1))
            split = int(rng.integers(3, length - 3))
            ids = rng.integers(10, VOCAB, size=length)
            ids[0], ids[split], ids[length - 1] = 2, 3, 3
            label = int(rng.integers(0, 2))
            if learnable:
                ids[1] = 5 if label == 0 else 6  # the order signal
            positions = np.sort(rng.choice(np.arange(2, length - 1), PRED, replace=False))
            positions = positions[positions != split][:PRED]
            labels = ids[positions].copy()
            ids[positions] = 4  # [MASK]
            features = {
                "input_ids": np.pad(ids, (0, SEQ - length)),
                "input_mask": np.pad(np.ones(length, np.int64), (0, SEQ - length)),
                "segment_ids": np.pad((np.arange(length) > split).astype(np.int64), (0, SEQ - length)),
                "token_boundary": np.pad(np.ones(length, np.int64), (0, SEQ - length)),
                "masked_lm_positions": np.pad(positions, (0, PRED - len(positions))),
                "masked_lm_ids": np.pad(labels, (0, PRED - len(labels))),
                "masked_lm_weights": np.pad(np.ones(len(positions), np.float32), (0, PRED - len(positions))),
                "next_sentence_labels": np.array([label]),
            }
            example = tf.train.Example(features=tf.train.Features(feature={
                k: tf.train.Feature(float_list=tf.train.FloatList(value=v)) if v.dtype.kind == "f"
                else tf.train.Feature(int64_list=tf.train.Int64List(value=v)) for k, v in features.items()}))
            writer.write(example.SerializeToString())
    return path


def write_config(path, **changes):
    with open(path, "w") as f:
        json.dump(dict(TINY_CONFIG, **changes), f)
    return path


def run_pretraining(*args, env=None, timeout=300, popen=False):
    command = [sys.executable, os.path.join(ROOT, "run_pretraining.py"), f"--max_seq_length={SEQ}",
               f"--max_predictions_per_seq={PRED}", *args]
    environment = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", **(env or {}))
    if popen:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environment)


def step_losses(stdout):
    """{step: loss} from the progress lines."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("step "):
            parts = line.split()
            out[int(parts[1].split("/")[0])] = float(parts[3])
    return out


# A training script's head for a process whose CPU is split into two logical devices (which must happen before
# TensorFlow starts, hence a subprocess): `train_losses(strategy, output_dir, steps, **loop_options)` trains the
# tiny pretrainer (seed 0, LAMB, global batch 8) on the records and returns (per-step losses, model).
TWO_CPUS = r"""
import json, sys
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import keras
from albert import AlbertConfig, AlbertPretrainer
from albert.data.readers import pretraining_dataset
from albert.train.optimizers import create_optimizer
from albert.tasks.pretraining.objective import pretraining_loss
from albert.train.loop import Trainer
from albert.train.settings import LoopConfig

records, config_file, out = sys.argv[1:4]
config = AlbertConfig.from_json_file(config_file)


def train_losses(strategy, output_dir, steps, **loop_options):
    keras.utils.set_random_seed(0)
    with strategy.scope():
        model = AlbertPretrainer(config)
        optimizer = create_optimizer(0.01, steps, 1, "lamb", model=model)
    loop = LoopConfig(output_dir=output_dir, num_train_steps=steps, global_batch_size=8, steps_per_loop=1,
                      save_checkpoints_steps=steps, **loop_options)
    trainer = Trainer(strategy, model, optimizer, pretraining_loss, loop)
    lines = []
    trainer.train(lambda ctx, batch: pretraining_dataset([records], 16, 3, batch, True, ctx), log=lines.append)
    return [float(l.split()[3]) for l in lines if l.startswith("step ")], model
"""


def run_on_two_cpus(body: str, tmp_path, **config_changes) -> dict:
    """Run TWO_CPUS + `body` (which prints `RESULT <json>`) on 32 records and the tiny config: the JSON."""
    records = write_original_records(str(tmp_path / "train.tfrecord"), 32)
    config = write_config(str(tmp_path / "config.json"), **config_changes)
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run([sys.executable, "-c", TWO_CPUS + body, records, config, str(tmp_path)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("RESULT "))[7:])
