"""TensorFlow checkpoint files: the original's TF1 name-based checkpoints read and written, a checkpoint path
resolved, a checkpoint's step. (Which kind a checkpoint is, and which checkpoint a path stands for:
albert.weights.formats.locate_weights.)"""

import os

import numpy as np
import tensorflow as tf

from albert.weights.original import original_variable_map


class CheckpointTensors:
    """A TF1 name-based checkpoint seen as {original name: shape} + get(name): what `load_tensors` reads. The
    other formats (albert.weights.huggingface / keras_hub) offer the same four attributes, names translated."""

    config_name = "albert_config.json"
    optional = ()  # encoder variables the source may lack (kept initialised, reported missing)

    def __init__(self, path: str):
        """`path`: a checkpoint prefix (albert.weights.formats.locate_weights finds the one a directory names)."""
        self.path = path
        self._reader = tf.train.load_checkpoint(self.path)
        self.shapes = self._reader.get_variable_to_shape_map()
        self.ignored, self.unused = [], []

    def get(self, name: str) -> np.ndarray:
        return self._reader.get_tensor(name)


def save_original_checkpoint(model, path: str, global_step: int | None = None) -> str:
    """Write the model's variables under the original TF1 names (a name-based V2 checkpoint at prefix `path`),
    so tools built for the original read it. Written under a temporary prefix and renamed into place."""
    names = original_variable_map(model)
    tensors = {name: tf.convert_to_tensor(variable) for name, variable in names.items()}
    if global_step is not None:
        tensors["global_step"] = tf.constant(global_step, tf.int64)
    keys = sorted(tensors)
    directory = os.path.dirname(path)
    if directory:
        tf.io.gfile.makedirs(directory)
    tmp = f"{path}.tmp-{os.getpid()}"
    tf.raw_ops.SaveV2(prefix=tmp, tensor_names=keys, shape_and_slices=[""] * len(keys),
                      tensors=[tensors[k] for k in keys])
    data_files = tf.io.gfile.glob(f"{tmp}.data-*")
    for src in data_files:
        tf.io.gfile.rename(src, path + src[len(tmp):], overwrite=True)
    tf.io.gfile.rename(f"{tmp}.index", f"{path}.index", overwrite=True)  # last: readers look for the index
    return path


def checkpoint_step(path: str) -> int | None:
    """The training step of a checkpoint: its `global_step` variable (original checkpoints), else the number in
    its name (`model.ckpt-<step>`), else None."""
    shapes = tf.train.load_checkpoint(path).get_variable_to_shape_map()
    if "global_step" in shapes:
        return int(tf.train.load_checkpoint(path).get_tensor("global_step"))
    suffix = os.path.basename(path).rsplit("-", 1)[-1]
    return int(suffix) if suffix.isdigit() else None
