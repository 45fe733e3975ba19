"""`AlbertPreprocessor`: raw strings to the encoder's inputs, in the graph, as a Keras layer."""

import os

import keras
import tensorflow as tf

from albert.data.features import PACKED_INPUTS
from albert.ground.errors import AlbertError
from albert.model.serialization import register
from albert.text.graph_tokenizer import InGraphTokenizer

DEFAULT_SEQ_LENGTH = 128  # the packing length of a preprocessor no one gave one (at most max_position_embeddings)


@register
class AlbertPreprocessor(keras.layers.Layer):
    """Raw strings -> `{"input_ids", "input_mask", "segment_ids"}` int32 [B, seq_length], in the graph.

    Call with a string tensor [B] (single segments) or a pair `(texts_a, texts_b)`; usable inside a model and in
    `tf.data.Dataset.map`. `get_config()` names the SentencePiece model's file (`from_config` reads it again); a
    `.keras` file carries the model itself as an asset, so it loads where that file is gone."""

    ASSET = "spm.model"

    def __init__(self, spm_model_file=None, seq_length: int = DEFAULT_SEQ_LENGTH, do_lower_case: bool = True,
                 **kwargs):
        kwargs.setdefault("trainable", False)
        kwargs.pop("dtype", None)
        super().__init__(**kwargs)
        self.seq_length, self.do_lower_case = int(seq_length), bool(do_lower_case)
        if self.seq_length < 3:
            raise AlbertError(f"AlbertPreprocessor: seq_length must be at least 3, got {seq_length}")
        self.tokenizer = None
        self.spm_model_file = None if spm_model_file is None else os.path.abspath(os.fspath(spm_model_file))
        if spm_model_file is not None:
            if not os.path.isfile(spm_model_file):
                raise AlbertError(f"{spm_model_file}: SentencePiece model not found")
            with open(spm_model_file, "rb") as f:
                self._set_model(f.read())

    @classmethod
    def from_config(cls, config: dict):
        """The layer of `get_config()`. A SentencePiece file that is gone (a `.keras` file loaded on another
        machine) is left for `load_assets`, which gives the model the file carried."""
        config = dict(config)
        path = config.get("spm_model_file")
        if path is not None and not os.path.isfile(path):
            config.pop("spm_model_file")
            layer = cls(**config)
            layer.spm_model_file = path
            return layer
        return cls(**config)

    def _set_model(self, proto: bytes):
        self._proto = proto
        self.tokenizer = InGraphTokenizer(proto, self.do_lower_case)

    def call(self, inputs):
        if self.tokenizer is None:
            where = f" ({self.spm_model_file} is gone)" if self.spm_model_file else ""
            raise AlbertError(f"AlbertPreprocessor has no SentencePiece model{where}: pass spm_model_file")
        segments = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        segments = [tf.reshape(tf.convert_to_tensor(s, tf.string), [-1]) for s in segments]
        return self.tokenizer.pack([self.tokenizer.tokenize(s) for s in segments], self.seq_length)

    def compute_output_spec(self, inputs):
        first = inputs[0] if isinstance(inputs, (list, tuple)) else inputs
        shape = (first.shape[0], self.seq_length)
        return {k: keras.KerasTensor(shape, dtype="int32") for k in PACKED_INPUTS}

    def get_config(self) -> dict:
        return {"name": self.name, "trainable": self.trainable, "spm_model_file": self.spm_model_file,
                "seq_length": self.seq_length, "do_lower_case": self.do_lower_case}

    def save_assets(self, dir_path):
        with open(os.path.join(dir_path, self.ASSET), "wb") as f:
            f.write(self._proto)

    def load_assets(self, dir_path):
        with open(os.path.join(dir_path, self.ASSET), "rb") as f:
            self._set_model(f.read())
