"""How a step's batch reaches the replicas: this worker's share of the data, every replica of a step at one length
bucket (several workers agree on it), the batch split over the local replicas."""

import os

import tensorflow as tf

from albert.data.buckets import bucket_index, cut, example_lengths


class ReplicaFeed:
    """The data plumbing of a strategy's replicas. `length_boundaries`: batches cut to the smallest of these lengths
    that holds their longest example (albert.data.buckets); None or one length: as the data gives them."""

    def __init__(self, strategy, length_boundaries: tuple | None):
        self.strategy, self.bounds = strategy, length_boundaries
        with tf.init_scope():
            self._lengths_seen = tf.Variable(tf.zeros([len(length_boundaries or ())], tf.int64), trainable=False,
                                             name="lengths_seen")

    def topology(self) -> tuple:
        """(workers, this worker's index, replicas on this worker)."""
        local = len(self.strategy.extended.worker_devices)
        workers = max(1, self.strategy.num_replicas_in_sync // local)
        resolver = getattr(self.strategy, "cluster_resolver", None)
        worker = resolver.task_id if workers > 1 and resolver is not None and resolver.task_id is not None else 0
        return workers, worker, local

    def worker_directory(self, output_dir: str) -> str:
        """output_dir; in a multi-worker run, workers other than the chief keep their own checkpoints (with their
        own data position) in output_dir/worker_<i>."""
        workers, worker, _ = self.topology()
        return os.path.join(output_dir, f"worker_{worker}") if workers > 1 and worker > 0 else output_dir

    def local_iterator(self, dataset_fn, global_batch_size: int):
        """An iterator over this worker's share of the data, batched for all its replicas. It is a plain
        (checkpointable) tf.data iterator: each step splits its batch over the local replicas."""
        workers, worker, local = self.topology()
        replicas = self.strategy.num_replicas_in_sync
        context = tf.distribute.InputContext(workers, worker, replicas)
        with tf.device("/cpu:0"):
            return iter(dataset_fn(context, global_batch_size // replicas * local))

    def cut(self, batch):
        """(the batch cut to its length bucket, the positions it computes). Every replica of a step gets one shape:
        the local replicas share the batch, and several workers agree on the longest of their batches' buckets (one
        tiny all-reduce)."""
        bounds = self.bounds
        rows = tf.cast(tf.size(batch["input_mask"]) // tf.shape(batch["input_mask"])[-1], tf.float32)
        if not bounds or len(bounds) == 1:
            return batch, rows * tf.cast(tf.shape(batch["input_mask"])[-1], tf.float32)
        index = bucket_index(tf.reduce_max(example_lengths(batch)), bounds)
        if self.topology()[0] > 1:  # the workers' buckets, one-hot, summed over every replica
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
        return {length: int(n) for length, n in zip(self.bounds or (), counts) if n}

    def distribute(self, batch):
        """The batch as per-replica values: the whole of it with one local replica, else split evenly."""
        local = self.topology()[2]
        if local == 1:
            return self.strategy.experimental_distribute_values_from_function(lambda ctx: batch)
        parts = {k: tf.split(v, local) for k, v in batch.items()}
        return self.strategy.experimental_distribute_values_from_function(
            lambda ctx: {k: v[ctx.replica_id_in_sync_group % local] for k, v in parts.items()})
