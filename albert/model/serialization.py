"""Keras serialization of the encoder and the task models: each is rebuilt from its AlbertConfig (as the dict of
`AlbertConfig.to_dict`) and its own few arguments, so `model.save("m.keras")` / `keras.models.load_model` work in
any process that imports `albert`; sub-layers are made by the constructors and need no config of their own.
"""

import contextlib
import os

import keras
import tensorflow as tf

from albert.ground.atomic import replacing_file
from albert.ground.outputs import writing
from albert.config import AlbertConfig
from albert.data.buckets import cut_to_bucket
from albert.data.features import boundaries

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
        with replacing_file(filepath, suffix=".keras") as tmp:  # Keras writes only to a name ending in .keras
            super().save(tmp, overwrite=True, **kwargs)

    def serving_outputs(self, outputs):
        """The model's outputs as an export serves them (a dict of tensors, or one tensor)."""
        return outputs

    def export(self, filepath, format="tf_saved_model", verbose=None, input_signature=None, **kwargs):
        """keras.Model.export, computing in float32 whatever the dtype policy the model was built under
        (`float32_copy`), with the model's own input signature by default: a dict of int32 tensors of any batch
        and length (`serving_inputs`), so an exported model needs no call first. A SavedModel is written under a
        temporary name and renamed into place; its `serve` endpoint returns `serving_outputs`. A model with a
        preprocessor (from_pretrained) also serves raw strings: `serve_text(texts)` and `serve_text_pairs(text_a,
        text_b)`, each request computed only up to its longest text's length bucket (albert.data.buckets)."""

        model = float32_copy(self)
        if input_signature is None:
            input_signature = [{name: tf.TensorSpec([None] * rank, tf.int32, name=name)
                                for name, rank in self.serving_inputs.items()}]
        if format != "tf_saved_model":
            return keras.Model.export(model, filepath, format=format, verbose=verbose,
                                      input_signature=input_signature, **kwargs)
        archive = keras.export.ExportArchive()
        archive.track(model)
        archive.add_endpoint("serve", lambda inputs: model.serving_outputs(model(inputs, training=False)),
                             input_signature=input_signature)
        if getattr(model, "preprocessor", None) is not None and set(self.serving_inputs.values()) == {2}:
            # Raw strings too, each request computed only up to its longest text's length bucket.
            bounds = boundaries(model.preprocessor.seq_length)

            def on_text(texts):
                features = cut_to_bucket(model.features_from_text(texts), bounds)
                return model.serving_outputs(model(features, training=False))

            strings = tf.TensorSpec([None], tf.string)
            archive.track(model.preprocessor.tokenizer)  # its SentencePiece resources (not one of the model's layers)
            archive.add_endpoint("serve_text", on_text, input_signature=[strings])
            archive.add_endpoint("serve_text_pairs", lambda text_a, text_b: on_text((text_a, text_b)),
                                 input_signature=[strings, strings])
        filepath = os.fspath(filepath)
        with writing(filepath, "model.export", "filepath") as tmp:
            archive.write_out(tmp, verbose=False)
        if verbose is None or verbose:
            print(f"Saved artifact at '{filepath}' (float32; endpoint 'serve')")


@contextlib.contextmanager
def dtype_policy(policy: str):
    """Build layers under the Keras dtype policy `policy` inside the block; the global one is restored after."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(policy)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


def float32_copy(model):
    """`model` itself when every layer of it computes in float32; else the same model rebuilt under the float32
    policy, holding its weights (under mixed_bfloat16 / mixed_float16 the variables are float32 already: copied
    exactly) and its preprocessor. Every export computes in float32, whatever the training precision: LiteRT has no
    bf16 kernels, and a CPU without bf16 instructions runs a bf16 graph slowly."""
    if all(layer.compute_dtype == "float32" for layer in model._flatten_layers(include_self=True)):
        return model
    values = model.get_config()
    values.pop("preprocessor", None)  # the same preprocessor object is attached below: it holds no weights
    with dtype_policy("float32"):
        copy = type(model).from_config(values)
    copy.set_weights(model.get_weights())
    if getattr(model, "preprocessor", None) is not None:
        copy.preprocessor = model.preprocessor
    return copy


def register(cls):
    return keras.saving.register_keras_serializable(package=PACKAGE)(cls)
