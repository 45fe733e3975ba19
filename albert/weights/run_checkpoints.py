"""A run's checkpoint directory, once: the `model.ckpt-<step>` files on disk, the ones the CheckpointManager keeps,
`model.ckpt-best` with `best_trial.txt`, and the checkpoint to predict with. (Names: albert.ground.rundir.)"""

import os

import tensorflow as tf

from albert.ground.atomic import write_text
from albert.ground.errors import AlbertError
from albert.ground.rundir import BEST_CHECKPOINT, BEST_TRIAL, CHECKPOINT
from albert.weights.tf_checkpoints import save_original_checkpoint


def checkpoints_on_disk(directory: str) -> list:
    """The `model.ckpt-<step>` prefixes with an .index in `directory`, newest first."""
    found = []
    for path in tf.io.gfile.glob(os.path.join(directory, f"{CHECKPOINT}-*.index")):
        step = path[:-len(".index")].rsplit("-", 1)[1]
        if step.isdigit():
            found.append((int(step), path[:-len(".index")]))
    return [path for _, path in sorted(found, reverse=True)]


def saved_checkpoints(output_dir: str) -> list:
    """(path, step) of every checkpoint the CheckpointManager keeps in output_dir, oldest first."""
    state = tf.train.get_checkpoint_state(output_dir)
    if state is None:
        raise AlbertError(f"{output_dir}: no checkpoint to evaluate; train first (--do_train)")
    return [(path, int(path.rsplit("-", 1)[1])) for path in state.all_model_checkpoint_paths]


def record_best(model, output_dir: str, step: int, value: float) -> tuple:
    """Keep model.ckpt-best (original names) and best_trial.txt (`global_step:best_step:best_value`, as the
    original) when `value` beats the best so far. As the original, the best starts at -1 (step 0) and must be
    beaten strictly, so a NaN metric (e.g. Pearson of constant predictions) is never best. Returns
    (best_step, best_value)."""
    _, best_step, best_value = best_trial(output_dir) or (0, 0, -1.0)
    if value > best_value:  # False for NaN
        save_original_checkpoint(model, os.path.join(output_dir, BEST_CHECKPOINT), global_step=step)
        best_step, best_value = step, value
    write_text(os.path.join(output_dir, BEST_TRIAL), f"{step}:{best_step}:{best_value}")
    return best_step, best_value


def best_trial(output_dir: str) -> tuple | None:
    """(the last evaluated step, the best step, its value) from output_dir's best_trial.txt, or None before any
    evaluation."""
    path = os.path.join(output_dir, BEST_TRIAL)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        step, best_step, best_value = f.read().split(":")
    return int(step), int(best_step), float(best_value)


def prediction_checkpoint(output_dir: str, init_checkpoint: str | None) -> str:
    """model.ckpt-best, else the newest checkpoint, else --init_checkpoint."""
    best = os.path.join(output_dir, BEST_CHECKPOINT)
    if tf.io.gfile.exists(best + ".index"):
        return best
    source = tf.train.latest_checkpoint(output_dir) or init_checkpoint
    if not source:
        raise AlbertError(f"{output_dir}: no model.ckpt-best or checkpoint to predict with")
    return source


def evaluate_each(model, output_dir: str, evaluate):
    """An evaluation-only run (--do_eval without --do_train): `evaluate(step)` on every checkpoint the manager keeps
    in output_dir, oldest first, each read into `model`."""
    for path, step in saved_checkpoints(output_dir):
        tf.train.Checkpoint(model=model).read(path).expect_partial()
        evaluate(step)
