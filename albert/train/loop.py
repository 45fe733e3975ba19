"""THE training loop, shared by every runner: pretraining, GLUE, SQuAD, RACE.

- `strategy.run` inside a `tf.function` that runs `steps_per_loop` steps per call (dispatch amortised, as the
  original's TPU `iterations_per_loop`); the same code for one device, Mirrored, MultiWorker and TPU strategies.
- A task gives `loss_fn(model, batch, training) -> (terms, metrics)`: per-replica partial sums. Each loss term is
  `(numerator, denominator, epsilon)`; the loss is sum(numerator / (GLOBAL denominator + epsilon)), the denominator
  all-reduced over replicas first, so any number of replicas computes the single-device loss of the global batch.
  Metrics are `(numerator, denominator)` pairs, reported as global ratios.
- Gradients are all-reduced, clipped to global norm 1.0 (the original's clipping), then applied.
- Optional gradient accumulation (`gradient_accumulation_steps` micro-batches per update), mixed precision (bf16;
  fp16 with dynamic loss scaling), XLA (`jit_compile`) for the forward and backward pass, activation recomputation
  (`recompute`).
- `tf.train.CheckpointManager` (`model.ckpt-<step>`) holds model, optimizer and the input iterator: a restarted run
  resumes by itself where it stopped, data position included. A non-finite loss stops the run before any
  checkpoint of it is written. TensorBoard summaries, and a progress line at least every ~30 s (or every
  `log_every_steps`) with examples/s, tokens/s and MFU, the first (tracing) call left out of the rates and ETA.
"""

import dataclasses
import math
import os
import time

import keras
import tensorflow as tf

from albert.atomic import write_text
from albert.data.buckets import bucket_index, cut, example_lengths
from albert.errors import AlbertError
from albert.model.encoder import set_recompute
from albert.train.distribute import check_xla_placement
from albert.train.progress import ProgressMeter
from albert.weights.run_checkpoints import checkpoints_on_disk

# Training stops, before saving, when the mean loss of a step exceeds this many times the first of the run (or 1):
# a run that has left any sane range (AdamW at a too high rate reached 1e11) is not checkpointed or kept as best.
DIVERGENCE_FACTOR = 100


class TrainingDiverged(AlbertError):
    """The loss became NaN or infinite."""


@dataclasses.dataclass
class LoopConfig:
    output_dir: str
    num_train_steps: int
    global_batch_size: int
    steps_per_loop: int = 1000
    save_checkpoints_steps: int = 1000
    keep_checkpoint_max: int = 5
    gradient_accumulation_steps: int = 1
    jit_compile: bool = False
    recompute: bool = False  # activation recomputation in every encoder of the model (albert.model.recompute)
    clip_norm: float = 1.0
    # Progress (albert.train.progress): a line every `log_every_steps` steps; 0 = about every 30 s (in one process; a
    # multi-worker run, whose workers must call the loop alike, logs every `steps_per_loop`). Tokens/s and MFU need
    # these two.
    log_every_steps: int = 0
    seq_length: int = 0
    flops_per_example: float = 0.0  # model FLOPs of one training example (forward + backward), albert.model.sizing
    # Batches cut to the smallest of these lengths that holds their longest example (albert.data.buckets); None:
    # as the data gives them (padded to max_seq_length, or grouped by length already).
    length_boundaries: tuple | None = None


def set_precision(mixed_precision: str):
    """Set the Keras dtype policy before any model is built: fp32, bf16 or fp16."""
    policies = {"fp32": "float32", "bf16": "mixed_bfloat16", "fp16": "mixed_float16"}
    if mixed_precision not in policies:
        raise AlbertError(f"--mixed_precision {mixed_precision!r} is unknown; use fp32, bf16 or fp16")
    keras.mixed_precision.set_global_policy(policies[mixed_precision])


def _ratio(numerator, denominator, epsilon=0.0):
    return numerator / (denominator + epsilon) if epsilon else tf.math.divide_no_nan(numerator, denominator)


class Trainer:
    def __init__(self, strategy, model, optimizer, loss_fn, config: LoopConfig, loss_scaling: bool = False):
        check_xla_placement(strategy, config.jit_compile)
        if config.recompute:
            set_recompute(model)
        self.strategy, self.model, self.loss_fn, self.config = strategy, model, loss_fn, config
        self.optimizer = keras.optimizers.LossScaleOptimizer(optimizer) if loss_scaling else optimizer
        if hasattr(optimizer, "gradients_reduced_and_clipped"):
            optimizer.gradients_reduced_and_clipped = True  # this loop all-reduces and clips (_replica_apply)
        self.loss_scaling = loss_scaling
        with strategy.scope():
            self.optimizer.build(model.trainable_variables)
        self.iterator = None
        self._checkpoint = None
        self._manager = None
        self.resumed_from = None
        self._train_fn = None
        self._writers = None
        with tf.init_scope():
            self._lengths_seen = tf.Variable(tf.zeros([len(config.length_boundaries or ())], tf.int64),
                                             trainable=False, name="lengths_seen")

    # ----------------------------------------------------------------------------------------------- input
    def _topology(self):
        """(workers, this worker's index, replicas on this worker)."""
        local = len(self.strategy.extended.worker_devices)
        workers = max(1, self.strategy.num_replicas_in_sync // local)
        resolver = getattr(self.strategy, "cluster_resolver", None)
        worker = resolver.task_id if workers > 1 and resolver is not None and resolver.task_id is not None else 0
        return workers, worker, local

    def local_iterator(self, dataset_fn, global_batch_size: int):
        """An iterator over this worker's share of the data, batched for all its replicas. It is a plain
        (checkpointable) tf.data iterator: each step splits its batch over the local replicas."""
        workers, worker, local = self._topology()
        replicas = self.strategy.num_replicas_in_sync
        context = tf.distribute.InputContext(workers, worker, replicas)
        with tf.device("/cpu:0"):
            return iter(dataset_fn(context, global_batch_size // replicas * local))

    def _cut(self, batch):
        """(the batch cut to its length bucket, the positions it computes). Every replica of a step gets one shape:
        the local replicas share the batch, and several workers agree on the longest of their batches' buckets (one
        tiny all-reduce)."""
        bounds = self.config.length_boundaries
        rows = tf.cast(tf.size(batch["input_mask"]) // tf.shape(batch["input_mask"])[-1], tf.float32)
        if not bounds or len(bounds) == 1:
            return batch, rows * tf.cast(tf.shape(batch["input_mask"])[-1], tf.float32)
        index = bucket_index(tf.reduce_max(example_lengths(batch)), bounds)
        if self._topology()[0] > 1:  # the workers' buckets, one-hot, summed over every replica
            def vote(local):
                return tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM,
                                                                      tf.one_hot(local, len(bounds)))

            votes = self.strategy.experimental_local_results(self.strategy.run(vote, args=(index,)))[0]
            index = tf.cast(tf.reduce_max(tf.where(votes > 0)[:, 0]), index.dtype)
        self._lengths_seen.scatter_nd_add([[index]], [1])
        length = tf.gather(tf.constant(bounds, tf.int32), index)
        return cut(batch, length), rows * tf.cast(length, tf.float32)

    def batch_shapes(self) -> dict:
        """{batch length: training steps} seen so far with length_boundaries (each a compilation under XLA)."""
        counts = self._lengths_seen.numpy()
        return {length: int(n) for length, n in zip(self.config.length_boundaries or (), counts) if n}

    def _distribute(self, batch):
        local = self._topology()[2]
        if local == 1:
            return self.strategy.experimental_distribute_values_from_function(lambda ctx: batch)
        parts = {k: tf.split(v, local) for k, v in batch.items()}
        return self.strategy.experimental_distribute_values_from_function(
            lambda ctx: {k: v[ctx.replica_id_in_sync_group % local] for k, v in parts.items()})

    # ------------------------------------------------------------------------------------------ checkpoints
    @property
    def checkpoint_dir(self) -> str:
        """output_dir; in a multi-worker run, workers other than the chief keep their own checkpoints (with their
        own data position) in output_dir/worker_<i>."""
        workers, worker, _ = self._topology()
        if workers > 1 and worker > 0:
            return os.path.join(self.config.output_dir, f"worker_{worker}")
        return self.config.output_dir

    @property
    def step(self) -> int:
        return int(self.optimizer.iterations.numpy())

    def _ensure_manager(self):
        if self._manager is None:
            items = dict(model=self.model, optimizer=self.optimizer, dropout_seeds=self.seed_states())
            if self.iterator is not None:
                items["iterator"] = self.iterator
            self._checkpoint = tf.train.Checkpoint(**items)
            self._manager = tf.train.CheckpointManager(
                self._checkpoint, self.checkpoint_dir, max_to_keep=self.config.keep_checkpoint_max,
                checkpoint_name="model.ckpt", step_counter=self.optimizer.iterations)
        return self._manager

    def seed_states(self) -> list:
        """The state of every dropout layer's random seed generator, in layer order: Keras does not track them, so
        without them in the checkpoint a resumed run would draw other dropout masks than an uninterrupted one."""
        return [generator.state for layer in self.model._flatten_layers()
                for generator in getattr(layer, "_seed_generators", [])]

    def restore_latest(self, log=print) -> int | None:
        """Restore the newest intact checkpoint of the checkpoint directory (model, optimizer, data position,
        dropout seeds); its step, or None when there is none. The one the `checkpoint` file names comes first; when
        that file is garbled or names a deleted or outside checkpoint, the `model.ckpt-<step>.index` files on disk
        are the candidates, newest first. One cut short by a kill or a full disk is reported and the one before it
        is used; one of another model configuration is an error (not a silent fresh start)."""
        manager = self._ensure_manager()
        named = manager.latest_checkpoint
        on_disk = checkpoints_on_disk(self.checkpoint_dir)
        if named and named not in on_disk:
            log(f"{self.checkpoint_dir}/checkpoint names {named}, which is not a checkpoint of this directory; "
                "ignored")
        # The checkpoint the `checkpoint` file names first (one saved after it, when a kill landed before the file
        # was updated, is not the manager's and is written again), then the older ones on disk, newest first.
        candidates = on_disk
        if named in on_disk:
            candidates = [named] + on_disk[on_disk.index(named) + 1:]
        for path in candidates:
            try:
                self._checkpoint.restore(path).assert_existing_objects_matched()
            except (AssertionError, ValueError) as e:
                raise AlbertError(
                    f"{path}: written for another model ({str(e).strip().splitlines()[0][:160]}); resume with the "
                    "albert_config.json and flags it was trained with, or use another --output_dir") from None
            except (IndexError, tf.errors.OpError) as e:
                log(f"{path}: cannot be read ({str(e).strip().splitlines()[0][:120]}: cut short by a kill or a full "
                    "disk?); resuming from the checkpoint before it")
                continue
            self.resumed_from = path
            return self.step
        if candidates:
            raise AlbertError(f"{self.checkpoint_dir}: none of its {len(candidates)} checkpoint(s) can be read; "
                              "remove them to start over, or use another --output_dir")
        return None

    @property
    def _handled_file(self) -> str:
        return os.path.join(self.checkpoint_dir, "checkpoint.handled")

    def _handled_step(self) -> int:
        """The last step whose checkpoint went through `on_checkpoint` (its evaluation), or -1."""
        try:
            with tf.io.gfile.GFile(self._handled_file) as f:
                return int(f.read().strip() or -1)
        except (tf.errors.NotFoundError, ValueError):
            return -1

    def _checkpoint_handled(self, on_checkpoint, step: int, path: str):
        on_checkpoint(step, path)
        write_text(self._handled_file, f"{step}\n")

    def save(self) -> str:
        return self._ensure_manager().save(checkpoint_number=self.step)

    # ----------------------------------------------------------------------------------------------- steps
    def _replica_grads(self, batch):
        ctx = tf.distribute.get_replica_context()
        variables = self.model.trainable_variables
        with tf.GradientTape() as tape:
            terms, metrics = self.loss_fn(self.model, batch, True)
            denominators = ctx.all_reduce(tf.distribute.ReduceOp.SUM, [tf.stop_gradient(d) for _, d, _ in terms])
            loss = tf.add_n([_ratio(n, d, eps) for (n, _, eps), d in zip(terms, denominators)])
            loss = loss / self.config.gradient_accumulation_steps
            scaled = self.optimizer.scale_loss(loss) if self.loss_scaling else loss
        grads = tape.gradient(scaled, variables)
        grads = [tf.zeros_like(v) if g is None else tf.convert_to_tensor(g) for g, v in zip(grads, variables)]
        return grads, loss, metrics

    def _replica_apply(self, grads):
        ctx = tf.distribute.get_replica_context()
        grads = ctx.all_reduce(tf.distribute.ReduceOp.SUM, grads)
        if self.loss_scaling:
            scale = tf.cast(self.optimizer.dynamic_scale, tf.float32)
            grads = [g / scale for g in grads]
        clipped, norm = tf.clip_by_global_norm(grads, self.config.clip_norm)
        if self.loss_scaling:  # the loss-scale optimizer divides by the scale again, and skips non-finite steps
            clipped = [g * scale for g in clipped]
        self.optimizer.apply(clipped, self.model.trainable_variables)
        return norm

    def _build_train_fn(self):
        compute = tf.function(self._replica_grads, jit_compile=True) if self.config.jit_compile else self._replica_grads
        strategy, accumulate = self.strategy, self.config.gradient_accumulation_steps

        def one_step(iterator):
            batch, positions = self._cut(next(iterator))
            grads, loss, metrics = strategy.run(compute, args=(self._distribute(batch),))
            for _ in range(accumulate - 1):
                batch, more_positions = self._cut(next(iterator))
                positions += more_positions
                more, more_loss, more_metrics = strategy.run(compute, args=(self._distribute(batch),))
                grads = strategy.run(lambda a, b: [x + y for x, y in zip(a, b)], args=(grads, more))
                loss = strategy.run(tf.add, args=(loss, more_loss))
                metrics = strategy.run(lambda a, b: {k: (a[k][0] + b[k][0], a[k][1] + b[k][1]) for k in a},
                                       args=(metrics, more_metrics))
            norm = strategy.run(self._replica_apply, args=(grads,))
            reduce = lambda x: strategy.reduce(tf.distribute.ReduceOp.SUM, x, axis=None)  # noqa: E731
            sums = {"loss": reduce(loss)}
            for name, (numerator, denominator) in metrics.items():
                sums[name + "/num"], sums[name + "/den"] = reduce(numerator), reduce(denominator)
            sums["grad_norm"] = strategy.reduce(tf.distribute.ReduceOp.MEAN, norm, axis=None)
            sums["positions"] = positions * self._topology()[0]  # token positions computed (the workers alike)
            return sums

        # Every step runs in the one loop body below, so the numbers do not depend on how steps are grouped into
        # calls (a step peeled off before the loop is a second copy of the graph, which graph rewrites may round
        # differently): any --log_every_steps, and a resumed run, train the same weights. The per-call sums are
        # variables created at the first trace (their structure is the loss function's) and zeroed after reading.
        accumulators = {}

        @tf.function
        def train_loop(iterator, steps):
            for _ in tf.range(steps):
                sums = one_step(iterator)
                sums["last_loss"] = sums["loss"]
                if not accumulators:
                    with tf.init_scope():
                        for key, value in sums.items():
                            accumulators[key] = tf.Variable(tf.zeros(value.shape, value.dtype), trainable=False)
                for key, value in sums.items():
                    if key == "last_loss":
                        accumulators[key].assign(value)
                    else:
                        accumulators[key].assign_add(value)
            return {key: variable.read_value() for key, variable in accumulators.items()}

        def run(iterator, steps):
            values = train_loop(iterator, steps)
            for variable in accumulators.values():
                variable.assign(tf.zeros_like(variable))
            last_loss = values.pop("last_loss")
            return values, last_loss

        return run

    def train_steps(self, iterator, steps: int) -> dict:
        """Run `steps` training steps from `iterator` (no checkpoint, no summary): the compiled loop `train`
        uses, for benchmarks. Returns the summed per-step values."""
        if self._train_fn is None:
            self._train_fn = self._build_train_fn()
        totals, _ = self._train_fn(iterator, tf.constant(steps, tf.int32))
        return {k: float(v) for k, v in totals.items()}

    # ----------------------------------------------------------------------------------------------- train
    def train(self, dataset_fn, on_checkpoint=None, log=print) -> dict:
        """Train until `num_train_steps`, resuming from the last checkpoint. `dataset_fn(input_context,
        batch_size)` gives this worker's dataset in batches of `batch_size` (its global-batch share; micro-batch
        with accumulation). `on_checkpoint(step, path)` runs after each save."""
        c = self.config
        self.iterator = self.local_iterator(dataset_fn, c.global_batch_size)
        self._manager = None
        resumed = self.restore_latest(log)
        if resumed is not None:
            log(f"resumed from {self.resumed_from} at step {resumed}")
            if on_checkpoint is not None and self._handled_step() < resumed:  # killed between save and evaluation
                self._checkpoint_handled(on_checkpoint, resumed, self.resumed_from)
        if self._train_fn is None:
            self._train_fn = self._build_train_fn()
        meter = ProgressMeter(self, c)
        results, first_loss = {}, None
        while self.step < c.num_train_steps:
            step = self.step
            steps = meter.next_call_steps(step)
            loop_start = time.time()
            try:
                totals, last_loss = self._train_fn(self.iterator, tf.constant(steps, tf.int32))
            except tf.errors.InvalidArgumentError as e:
                if resumed is None or "Incompatible shapes" not in str(e):
                    raise
                raise AlbertError(
                    f"{self.resumed_from}: cannot resume with these flags: its saved input position "
                    f"holds batches of another shape ({str(e).strip().splitlines()[0][:120]}); rerun with the "
                    "batch size and sequence length it was written with, or use another --output_dir") from None
            totals = {k: float(v) for k, v in totals.items()}
            positions = totals.pop("positions")
            if not math.isfinite(float(last_loss)) or not math.isfinite(totals["loss"]):
                raise TrainingDiverged(f"loss became {float(last_loss)} between steps {step} and {self.step}; "
                                       + self._diverged_advice())
            results = self._summaries(totals, steps)
            first_loss = results["loss"] if first_loss is None else first_loss
            if results["loss"] > DIVERGENCE_FACTOR * max(first_loss, 1.0):
                raise TrainingDiverged(
                    f"loss {results['loss']:.4g} at step {self.step} is over {DIVERGENCE_FACTOR} times this run's "
                    f"first ({first_loss:.4g}): training diverged; " + self._diverged_advice())
            log(meter.line(self.step, steps, time.time() - loop_start, results, positions))
            if meter.rates:
                self.write_summaries("train", meter.rates)
            if self.step % c.save_checkpoints_steps == 0 or self.step >= c.num_train_steps:
                path = self.save()
                if on_checkpoint is not None:
                    self._checkpoint_handled(on_checkpoint, self.step, path)
        shapes = self.batch_shapes()
        if shapes:
            log("batch lengths (steps): " + ", ".join(f"{length} ({steps})" for length, steps in shapes.items())
                + (f"; XLA compiled the step for {len(shapes)} shape(s), one per length" if c.jit_compile else ""))
        return results

    def _diverged_advice(self) -> str:
        latest = self._manager.latest_checkpoint if self._manager is not None else None
        kept = f"the last good checkpoint ({latest}) is intact" if latest else "no checkpoint was saved"
        return f"{kept}: lower --learning_rate or raise the warmup steps and rerun"

    def _summaries(self, totals: dict, steps: int) -> dict:
        results = {"loss": totals["loss"] / steps}
        for key in totals:
            if key.endswith("/num"):
                name = key[:-4]
                results[name] = totals[key] / totals[name + "/den"] if totals[name + "/den"] else 0.0
        results["grad_norm"] = totals["grad_norm"] / steps
        inner = self.optimizer.inner_optimizer if self.loss_scaling else self.optimizer
        results["learning_rate"] = float(inner.learning_rate)  # the rate of the next step
        self.write_summaries("train", results)
        return results

    def write_summaries(self, name: str, results: dict, step: int | None = None):
        """TensorBoard scalars under output_dir/<name> (train, eval, ...) at `step` (default: the current one).
        The event file is opened at the first scalar, so a run with nothing to do leaves none behind."""
        if self._writers is None:
            self._writers = {}
        if name not in self._writers:
            self._writers[name] = tf.summary.create_file_writer(os.path.join(self.config.output_dir, name))
        writer = self._writers[name]
        with writer.as_default(step=self.step if step is None else step):
            for key, value in results.items():
                if isinstance(value, (int, float)) and key != "global_step":
                    tf.summary.scalar(key, value)
        writer.flush()

    # ------------------------------------------------------------------------------------------------ eval
    def evaluate(self, dataset_fn, steps: int, global_batch_size: int) -> dict:
        """The loss function's metrics over `steps` batches, each as global sum(numerator) / sum(denominator)."""
        strategy = self.strategy
        iterator = self.local_iterator(dataset_fn, global_batch_size)

        def replica(batch):
            _, metrics = self.loss_fn(self.model, batch, False)
            return {name: pair for name, pair in metrics.items()}

        @tf.function
        def eval_step(iterator):
            out = strategy.run(replica, args=(self._distribute(next(iterator)),))
            return {k: (strategy.reduce(tf.distribute.ReduceOp.SUM, n, axis=None),
                        strategy.reduce(tf.distribute.ReduceOp.SUM, d, axis=None)) for k, (n, d) in out.items()}

        totals = {}
        for _ in range(steps):
            for name, (n, d) in eval_step(iterator).items():
                num, den = totals.get(name, (0.0, 0.0))
                totals[name] = (num + float(n), den + float(d))
        return {name: n / d if d else 0.0 for name, (n, d) in totals.items()}
