"""What every task model shares: an encoder with heads built as soon as it is made, and the helpers a task model's
raw-text methods (`answer`, `choose`, ...) run it with.

Each model keeps its encoder as `.encoder` and its heads under fixed attribute names, which the checkpoint name
table (`albert/weights/original.py`) uses; `checkpoint_heads` says which head tables apply. A task model's output is its
task output only (the classifier's logits, SQuAD's start/end logits, ...), so `compile`/`fit`/`predict` work with
stock Keras losses and metrics and `predict` returns nothing else; the hidden states are `model.encoder(inputs)`.
The task models themselves live with their tasks (albert.tasks.<task>.model).
"""

import keras
import numpy as np
import tensorflow as tf

from albert.data.buckets import grouped_batches
from albert.data.features import step_boundaries
from albert.ground.errors import AlbertError
from albert.model.from_pretrained import FromPretrained
from albert.model.serialization import ConfigSerializable
from albert.model.text_inputs import TextInputs
from albert.text.tokenization import FullTokenizer


class TaskModel(FromPretrained, TextInputs, ConfigSerializable, keras.Model):
    """Builds every head as soon as the model is made, so weights exist before the first call (for checkpoint
    loading and parameter counts)."""

    def build(self, input_shape=None):
        for name in ("mlm_head", "sop_head", "classifier_head", "squad_head", "choice_head", "token_head"):
            if hasattr(self, name):
                getattr(self, name).build()


def prediction_step(model, make):
    """The model's prediction step, traced once for all its calls (kept out of Keras' attribute tracking)."""
    if "_answer_step" not in model.__dict__:
        object.__setattr__(model, "_answer_step", make())
    return model.__dict__["_answer_step"]


def graph_call(where: str, step, *inputs) -> dict:
    """`step(*inputs)`, a raw-text computation whose bad requests the graph refuses (albert.export.savedmodel
    .refuse_unless), with such a refusal as one AlbertError line naming `where`."""
    try:
        return step(*inputs)
    except tf.errors.InvalidArgumentError as error:
        lines = [line for line in error.message.splitlines() if line.startswith("assertion failed: [")]
        if not lines:
            raise
        raise AlbertError(f"{where}: {lines[0][len('assertion failed: ['):].rstrip(']')}") from None


def sequence_length(model, asked: int | None, default: int, where: str) -> int:
    """The asked length (checked by the caller), else the runner's default cut to the model's positions; beyond them
    an error."""
    positions = model.config.max_position_embeddings
    if asked is None:
        return min(default, positions)
    if asked > positions:
        raise AlbertError(f"{where}: max_seq_length {asked} exceeds the model's "
                          f"max_position_embeddings {positions}; pass max_seq_length={positions} or less")
    return asked


def python_tokenizer(model) -> FullTokenizer:
    model._require_preprocessor()
    p = model.preprocessor
    return FullTokenizer(None, p.do_lower_case, p.spm_model_file)


def length_batches(rows: dict, batch_size: int, max_seq_length: int):
    """Rows as run_squad.py / run_race.py's prediction batches them (int32, grouped by length, cut to it)."""
    arrays = {k: np.asarray(v, np.int32) for k, v in rows.items()}
    return grouped_batches(tf.data.Dataset.from_tensor_slices(arrays), batch_size, step_boundaries(max_seq_length))
