"""The training loop's progress line: how many steps each compiled call runs, and what is printed after it."""

import keras

from albert.model.sizing import gemm_ceiling

LOG_SECONDS = 30.0  # a progress line about this often when no --log_every_steps is given (one process)


def number(name: str, value: float) -> str:
    """A value of the progress line: the learning rate in scientific notation (2.00e-05: a fine-tuning rate shows as
    0.0000 with four decimals), the metrics with four decimals."""
    return f"{value:.2e}" if name == "learning_rate" else f"{value:.4f}"


class ProgressMeter:
    """How many steps each call of the compiled loop runs, and the progress line after it: loss and metrics,
    examples/s, tokens/s, achieved FLOP/s and MFU (against this device's measured GEMM ceiling), ETA. The first
    call of a process runs one step, since it traces (and compiles): it is left out of the rates and the ETA."""

    def __init__(self, trainer, config):
        self.config, self.first = config, True
        self.examples_per_step = config.global_batch_size * config.gradient_accumulation_steps
        workers = trainer.feed.topology()[0]
        self.adaptive = config.log_every_steps == 0 and workers == 1  # workers must run identical calls
        self.every = config.log_every_steps or config.steps_per_loop
        self.seconds_per_step = None
        self.timed_steps, self.timed_seconds = 0, 0.0
        self.replicas = trainer.strategy.num_replicas_in_sync
        self.peak, self.rates = None, {}
        if config.flops_per_example:
            compute = keras.mixed_precision.global_policy().compute_dtype
            self.peak = gemm_ceiling(compute, repeats=3) * self.replicas

    def next_call_steps(self, step: int) -> int:
        c = self.config
        steps = min(c.steps_per_loop, c.num_train_steps - step,
                    c.save_checkpoints_steps - step % c.save_checkpoints_steps)
        if self.first:
            return 1
        if self.adaptive:
            return max(1, min(steps, int(LOG_SECONDS / max(self.seconds_per_step, 1e-6))))
        return min(steps, self.every)

    def line(self, step: int, steps: int, seconds: float, results: dict, positions: float | None = None) -> str:
        """`positions`: the token positions the call computed (batches cut to a length bucket compute fewer than
        examples x seq_length): tokens/s and FLOP/s count those."""
        c = self.config
        text = (f"step {step}/{c.num_train_steps} loss {results['loss']:.8f} "
                + " ".join(f"{k} {number(k, v)}" for k, v in results.items() if k != "loss"))
        self.seconds_per_step = seconds / steps
        self.rates = {}
        if self.first:
            self.first = False
            return text + f" | first call (tracing, compiling): {seconds:.1f} s"
        self.timed_steps += steps
        self.timed_seconds += seconds
        examples = steps * self.examples_per_step / max(seconds, 1e-9)
        self.rates["examples_per_second"] = examples
        text += f" | {examples:,.1f} examples/s"
        # The share of each example's seq_length positions computed (1 without length buckets).
        share = positions / (steps * self.examples_per_step * c.seq_length) if positions and c.seq_length else 1.0
        if c.seq_length:
            self.rates["tokens_per_second"] = examples * c.seq_length * share
            text += f", {examples * c.seq_length * share:,.0f} tokens/s"
        if c.flops_per_example:
            flops = examples * c.flops_per_example * share
            text += f", {flops / 1e9:,.1f} GFLOP/s"
            if self.peak:
                self.rates["mfu"] = flops / self.peak
                text += f" (MFU {flops / self.peak:.0%})"
        eta = self.timed_seconds / self.timed_steps * (c.num_train_steps - step)
        return text + f", ETA {eta:,.0f} s"
