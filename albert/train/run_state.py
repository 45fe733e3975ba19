"""What a training run keeps across restarts, in one `tf.train.CheckpointManager` (`model.ckpt-<step>`): the model,
the optimizer (and with it the step), every dropout layer's seed state and the data position (the input
iterator). A restarted run resumes by itself where it stopped; a checkpoint of another model is refused."""

import os

import tensorflow as tf

from albert.ground.atomic import write_text
from albert.ground.errors import AlbertError
from albert.ground.rundir import CHECKPOINT
from albert.weights.run_checkpoints import checkpoints_on_disk


class RunState:
    """The checkpoints of one run in `directory` (keeping `keep`). `iterator`, once set (attach), is saved and
    restored with the rest."""

    def __init__(self, model, optimizer, directory: str, keep: int):
        self.model, self.optimizer, self.directory, self.keep = model, optimizer, directory, keep
        self.iterator = None
        self.resumed_from = None
        self._checkpoint = None
        self._manager = None

    @property
    def step(self) -> int:
        return int(self.optimizer.iterations.numpy())

    def attach(self, iterator):
        """Save and restore the data position of `iterator` from now on."""
        self.iterator, self._manager = iterator, None

    def _ensure_manager(self):
        if self._manager is None:
            items = dict(model=self.model, optimizer=self.optimizer, dropout_seeds=self.seed_states())
            if self.iterator is not None:
                items["iterator"] = self.iterator
            self._checkpoint = tf.train.Checkpoint(**items)
            self._manager = tf.train.CheckpointManager(self._checkpoint, self.directory, max_to_keep=self.keep,
                                                       checkpoint_name=CHECKPOINT, step_counter=self.optimizer.iterations)
        return self._manager

    @property
    def latest_checkpoint(self) -> str | None:
        return self._manager.latest_checkpoint if self._manager is not None else None

    def seed_states(self) -> list:
        """The state of every dropout layer's random seed generator, in layer order: Keras does not track them, so
        without them in the checkpoint a resumed run would draw other dropout masks than an uninterrupted one."""
        return [generator.state for layer in self.model._flatten_layers()
                for generator in getattr(layer, "_seed_generators", [])]

    def check_resumable(self) -> int | None:
        """restore_latest without the data position and without a word: raises the same error for a checkpoint of
        another model, before the run writes anything (its feature caches, its model files). The step, or None."""
        return self.restore_latest(log=lambda line: None)

    def restore_latest(self, log=print) -> int | None:
        """Restore the newest intact checkpoint of the directory (model, optimizer, dropout seeds, and the data
        position once an iterator is attached); its step, or None when there is none. The one the `checkpoint` file
        names comes first; when that file is garbled or names a deleted or outside checkpoint, the
        `model.ckpt-<step>.index` files on disk are the candidates, newest first. One cut short by a kill or a full
        disk is reported and the one before it is used; one of another model configuration is an error (not a
        silent fresh start)."""
        manager = self._ensure_manager()
        named = manager.latest_checkpoint
        on_disk = checkpoints_on_disk(self.directory)
        if named and named not in on_disk:
            log(f"{self.directory}/checkpoint names {named}, which is not a checkpoint of this directory; ignored")
        # The checkpoint the `checkpoint` file names first (one saved after it, when a kill landed before the file
        # was updated, is not the manager's and is written again), then the older ones on disk, newest first.
        candidates = on_disk
        if named in on_disk:
            candidates = [named] + on_disk[on_disk.index(named) + 1:]
        for path in candidates:
            try:
                status = self._checkpoint.restore(path).assert_existing_objects_matched()
            except (AssertionError, ValueError) as e:
                raise AlbertError(
                    f"{path}: written for another model ({str(e).strip().splitlines()[0][:160]}); resume with the "
                    "albert_config.json and flags it was trained with, or use another --output_dir") from None
            except (IndexError, tf.errors.OpError) as e:
                log(f"{path}: cannot be read ({str(e).strip().splitlines()[0][:120]}: cut short by a kill or a full "
                    "disk?); resuming from the checkpoint before it")
                continue
            if self.iterator is None:
                status.expect_partial()  # the data position is restored with the iterator, later
            self.resumed_from = path
            return self.step
        if candidates:
            raise AlbertError(f"{self.directory}: none of its {len(candidates)} checkpoint(s) can be read; "
                              "remove them to start over, or use another --output_dir")
        return None

    def save(self) -> str:
        return self._ensure_manager().save(checkpoint_number=self.step)

    @property
    def _handled_file(self) -> str:
        return os.path.join(self.directory, "checkpoint.handled")

    def handled_step(self) -> int:
        """The last step whose checkpoint went through `on_checkpoint` (its evaluation), or -1."""
        try:
            with tf.io.gfile.GFile(self._handled_file) as f:
                return int(f.read().strip() or -1)
        except (tf.errors.NotFoundError, ValueError):
            return -1

    def checkpoint_handled(self, on_checkpoint, step: int, path: str):
        """`on_checkpoint(step, path)`, then the step recorded as handled (a kill in between runs it again)."""
        on_checkpoint(step, path)
        write_text(self._handled_file, f"{step}\n")
