"""Keras serialization of the encoder and the task models: each is rebuilt from its AlbertConfig (as the dict of
`AlbertConfig.to_dict`) and its own few arguments, so `model.save("m.keras")` / `keras.models.load_model` work in
any process that imports `albert`; sub-layers are made by the constructors and need no config of their own.
"""

import os

import keras

from albert.config import AlbertConfig

PACKAGE = "albert"


class ConfigSerializable:
    """Mixin for a Keras model whose constructor is `(config: AlbertConfig, **arguments)`. A subclass lists the
    names of its other constructor arguments in `config_arguments`; each is stored as an attribute of that name."""

    config_arguments: tuple = ()
    # {input name: rank} of the model's inputs (int32), for `export` without an input signature.
    serving_inputs: dict = {"input_ids": 2, "input_mask": 2, "segment_ids": 2}

    def get_config(self) -> dict:
        values = {"name": self.name, "trainable": self.trainable, "config": self.config.to_dict()}
        values.update({name: getattr(self, name) for name in self.config_arguments})
        if getattr(self, "preprocessor", None) is not None:  # its SentencePiece model is saved as an asset
            values["preprocessor"] = keras.saving.serialize_keras_object(self.preprocessor)
        return values

    @classmethod
    def from_config(cls, values: dict):
        values = dict(values)
        config = AlbertConfig.from_dict(values.pop("config"), source=f"{cls.__name__} config")
        preprocessor = values.pop("preprocessor", None)
        model = cls(config, **values)
        if preprocessor is not None:
            model.preprocessor = keras.saving.deserialize_keras_object(preprocessor)
        return model

    def save(self, filepath, overwrite=True, **kwargs):
        """keras.Model.save, written under a temporary name and renamed: a failed save leaves no file behind."""
        filepath = os.fspath(filepath)
        if not filepath.endswith(".keras"):
            return super().save(filepath, overwrite=overwrite, **kwargs)
        if os.path.exists(filepath) and not overwrite:
            raise FileExistsError(f"{filepath} exists; pass overwrite=True")
        directory, base = os.path.split(os.path.abspath(filepath))
        tmp = os.path.join(directory, f".{base}.tmp-{os.getpid()}.keras")
        try:
            super().save(tmp, overwrite=True, **kwargs)
            os.replace(tmp, filepath)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)


    def export(self, filepath, format="tf_saved_model", verbose=None, input_signature=None, **kwargs):
        """keras.Model.export with the model's own input signature by default: a dict of int32 tensors of any
        batch and length (`serving_inputs`), so an exported model needs no call first."""
        if input_signature is None:
            import tensorflow as tf

            input_signature = [{name: tf.TensorSpec([None] * rank, tf.int32, name=name)
                                for name, rank in self.serving_inputs.items()}]
        return super().export(filepath, format=format, verbose=verbose, input_signature=input_signature, **kwargs)


def register(cls):
    return keras.saving.register_keras_serializable(package=PACKAGE)(cls)
