"""run_race.py's serving SavedModel on raw text, computed in float32 and tokenized in the graph (loading it needs
`import tensorflow_text`).

`serving_default(article: [B] string, question: [B] string, options: [B, 4] string)` -> `probabilities` [B, 4]
float32, `choice` [B] int32 (the chosen option's index, 0-3) and `logits` [B, 4]: albert.tasks.race.choosing, the
computation `AlbertMultipleChoice.choose` runs, on the model's float32 copy. Each option is packed as run_race.py packs
it; a request is computed up to its longest row's length bucket.

Bad requests are refused by the graph with one line (`assertion failed: [options: ...]`, an InvalidArgumentError;
TensorFlow Serving answers it as a 400): inputs of different batch sizes, options that are not 4 per question, an
empty option (a question with fewer options, padded with ""), an empty article.
"""

import tensorflow as tf

from albert.data.features import boundaries
from albert.export.savedmodel import save, text_root
from albert.tasks.race.choosing import chooser


def export_race_text(model, sp_model_file: str, do_lower_case: bool, seq_length: int, max_qa_length: int,
                     path: str, length_boundaries: tuple | None = None) -> str:
    """The raw-text serving SavedModel of a fine-tuned AlbertMultipleChoice at `path` (see the module's docstring);
    `length_boundaries` as albert.tasks.classification.serving.export_classifier's."""
    root, model = text_root(model, sp_model_file, do_lower_case)
    choose = chooser(model, root.tokenizer, seq_length, max_qa_length, length_boundaries or boundaries(seq_length))
    root.serve = tf.function(choose, input_signature=[tf.TensorSpec([None], tf.string, name="article"),
                                                      tf.TensorSpec([None], tf.string, name="question"),
                                                      tf.TensorSpec([None, None], tf.string, name="options")])
    root.sp_model_file = tf.saved_model.Asset(sp_model_file)
    return save(root, path, {"serving_default": root.serve})
