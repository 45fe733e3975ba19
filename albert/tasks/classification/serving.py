"""The classifier's serving SavedModel (run_classifier.py --export_dir): raw strings (`text_a`, and `text_b` for pair
tasks) -> `probabilities`, `predictions` (label strings; the score for regression), `logits`, computing in float32;
tokenized in the graph (loading it needs `import tensorflow_text`); `assets/labels.json` names each probability (a
JSON list). `classifier_metadata`: what model.onnx carries to run on text.
"""

import json
import os
import tempfile

import tensorflow as tf

from albert.data.buckets import cut_to_bucket
from albert.data.features import boundaries
from albert.export.savedmodel import save, text_root

LABELS_ASSET = "labels.json"  # the classifier's label names; tools/classify.py reads assets/labels.json (no albert)


def export_classifier(model, sp_model_file: str, do_lower_case: bool, labels: list | None, pair: bool,
                      seq_length: int, path: str, length_boundaries: tuple | None = None) -> str:
    """A fine-tuned classifier that takes raw strings: `text_a` (and `text_b` for a pair task) -> `probabilities`,
    `predictions` (label strings; the regression score for one output) and `logits`; float32. Each request is
    packed to `seq_length` and computed only up to its longest text's length bucket (`length_boundaries`, default
    albert.data.features.boundaries(seq_length); `(seq_length,)`: the whole length)."""
    bounds = length_boundaries or boundaries(seq_length)
    root, model = text_root(model, sp_model_file, do_lower_case)
    names = ["text_a", "text_b"] if pair else ["text_a"]
    spec = {name: tf.TensorSpec([None], tf.string, name=name) for name in names}

    def classify(inputs):
        segments = [root.tokenizer.tokenize(inputs[name]) for name in names]
        features = cut_to_bucket(root.tokenizer.pack(segments, seq_length), bounds)
        logits = model(features, training=False)
        if not labels:
            return {"predictions": logits[:, 0], "logits": logits}
        return {"probabilities": tf.nn.softmax(logits, -1), "logits": logits,
                "predictions": tf.gather(tf.constant(labels), tf.argmax(logits, -1))}

    root.serve = tf.function(classify, input_signature=[spec])
    root.sp_model_file = tf.saved_model.Asset(sp_model_file)
    with tempfile.TemporaryDirectory() as scratch:
        if labels:  # the label of each probability, for a reader of the export (tools/classify.py)
            labels_file = os.path.join(scratch, LABELS_ASSET)
            with open(labels_file, "w", encoding="utf-8") as f:
                json.dump([str(label) for label in labels], f, ensure_ascii=False)
            root.labels_file = tf.saved_model.Asset(labels_file)
        return save(root, path, {"serving_default": root.serve})


def classifier_metadata(task_name: str, labels: list | None, pair: bool, seq_length: int, do_lower_case: bool,
                        sp_model_file: str) -> dict:
    """What a serving process needs beside the classifier's model.onnx to run it on text, as the file's metadata
    (albert.export.onnx): the label of each logit (JSON; no `labels` for a regression score), the texts, the
    packing length, the case folding and the SentencePiece model export_classifier put in the SavedModel's assets
    (a path relative to the export directory)."""
    metadata = {"task": task_name, "texts": "text_a,text_b" if pair else "text_a",
                "max_seq_length": str(seq_length), "do_lower_case": str(do_lower_case).lower(),
                "sentencepiece_model": f"assets/{os.path.basename(sp_model_file)}"}
    if labels:
        metadata["labels"] = json.dumps(labels)
    return metadata
