"""What every SavedModel export here shares: the TF Hub input names, the int32 input specs, a root object that
carries the model's variables (so TFSMLayer / hub.KerasLayer fine-tune it), writing under a temporary name
renamed into place (nothing half-written is left), and the one-line graph assertions with which the raw-text
serving models refuse a bad request (`refuse_unless`). albert.export.hub writes the TF Hub-style encoder,
preprocessor and MLM models; albert.export.serving the fine-tuned tasks' serving models."""

import os
import shutil

import tensorflow as tf

from albert.ground.outputs import writing
from albert.model.serialization import float32_copy
from albert.text.graph_tokenizer import InGraphTokenizer

HUB_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")
PER_POSITION = ("start_logits", "end_logits", "sequence_output")  # outputs whose second axis is the sequence


def encoder_inputs(inputs: dict) -> dict:
    """TF Hub's names of the packed inputs (what an export's users pass) -> the original's (what the model reads)."""
    return {"input_ids": inputs["input_word_ids"], "input_mask": inputs["input_mask"],
            "segment_ids": inputs["input_type_ids"]}


def hub_inputs(features: dict) -> dict:
    """The original's names of the packed inputs -> TF Hub's, where an export hands them to its users (the
    preprocessor SavedModel's outputs)."""
    return {"input_word_ids": features["input_ids"], "input_mask": features["input_mask"],
            "input_type_ids": features["segment_ids"]}


def named_outputs(model, output_names=None, input_map=None):
    """The packed endpoint of every export (SavedModel, LiteRT, ONNX): inputs -> {name: output} of `model`
    (`output_names`: those kept, default all; a model returning one tensor names it `logits`; `input_map(inputs)`:
    the model's features from the endpoint's inputs)."""

    def serve(inputs):
        outputs = model(input_map(dict(inputs)) if input_map else dict(inputs), training=False)
        if not isinstance(outputs, dict):
            outputs = {"logits": outputs}
        return {name: outputs[name] for name in (output_names or sorted(outputs))}

    return serve


def int_spec(name: str, rank: int = 2):
    return tf.TensorSpec([None] * rank, tf.int32, name=name)


def refuse_unless(condition, message: str, *values):
    """A graph assertion whose failure reads as one line: `message` formatted with `values` ({} placeholders)."""
    return tf.debugging.Assert(condition, [tf.strings.format(message, values) if values else tf.constant(message)])


def first_row(flags):
    """The index of the first True of a [N] bool tensor (-1 when none)."""
    return tf.concat([tf.where(flags)[:, 0], [-1]], 0)[0]


def root_with_variables(layer):
    root = tf.__internal__.tracking.AutoTrackable()
    root.variables = list(layer.variables)
    root.trainable_variables = list(layer.trainable_variables)
    root.non_trainable_variables = list(layer.non_trainable_variables)
    root.regularization_losses = []
    return root


def text_root(model, sp_model_file: str, do_lower_case: bool):
    """(root, model): the root object of a raw-text serving SavedModel, holding the float32 copy of `model`
    (albert.model.serialization.float32_copy) with its variables, as `root.model`, and the in-graph tokenizer of the
    SentencePiece model file (its bytes go into the graph), as `root.tokenizer`."""
    with open(sp_model_file, "rb") as f:
        proto = f.read()
    model = float32_copy(model)
    root = root_with_variables(model)
    root.model = model
    root.tokenizer = InGraphTokenizer(proto, do_lower_case)
    return root, model


def in_save_context():
    """A context in which a tf.function traced ahead of `save` (a polymorphic endpoint's variants) is traced as the
    save traces it: TensorFlow keys its traces by whether a save is in progress, and retraces the others while
    saving (each trace of a tokenizing endpoint costs seconds). Signatures are passed to `save` as the tf.functions
    themselves for the same reason."""
    from tensorflow.python.saved_model import save_context, save_options

    return save_context.save_context(save_options.SaveOptions())


def save(root, path: str, signatures: dict | None, assets: dict | None = None):
    """Save under a temporary name next to `path`, copy assets, then rename into place (albert.ground.outputs: never
    over a directory holding other files; inside an export being written, straight into it)."""
    with writing(path, "a SavedModel export", "the export directory") as tmp:
        tf.saved_model.save(root, tmp, signatures=signatures)
        for name, source in (assets or {}).items():
            shutil.copyfile(source, os.path.join(tmp, "assets", name))
    return path
