"""A run's TensorBoard scalars: one event file per kind (train, eval, ...) under output_dir/<kind>."""

import os

import tensorflow as tf


class Summaries:
    """The writers of one run's scalars. An event file is opened at its first scalar, so a run with nothing to do
    leaves none behind."""

    def __init__(self, output_dir: str):
        self.output_dir, self._writers = output_dir, {}

    def write(self, name: str, results: dict, step: int):
        """The numbers of `results` (global_step left out) as scalars of output_dir/<name> at `step`."""
        if name not in self._writers:
            self._writers[name] = tf.summary.create_file_writer(os.path.join(self.output_dir, name))
        writer = self._writers[name]
        with writer.as_default(step=step):
            for key, value in results.items():
                if isinstance(value, (int, float)) and key != "global_step":
                    tf.summary.scalar(key, value)
        writer.flush()


def step_results(totals: dict, steps: int, learning_rate: float) -> dict:
    """The mean loss of `steps` steps, each metric as sum(numerator) / sum(denominator), the mean gradient norm
    and the learning rate, from the summed values of one call of the training loop."""
    results = {"loss": totals["loss"] / steps}
    for key in totals:
        if key.endswith("/num"):
            name = key[:-4]
            results[name] = totals[key] / totals[name + "/den"] if totals[name + "/den"] else 0.0
    results["grad_norm"] = totals["grad_norm"] / steps
    results["learning_rate"] = learning_rate
    return results
