"""SavedModels in the TF Hub TF2 convention, and serving models of fine-tuned tasks.

- encoder: `obj(inputs, training=False)` with a dict of int32 [B,T] `input_word_ids`, `input_mask`,
  `input_type_ids` -> `pooled_output`, `sequence_output`, `encoder_outputs` (one per layer), `default`;
  `variables` / `trainable_variables` lists so that it fine-tunes (TFSMLayer, hub.KerasLayer); endpoints `serve`
  and `serve_train` (dict in, dict out) and the `serving_default` signature.
- preprocessor: `obj(strings)` -> the three encoder inputs at length 128; `tokenize(strings)` -> ragged ids;
  `bert_pack_inputs([segment] or [a, b], seq_length)` (seq_length the export's default as a Python int, or any
  length as an int32 tensor). ALBERT's normalisation (whitespace collapse, NFKD, accents
  dropped, lower case) and SentencePiece with the digit-comma rule, in the graph (tensorflow-text): the ids equal
  `FullTokenizer`'s, and pairs are truncated by the original's rule (the longer one loses its last piece first).
- mlm: the encoder's call plus `masked_lm_positions` -> `mlm_logits` [B,P,V] and `sop_logits` [B,2].
- classifier serving: raw strings (`text_a`, and `text_b` for pair tasks) -> `probabilities`, `predictions`
  (label strings; the score for regression), `logits`. SQuAD serving: packed inputs -> the head's logits.

Loading any of them needs `import tensorflow_text` only when it tokenizes (preprocessor, classifier serving).
Exports are written to a temporary directory and renamed into place: nothing half-written is left.
"""

import os
import shutil

import keras
import tensorflow as tf

from albert.atomic import replacing_directory
from albert.errors import AlbertError
from albert.preprocessing import InGraphTokenizer  # noqa: F401  (also albert.export.InGraphTokenizer)
from albert.serialization import float32_copy

HUB_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")
DEFAULT_SEQ_LENGTH = 128


def encoder_inputs(inputs: dict) -> dict:
    return {"input_ids": inputs["input_word_ids"], "input_mask": inputs["input_mask"],
            "segment_ids": inputs["input_type_ids"]}


def _hub_outputs(outputs: dict) -> dict:
    return {"pooled_output": outputs["pooled_output"], "sequence_output": outputs["sequence_output"],
            "encoder_outputs": list(outputs["encoder_outputs"]), "default": outputs["pooled_output"]}


def _int_spec(name: str, rank: int = 2):
    return tf.TensorSpec([None] * rank, tf.int32, name=name)


def _root_with_variables(layer):
    root = tf.__internal__.tracking.AutoTrackable()
    root.variables = list(layer.variables)
    root.trainable_variables = list(layer.trainable_variables)
    root.non_trainable_variables = list(layer.non_trainable_variables)
    root.regularization_losses = []
    return root


def _save(root, path: str, signatures: dict | None, assets: dict | None = None):
    """Save under a temporary name next to `path`, copy assets, then rename into place."""
    os.makedirs(os.path.dirname(os.path.abspath(path.rstrip("/"))), exist_ok=True)
    with replacing_directory(path) as tmp:
        tf.saved_model.save(root, tmp, signatures=signatures)
        for name, source in (assets or {}).items():
            shutil.copyfile(source, os.path.join(tmp, "assets", name))
    return path


def export_encoder(encoder, path: str, assets: dict | None = None, mlm_model=None) -> str:
    """The encoder (or, with `mlm_model` an AlbertPretrainer, the MLM model) as a TF Hub–style SavedModel,
    computing in float32 (`float32_copy`)."""
    if mlm_model is not None:
        mlm_model = float32_copy(mlm_model)
        encoder = mlm_model.encoder
    else:
        encoder = float32_copy(encoder)
    model = mlm_model if mlm_model is not None else encoder
    root = _root_with_variables(model)
    root.model = model
    spec = {k: _int_spec(k) for k in HUB_INPUTS}
    if mlm_model is not None:
        spec["masked_lm_positions"] = _int_spec("masked_lm_positions")

    def call(inputs, training=False):
        features = encoder_inputs(inputs)
        if mlm_model is None:
            return _hub_outputs(encoder(features, training=training))
        features["masked_lm_positions"] = inputs["masked_lm_positions"]
        outputs = mlm_model.with_hidden_states(features, training=training)
        return dict(_hub_outputs(outputs), mlm_logits=outputs["mlm_logits"], sop_logits=outputs["sop_logits"])

    root.__call__ = tf.function(call)
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
    return _save(root, path, {"serving_default": serving}, assets)


def export_preprocessor(sp_model_file: str, do_lower_case: bool, path: str,
                        seq_length: int = DEFAULT_SEQ_LENGTH) -> str:
    """Strings -> encoder inputs, in the graph; the SentencePiece model travels in assets/."""
    with open(sp_model_file, "rb") as f:
        proto = f.read()
    root = tf.__internal__.tracking.AutoTrackable()
    root.tokenizer = InGraphTokenizer(proto, do_lower_case)
    strings = tf.TensorSpec([None], tf.string, name="strings")
    ragged = tf.RaggedTensorSpec([None, None], tf.int32, row_splits_dtype=tf.int64)
    def preprocess(texts):
        return root.tokenizer.pack([root.tokenizer.tokenize(texts)], seq_length)

    root.__call__ = tf.function(preprocess, input_signature=[strings])
    root.tokenize = tf.function(root.tokenizer.tokenize, input_signature=[strings])
    root.bert_pack_inputs = tf.function(root.tokenizer.pack)
    # A restored function matches a Python int only to a length traced as that int: the export's seq_length is;
    # any other length is passed as an int32 tensor (each traced int costs seconds of export time).
    for count in (1, 2):
        root.bert_pack_inputs.get_concrete_function([ragged] * count, tf.TensorSpec([], tf.int32))
        root.bert_pack_inputs.get_concrete_function([ragged] * count, seq_length)
    root.sp_model_file = tf.saved_model.Asset(sp_model_file)
    root.do_lower_case = tf.Variable(do_lower_case, trainable=False, name="do_lower_case")
    return _save(root, path, {"serving_default": root.__call__.get_concrete_function()})


def export_classifier(model, sp_model_file: str, do_lower_case: bool, labels: list | None, pair: bool,
                      seq_length: int, path: str) -> str:
    """A fine-tuned classifier that takes raw strings: `text_a` (and `text_b` for a pair task) -> `probabilities`,
    `predictions` (label strings; the regression score for one output) and `logits`; float32."""
    with open(sp_model_file, "rb") as f:
        proto = f.read()
    model = float32_copy(model)
    root = _root_with_variables(model)
    root.model = model
    root.tokenizer = InGraphTokenizer(proto, do_lower_case)
    names = ["text_a", "text_b"] if pair else ["text_a"]
    spec = {name: tf.TensorSpec([None], tf.string, name=name) for name in names}

    def classify(inputs):
        segments = [root.tokenizer.tokenize(inputs[name]) for name in names]
        logits = model(encoder_inputs(root.tokenizer.pack(segments, seq_length)), training=False)
        if not labels:
            return {"predictions": logits[:, 0], "logits": logits}
        return {"probabilities": tf.nn.softmax(logits, -1), "logits": logits,
                "predictions": tf.gather(tf.constant(labels), tf.argmax(logits, -1))}

    root.serve = tf.function(classify, input_signature=[spec])
    root.sp_model_file = tf.saved_model.Asset(sp_model_file)
    return _save(root, path, {"serving_default": root.serve.get_concrete_function()})


def export_squad(model, version_2: bool, path: str, seq_length: int, quantization: str = "none") -> dict:
    """A fine-tuned SQuAD model over packed inputs (`input_ids`, `input_mask`, `segment_ids`, and `p_mask` for
    2.0) -> `start_logits`, `end_logits` (1.1) or the beam outputs and `cls_logits` (2.0); with its model.tflite."""
    from albert.tasks.squad import model_inputs, prediction_outputs

    return export_packed(model, model_inputs(version_2), prediction_outputs(version_2), path, seq_length,
                         quantization)


def export_packed(model, input_names, output_names, path: str, seq_length: int, quantization: str = "none",
                  rows_per_example: int | None = None) -> dict:
    """A task model over packed int32 features as a serving SavedModel (`serving_default`: any batch and length)
    and, inside it, `model.tflite` (LiteRT, builtin ops, weights frozen) at `seq_length`. `output_names`: the
    outputs kept (None: a model returning one tensor, named `logits`). Both compute in float32. Returns
    albert.litert's report."""
    from albert.litert import export_tflite

    model = float32_copy(model)
    spec = {k: _int_spec(k, 3 if rows_per_example else 2) for k in input_names}
    root = _root_with_variables(model)
    root.model = model

    def serve(inputs):
        outputs = model(dict(inputs), training=False)
        if not isinstance(outputs, dict):
            return {"logits": outputs}
        return {name: outputs[name] for name in output_names}

    root.serve = tf.function(serve, input_signature=[spec])
    _save(root, path, {"serving_default": root.serve.get_concrete_function()})
    return export_tflite(model, os.path.join(path, "model.tflite"), input_names, seq_length, output_names,
                         quantization, rows_per_example)


# ----------------------------------------------------------------------------------- a released model directory
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


def load_pretrainer(files: dict):
    """The AlbertPretrainer (float32) of a model directory (`albert.weights.model_directory_files`: release
    layout, Hugging Face or keras-hub), every weight -- MLM and SOP heads included -- read from its weights; the
    config must match the SentencePiece model."""
    import keras

    from albert import AlbertConfig, AlbertPretrainer
    from albert.weights import check_vocabulary, load_weights

    config = AlbertConfig.from_json_file(files["config"])
    check_vocabulary(files, config)
    keras.mixed_precision.set_global_policy("float32")
    model = AlbertPretrainer(config)
    path = files["checkpoint"]
    try:
        report = load_weights(model, path)
    except AlbertError as e:
        if files["format"] != "ours":
            raise
        raise AlbertError(f"{path}: does not hold this pretraining model ({str(e)[:160]}); use the "
                          "albert_config.json it was trained with and a pretraining checkpoint") from None
    if report.missing:
        raise AlbertError(f"{path}: lacks {len(report.missing)} variables of the pretraining model (first: "
                          f"{report.missing[0]}); export a pretraining checkpoint, not a fine-tuned one (Hugging Face: "
                          "AlbertForPreTraining)")
    return model, config

