"""TF Hub-style SavedModels of a pretrained ALBERT (export_to_tfhub.py), TF2 convention:

- encoder: `obj(inputs, training=False)` with a dict of int32 [B,T] `input_word_ids`, `input_mask`,
  `input_type_ids` -> `pooled_output`, `sequence_output`, `encoder_outputs` (one per layer), `default`;
  `variables` / `trainable_variables` lists so that it fine-tunes (TFSMLayer, hub.KerasLayer, `HubLayer`); endpoints
  `serve` and `serve_train` (dict in, dict out) and the `serving_default` signature.
- preprocessor: `obj(strings)` -> the three encoder inputs at exactly the export's `seq_length` (TF Hub's contract:
  static shapes); `bucketed(strings)` -> the same cut to the batch's length bucket; `tokenize(strings)` -> ragged
  ids; `bert_pack_inputs([segment] or [a, b], seq_length)` (seq_length the export's default as a Python int, or
  any length as an int32 tensor). ALBERT's normalisation and SentencePiece with the digit-comma rule, in the graph
  (albert.text.graph_tokenizer): the ids equal `FullTokenizer`'s, pairs truncated by the original's rule.
- mlm: the encoder's call plus `masked_lm_positions` -> `mlm_logits` [B,P,V] and `sop_logits` [B,2].
- fill_mask: raw texts holding `[MASK]` -> each mask's top-k pieces, words and probabilities
  (albert.tasks.pretraining.serving).

Each computes in float32 whatever the model was trained in. Loading the preprocessor and fill_mask needs `import
tensorflow_text`; the others need only TensorFlow. The pretrained model's export (export_to_tfhub.py's four
SavedModels, export_checkpoints.py's release checkpoint) is albert.tasks.pretraining.tfhub.
"""

import keras
import tensorflow as tf

from albert.data.buckets import cut_to_bucket
from albert.data.features import boundaries
from albert.export.savedmodel import (HUB_INPUTS, encoder_inputs, hub_inputs, in_save_context, int_spec,
                                      root_with_variables, save)
from albert.model.preprocessor import DEFAULT_SEQ_LENGTH
from albert.model.serialization import float32_copy
from albert.text.graph_tokenizer import InGraphTokenizer


def _hub_outputs(outputs: dict) -> dict:
    return {"pooled_output": outputs["pooled_output"], "sequence_output": outputs["sequence_output"],
            "encoder_outputs": list(outputs["encoder_outputs"]), "default": outputs["pooled_output"]}


def export_encoder(encoder, path: str, assets: dict | None = None, mlm_model=None) -> str:
    """The encoder (or, with `mlm_model` an AlbertPretrainer, the MLM model) as a TF Hub–style SavedModel,
    computing in float32 (`float32_copy`)."""
    if mlm_model is not None:
        mlm_model = float32_copy(mlm_model)
        encoder = mlm_model.encoder
    else:
        encoder = float32_copy(encoder)
    model = mlm_model if mlm_model is not None else encoder
    root = root_with_variables(model)
    root.model = model
    spec = {k: int_spec(k) for k in HUB_INPUTS}
    if mlm_model is not None:
        spec["masked_lm_positions"] = int_spec("masked_lm_positions")

    def call(inputs, training=False):
        features = encoder_inputs(inputs)
        if mlm_model is None:
            return _hub_outputs(encoder(features, training=training))
        features["masked_lm_positions"] = inputs["masked_lm_positions"]
        outputs = mlm_model.with_hidden_states(features, training=training)
        return dict(_hub_outputs(outputs), mlm_logits=outputs["mlm_logits"], sop_logits=outputs["sop_logits"])

    root.__call__ = tf.function(call)
    with in_save_context():
        root.__call__.get_concrete_function(spec, training=False)
        root.__call__.get_concrete_function(spec, training=True)
    def serve(inputs):
        return call(inputs, training=False)

    def serve_train(inputs):
        return call(inputs, training=True)

    root.serve = tf.function(serve, input_signature=[spec])
    root.serve_train = tf.function(serve_train, input_signature=[spec])

    def signature(inputs):
        return encoder.serving_outputs(call(inputs, training=False))

    serving = tf.function(signature, input_signature=[spec])
    return save(root, path, {"serving_default": serving}, assets)


def export_preprocessor(sp_model_file: str, do_lower_case: bool, path: str, seq_length: int = DEFAULT_SEQ_LENGTH,
                        length_boundaries: tuple | None = None) -> str:
    """Strings -> encoder inputs, in the graph; the SentencePiece model travels in assets/. The default call packs
    to exactly `seq_length`, as TF Hub's BERT-family preprocessors do (static shapes for XLA / TPUs, and batches
    of one width: `dataset.batch(n).map(preprocessor).unbatch().batch(m)` works); `bucketed(strings)` packs to the
    smallest length bucket holding the batch's longest text, at most `seq_length` (`length_boundaries`, default
    albert.data.features.boundaries(seq_length)), so the encoder computes only that; `bert_pack_inputs(segments,
    seq_length)` packs to exactly the length given."""
    bounds = length_boundaries or boundaries(seq_length)
    with open(sp_model_file, "rb") as f:
        proto = f.read()
    root = tf.__internal__.tracking.AutoTrackable()
    root.tokenizer = InGraphTokenizer(proto, do_lower_case)
    strings = tf.TensorSpec([None], tf.string, name="strings")
    ragged = tf.RaggedTensorSpec([None, None], tf.int32, row_splits_dtype=tf.int64)

    def packed(texts):
        return root.tokenizer.pack([root.tokenizer.tokenize(texts)], seq_length)

    def preprocess(texts):
        return hub_inputs(packed(texts))

    def bucketed(texts):
        return hub_inputs(cut_to_bucket(packed(texts), bounds))

    def bert_pack_inputs(segments, seq_length):
        return hub_inputs(root.tokenizer.pack(segments, seq_length))

    root.__call__ = tf.function(preprocess, input_signature=[strings])
    root.bucketed = tf.function(bucketed, input_signature=[strings])
    root.tokenize = tf.function(root.tokenizer.tokenize, input_signature=[strings])
    root.bert_pack_inputs = tf.function(bert_pack_inputs)
    # A restored function matches a Python int only to a length traced as that int: the export's seq_length is;
    # any other length is passed as an int32 tensor (each traced int costs seconds of export time).
    with in_save_context():  # traced as the save traces, so the save does not trace them again
        for count in (1, 2):
            root.bert_pack_inputs.get_concrete_function([ragged] * count, tf.TensorSpec([], tf.int32))
            root.bert_pack_inputs.get_concrete_function([ragged] * count, seq_length)
    root.sp_model_file = tf.saved_model.Asset(sp_model_file)
    root.do_lower_case = tf.Variable(do_lower_case, trainable=False, name="do_lower_case")
    return save(root, path, {"serving_default": root.__call__})


@keras.saving.register_keras_serializable(package="albert")
class HubLayer(keras.layers.TFSMLayer):
    """`keras.layers.TFSMLayer` for a TF Hub-style SavedModel (this project's encoder export by default endpoints)
    that fine-tunes with any optimizer. Keras 3.15 names its copies of the SavedModel's variables `<name>:0`,
    and optimizers with slots (Adam, AdamW, LAMB) refuse those names (`'..._word_embeddings:0_momentum' is not a
    valid scope name`); here the `:0` suffix is dropped, nothing else changes."""

    def __init__(self, filepath, call_endpoint="serve", call_training_endpoint="serve_train", trainable=True,
                 **kwargs):
        super().__init__(filepath, call_endpoint=call_endpoint, call_training_endpoint=call_training_endpoint,
                         trainable=trainable, **kwargs)

    def _add_existing_weight(self, weight):
        self._track_variable(keras.Variable(initializer=weight, trainable=weight.trainable, dtype=weight.dtype,
                                            shape=weight.shape,
                                            name=weight.name.rsplit(":", 1)[0].replace("/", "_")))
