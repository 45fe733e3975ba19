"""A run's machine set up from its `Runtime` (albert.train.settings): precision policy, determinism, strategy and
seeds; and the training loop's settings."""

import keras
import tensorflow as tf

from albert.config import AlbertConfig
from albert.data.features import step_boundaries
from albert.ground.errors import AlbertError
from albert.model.sizing import forward_flops_per_token
from albert.train.distribute import create_strategy
from albert.train.loop import Trainer
from albert.train.settings import PRECISIONS, LoopConfig
from albert.train.settings import Runtime

PRECISION_POLICIES = dict(zip(PRECISIONS, ("float32", "mixed_bfloat16", "mixed_float16")))  # Keras' policy names


def set_precision(mixed_precision: str):
    """Set the Keras dtype policy before any model is built: fp32, bf16 or fp16."""
    if mixed_precision not in PRECISION_POLICIES:
        raise AlbertError(f"--mixed_precision {mixed_precision!r} is unknown; use one of {', '.join(PRECISIONS)}")
    keras.mixed_precision.set_global_policy(PRECISION_POLICIES[mixed_precision])


def setup(runtime: Runtime, seed: int | None = None):
    """Precision policy, op determinism, strategy and seeds (`seed`, default the runtime's): the strategy."""
    if runtime.deterministic:
        tf.config.experimental.enable_op_determinism()
    set_precision(runtime.mixed_precision)
    strategy = create_strategy(runtime.strategy, runtime.use_tpu, runtime.tpu_name, runtime.tpu_zone,
                               runtime.gcp_project, runtime.master)
    tf.keras.utils.set_random_seed(runtime.random_seed if seed is None else seed)
    return strategy


def begin_job(runtime: Runtime, albert_config_file: str, output_dir: str, seed: int | None = None) -> tuple:
    """What every job does first: the machine set up (setup), the model config read, the output directory made.
    (strategy, AlbertConfig)."""
    strategy = setup(runtime, seed)
    config = AlbertConfig.from_json_file(albert_config_file)
    tf.io.gfile.makedirs(output_dir)
    return strategy, config


def check_batch_split(flag: str, batch_size: int, replicas: int, accumulation: int | None = None):
    """AlbertError unless --`flag`'s batch divides evenly over the replicas (and the accumulation steps, given)."""
    parts = replicas * (accumulation or 1)
    if batch_size % parts:
        steps = f" x {accumulation} accumulation step(s)" if accumulation is not None else ""
        raise AlbertError(f"--{flag} {batch_size} must divide evenly over {replicas} replica(s){steps}")


def loop_config(runtime: Runtime, config, output_dir: str, num_train_steps: int, batch_size: int,
                seq_length: int, examples_per_row: int = 1, predictions: int = 0,
                length_boundaries: tuple | None = None) -> LoopConfig:
    """The training loop's settings. `batch_size`: the global batch of one step (a micro-batch with gradient
    accumulation); `examples_per_row`: sequences per example (4 for RACE); `predictions`: masked-LM predictions per
    sequence (pretraining), for the FLOPs of the progress line."""
    flops = forward_flops_per_token(config, seq_length)
    per_sequence = flops["encoder_total"] * seq_length + flops["mlm_head_per_prediction"] * predictions
    return LoopConfig(
        output_dir=output_dir, num_train_steps=num_train_steps, global_batch_size=batch_size,
        steps_per_loop=runtime.iterations_per_loop, save_checkpoints_steps=runtime.save_checkpoints_steps,
        keep_checkpoint_max=runtime.keep_checkpoint_max,
        gradient_accumulation_steps=runtime.gradient_accumulation_steps, jit_compile=runtime.jit_compile,
        recompute=runtime.recompute, log_every_steps=runtime.log_every_steps,
        seq_length=seq_length * examples_per_row, flops_per_example=3.0 * per_sequence * examples_per_row,
        length_boundaries=length_boundaries)


def fine_tuning_trainer(runtime: Runtime, strategy, model, optimizer, loss_fn, config, output_dir: str,
                        num_train_steps: int, batch_size: int, seq_length: int, length_buckets: str | None,
                        examples_per_row: int = 1) -> Trainer:
    """The Trainer of a fine-tuning run (loop_config's settings; loss scaling under fp16). `length_buckets`: the
    --length_buckets value its steps cut batches by (albert.data.features.step_boundaries: under the default, each
    batch to its longest example unless --jit_compile); None: batches stay whole."""
    bounds = None if length_buckets is None else step_boundaries(seq_length, length_buckets, runtime.jit_compile)
    loop = loop_config(runtime, config, output_dir, num_train_steps, batch_size, seq_length, examples_per_row,
                       length_boundaries=bounds)
    return Trainer(strategy, model, optimizer, loss_fn, loop, loss_scaling=runtime.mixed_precision == "fp16")
