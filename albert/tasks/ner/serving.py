"""run_ner.py's serving SavedModel: raw text in, one tag per word out, computed in float32 and tokenized in the graph
(loading it needs `import tensorflow_text`).

`serving_default(text: [B] string)` -> `tags` [B, W] string (padded with ""), `word_counts` [B] int32 and `words`
[B, W] string: each text is split into words on whitespace and the words tagged by albert.tasks.ner.tagging (the
computation `AlbertTokenClassifier.predict` runs on lists of words, on the model's float32 copy), so the served tags
are run_ner.py's.
"""

import json
import os

import tensorflow as tf

from albert.data.features import boundaries
from albert.export.savedmodel import save, text_root
from albert.tasks.ner.tagging import tagger
from albert.tasks.ner.windows import unknown_id
from albert.text.tokenization import FullTokenizer


def export_tagger(model, sp_model_file: str, do_lower_case: bool, labels: list, seq_length: int, doc_stride: int,
                  path: str) -> str:
    """The serving SavedModel of a fine-tuned AlbertTokenClassifier at `path` (see the module's docstring)."""
    unk = unknown_id(FullTokenizer(None, do_lower_case, sp_model_file))
    root, model = text_root(model, sp_model_file, do_lower_case)
    tag_words = tagger(model, root.tokenizer, unk, seq_length, doc_stride, boundaries(seq_length))

    def tag(text):
        words = tf.strings.split(text)  # [B, (W)]
        tags = tf.gather(tf.constant(labels), tag_words(words).flat_values)
        return {"tags": words.with_flat_values(tags).to_tensor(""), "words": words.to_tensor(""),
                "word_counts": tf.cast(words.row_lengths(), tf.int32)}

    root.serve = tf.function(tag, input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    root.sp_model_file = tf.saved_model.Asset(sp_model_file)
    return save(root, path, {"serving_default": root.serve})


def tagger_metadata(labels: list, scheme: str, seq_length: int, doc_stride: int, do_lower_case: bool,
                    sp_model_file: str) -> dict:
    """What a serving process needs beside the tagger's model.onnx (packed ids -> logits [B, T, tags]) to tag
    text: the tag of each logit (JSON), the scheme, the window length and stride, the case folding, the
    SentencePiece model in the export's assets."""
    return {"task": "ner", "labels": json.dumps(labels), "tag_scheme": scheme, "max_seq_length": str(seq_length),
            "doc_stride": str(doc_stride), "do_lower_case": str(do_lower_case).lower(),
            "sentencepiece_model": f"assets/{os.path.basename(sp_model_file)}"}
