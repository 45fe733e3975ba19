"""A tf.distribute strategy from a name: one_device | mirrored | multi_worker | tpu."""

import json
import os

import tensorflow as tf

from albert.ground.errors import AlbertError
from albert.train.settings import STRATEGIES


def default_strategy_name(use_tpu: bool = False) -> str:
    """tpu with --use_tpu, else mirrored when more than one GPU is visible, else one_device."""
    if use_tpu:
        return "tpu"
    return "mirrored" if len(tf.config.list_physical_devices("GPU")) > 1 else "one_device"


def create_strategy(name: str | None = None, use_tpu: bool = False, tpu_name: str | None = None,
                    tpu_zone: str | None = None, gcp_project: str | None = None, master: str | None = None):
    name = name or default_strategy_name(use_tpu)
    if name == "one_device":
        device = "/gpu:0" if tf.config.list_physical_devices("GPU") else "/cpu:0"
        return tf.distribute.OneDeviceStrategy(device)
    if name == "mirrored":
        return tf.distribute.MirroredStrategy()
    if name == "multi_worker":
        if "TF_CONFIG" not in os.environ:
            raise AlbertError("--strategy multi_worker needs the TF_CONFIG environment variable (cluster and task) "
                              "on every worker")
        try:
            json.loads(os.environ["TF_CONFIG"])
        except json.JSONDecodeError as e:
            raise AlbertError(f"TF_CONFIG is not valid JSON ({e.msg}); see the tf.distribute multi-worker guide") \
                from None
        options = tf.distribute.experimental.CommunicationOptions(
            implementation=tf.distribute.experimental.CommunicationImplementation.RING)
        return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    if name == "tpu":
        return _tpu_strategy(tpu_name, tpu_zone, gcp_project, master)
    raise AlbertError(f"--strategy {name!r} is unknown; use one of {', '.join(STRATEGIES)}")


def _tpu_strategy(tpu_name, tpu_zone, gcp_project, master):
    target = tpu_name or master or os.environ.get("TPU_NAME")
    if not target:
        raise AlbertError("--strategy tpu needs a TPU: pass --tpu_name (or --master), or use --strategy "
                          "one_device / mirrored / multi_worker")
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=target, zone=tpu_zone, project=gcp_project)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except (ValueError, RuntimeError, tf.errors.OpError) as e:
        raise AlbertError(f"--strategy tpu: cannot reach TPU {target!r} ({str(e).splitlines()[0]})") from None
    return tf.distribute.TPUStrategy(resolver)


def check_xla_placement(strategy, jit_compile: bool):
    """XLA-compiled steps under MirroredStrategy over several CPU devices (logical CPUs, as the tests split the
    machine) fail in TensorFlow 2.21 at the first step: every replica's compiled step is placed on the first CPU
    and cannot reach the other replicas' variables (`Trying to access resource .../replica_1/... located in device
    CPU:1 from device CPU:0`). Refused before any work, in one line."""
    if not jit_compile or strategy.num_replicas_in_sync < 2:
        return
    devices = getattr(strategy.extended, "worker_devices", ())
    if devices and all("CPU" in device.upper() for device in devices):
        raise AlbertError(f"--jit_compile with {type(strategy).__name__} over {len(devices)} CPU devices: TensorFlow "
                          "places every replica's XLA-compiled step on the first CPU, which cannot reach the other "
                          "replicas' variables; drop --jit_compile or train on one device")
