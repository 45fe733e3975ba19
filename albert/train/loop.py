"""THE training loop, shared by every runner: pretraining, GLUE, SQuAD, RACE.

- `strategy.run` inside a `tf.function` that runs `steps_per_loop` steps per call (dispatch amortised, as the
  original's TPU `iterations_per_loop`); the same code for one device, Mirrored, MultiWorker and TPU strategies.
- A task gives `loss_fn(model, batch, training) -> (terms, metrics)`: per-replica partial sums. Each loss term is
  `(numerator, denominator, epsilon)`; the loss is sum(numerator / (GLOBAL denominator + epsilon)), the denominator
  all-reduced over replicas first, so any number of replicas computes the single-device loss of the global batch.
  Metrics are `(numerator, denominator)` pairs, reported as global ratios.
- Gradients are all-reduced, clipped to the optimizer's global norm (1.0: the original's clipping), then applied.
- Optional gradient accumulation, mixed precision (bf16; fp16 with dynamic loss scaling), XLA (`jit_compile`) for
  the forward and backward pass, activation recomputation (`recompute`).
- A non-finite or exploding loss stops the run before any checkpoint of it is written. Around the loop: the batches
  reach the replicas through albert.train.replicas, checkpoints and resume (data position included) are
  albert.train.run_state's, TensorBoard scalars albert.train.summaries', the progress line albert.train.progress'.
"""

import math
import time

import keras
import tensorflow as tf

from albert.ground.errors import AlbertError
from albert.model.encoder import set_recompute
from albert.train.distribute import check_xla_placement
from albert.train.optimizers import clip_norm_of
from albert.train.progress import ProgressMeter
from albert.train.replicas import ReplicaFeed
from albert.train.run_state import RunState
from albert.train.settings import LoopConfig
from albert.train.summaries import Summaries, step_results

# Training stops, before saving, when the mean loss of a step exceeds this many times the first of the run (or 1):
# a run that has left any sane range (AdamW at a too high rate reached 1e11) is not checkpointed or kept as best.
DIVERGENCE_FACTOR = 100


class TrainingDiverged(AlbertError):
    """The loss became NaN or infinite."""


def _ratio(numerator, denominator, epsilon=0.0):
    return numerator / (denominator + epsilon) if epsilon else tf.math.divide_no_nan(numerator, denominator)


class Trainer:
    """The step loop of every runner. The batches reach the replicas through a ReplicaFeed (albert.train.replicas);
    the checkpoints, resume and data position are a RunState's (albert.train.run_state)."""

    def __init__(self, strategy, model, optimizer, loss_fn, config: LoopConfig, loss_scaling: bool = False):
        check_xla_placement(strategy, config.jit_compile)
        if config.recompute:
            set_recompute(model)
        self.strategy, self.model, self.loss_fn, self.config = strategy, model, loss_fn, config
        self.optimizer = keras.optimizers.LossScaleOptimizer(optimizer) if loss_scaling else optimizer
        self.clip_norm = clip_norm_of(optimizer)
        if hasattr(optimizer, "gradients_reduced_and_clipped"):
            optimizer.gradients_reduced_and_clipped = True  # this loop all-reduces and clips (_replica_apply)
        self.loss_scaling = loss_scaling
        with strategy.scope():
            self.optimizer.build(model.trainable_variables)
        self.feed = ReplicaFeed(strategy, config.length_boundaries)
        self.state = RunState(model, self.optimizer, self.feed.worker_directory(config.output_dir),
                              config.keep_checkpoint_max)
        self.summaries = Summaries(config.output_dir)
        self._train_fn = None

    @property
    def step(self) -> int:
        return self.state.step

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
        if self.clip_norm:
            clipped, norm = tf.clip_by_global_norm(grads, self.clip_norm)
        else:
            clipped, norm = grads, tf.linalg.global_norm(grads)
        if self.loss_scaling:  # the loss-scale optimizer divides by the scale again, and skips non-finite steps
            clipped = [g * scale for g in clipped]
        self.optimizer.apply(clipped, self.model.trainable_variables)
        return norm

    def _build_train_fn(self):
        compute = tf.function(self._replica_grads, jit_compile=True) if self.config.jit_compile else self._replica_grads
        strategy, accumulate = self.strategy, self.config.gradient_accumulation_steps

        def one_step(iterator):
            batch, positions = self.feed.cut(next(iterator))
            grads, loss, metrics = strategy.run(compute, args=(self.feed.distribute(batch),))
            for _ in range(accumulate - 1):
                batch, more_positions = self.feed.cut(next(iterator))
                positions += more_positions
                more, more_loss, more_metrics = strategy.run(compute, args=(self.feed.distribute(batch),))
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
            sums["positions"] = positions * self.feed.topology()[0]  # token positions computed (the workers alike)
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
    def train(self, dataset_fn, on_checkpoint=None, log=print, on_started=None) -> dict:
        """Train until `num_train_steps`, resuming from the last checkpoint. `dataset_fn(input_context,
        batch_size)` gives this worker's dataset in batches of `batch_size` (its global-batch share; micro-batch
        with accumulation). `on_checkpoint(step, path)` runs after each save; `on_started()` once every check of
        the run has passed (the checkpoint restored and the first call trained on its data position, or nothing left
        to train): a refused run has written nothing."""
        c, state = self.config, self.state
        state.attach(self.feed.local_iterator(dataset_fn, c.global_batch_size))
        resumed = state.restore_latest(log)
        if resumed is not None:
            log(f"resumed from {state.resumed_from} at step {resumed}")
            if on_checkpoint is not None and state.handled_step() < resumed:  # killed between save and evaluation
                state.checkpoint_handled(on_checkpoint, resumed, state.resumed_from)
        if self._train_fn is None:
            self._train_fn = self._build_train_fn()
        meter = ProgressMeter(self, c)
        results, first_loss, started = {}, None, False
        while self.step < c.num_train_steps:
            step = self.step
            steps = meter.next_call_steps(step)
            loop_start = time.time()
            totals, last_loss = self._call(steps, resumed is not None)
            if not started and on_started is not None:
                on_started()
            started = True
            positions = totals.pop("positions")
            if not math.isfinite(float(last_loss)) or not math.isfinite(totals["loss"]):
                raise TrainingDiverged(f"loss became {float(last_loss)} between steps {step} and {self.step}; "
                                       + self._diverged_advice())
            inner = self.optimizer.inner_optimizer if self.loss_scaling else self.optimizer
            results = step_results(totals, steps, float(inner.learning_rate))  # the rate of the next step
            self.summaries.write("train", results, self.step)
            first_loss = results["loss"] if first_loss is None else first_loss
            if results["loss"] > DIVERGENCE_FACTOR * max(first_loss, 1.0):
                raise TrainingDiverged(
                    f"loss {results['loss']:.4g} at step {self.step} is over {DIVERGENCE_FACTOR} times this run's "
                    f"first ({first_loss:.4g}): training diverged; " + self._diverged_advice())
            log(meter.line(self.step, steps, time.time() - loop_start, results, positions))
            if meter.rates:
                self.summaries.write("train", meter.rates, self.step)
            if self.step % c.save_checkpoints_steps == 0 or self.step >= c.num_train_steps:
                path = state.save()
                if on_checkpoint is not None:
                    state.checkpoint_handled(on_checkpoint, self.step, path)
        if not started and on_started is not None:
            on_started()
        shapes = self.feed.batch_shapes()
        if shapes:
            log("batch lengths (steps): " + ", ".join(f"{length} ({steps})" for length, steps in shapes.items())
                + (f"; XLA compiled the step for {len(shapes)} shape(s), one per length" if c.jit_compile else ""))
        return results

    def _call(self, steps: int, resumed: bool) -> tuple:
        """(summed values, last loss) of one call of the compiled loop over `steps` steps; a resumed data position
        whose batches have another shape than these flags give is the user's error, in one line."""
        try:
            totals, last_loss = self._train_fn(self.state.iterator, tf.constant(steps, tf.int32))
        except tf.errors.InvalidArgumentError as e:
            if not resumed or "Incompatible shapes" not in str(e):
                raise
            raise AlbertError(
                f"{self.state.resumed_from}: cannot resume with these flags: its saved input position holds batches "
                f"of another shape ({str(e).strip().splitlines()[0][:120]}); rerun with the batch size and sequence "
                "length it was written with, or use another --output_dir") from None
        return {k: float(v) for k, v in totals.items()}, last_loss

    def _diverged_advice(self) -> str:
        latest = self.state.latest_checkpoint
        kept = f"the last good checkpoint ({latest}) is intact" if latest else "no checkpoint was saved"
        return f"{kept}: lower --learning_rate or raise the warmup steps and rerun"

    # ------------------------------------------------------------------------------------------------ eval
    def evaluate(self, dataset_fn, steps: int, global_batch_size: int) -> dict:
        """The loss function's metrics over `steps` batches, each as global sum(numerator) / sum(denominator)."""
        strategy = self.strategy
        iterator = self.feed.local_iterator(dataset_fn, global_batch_size)

        def replica(batch):
            _, metrics = self.loss_fn(self.model, batch, False)
            return {name: pair for name, pair in metrics.items()}

        @tf.function
        def eval_step(iterator):
            out = strategy.run(replica, args=(self.feed.distribute(next(iterator)),))
            return {k: (strategy.reduce(tf.distribute.ReduceOp.SUM, n, axis=None),
                        strategy.reduce(tf.distribute.ReduceOp.SUM, d, axis=None)) for k, (n, d) in out.items()}

        totals = {}
        for _ in range(steps):
            for name, (n, d) in eval_step(iterator).items():
                num, den = totals.get(name, (0.0, 0.0))
                totals[name] = (num + float(n), den + float(d))
        return {name: n / d if d else 0.0 for name, (n, d) in totals.items()}
