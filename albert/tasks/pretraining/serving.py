"""export_to_tfhub.py's fill-mask serving SavedModel (OUT/fill_mask): raw texts holding `[MASK]` in, each mask's
top-k pieces out -- what `AlbertPretrainer.fill_mask` computes (albert.tasks.pretraining.fill_mask), computed in
float32 and tokenized in the graph (loading it needs TensorFlow and `import tensorflow_text`, nothing of this project).

`serving_default(text: [B] string)` gives the top `top_k` (the export's, 5) and `top_k(text, top_k: int32 scalar)`
any number of them. Outputs, M the most masks of a text in the batch and K the number asked for:
- `token_ids` [B,M,K] int32: the pieces' ids, most probable first (-1 where a text has fewer masks);
- `token_strs` [B,M,K] string: their words (the piece without SentencePiece's `▁`; "" as padding);
- `scores` [B,M,K] float32: softmax probabilities over the whole vocabulary (0 as padding);
- `mask_counts` [B] int32 and `mask_offsets` [B,M,2] int32: each mask's start and end in the text, in characters
  (Python's `text[start:end]`; -1 as padding);
- `errors` [B] string: "" for a text that was filled, else why it was not (no mask, more masks than the model was
  built for, longer than the export's seq_length, empty). Such a text gets no predictions (mask_counts 0) and the
  other texts of the batch are filled as usual: one bad text does not fail a batch that a server put together.

The computation is albert.tasks.pretraining.fill_mask.MaskFiller, the one `AlbertPretrainer.fill_mask` runs, so the
served pieces and scores are `fill_mask`'s (its model in float32).
"""

import tensorflow as tf

from albert.tasks.pretraining.fill_mask import MaskFiller
from albert.export.savedmodel import save, text_root
from albert.text.tokenization import FullTokenizer

DEFAULT_TOP_K = 5  # serving_default's number of predictions per mask (transformers' pipeline default)


def export_fill_mask(model, sp_model_file: str, do_lower_case: bool, seq_length: int, path: str,
                     top_k: int = DEFAULT_TOP_K) -> str:
    """The fill-mask serving SavedModel of an AlbertPretrainer at `path` (see the module's docstring); a text may
    hold at most `model.max_predictions_per_seq` masks and `seq_length` pieces with [CLS] and [SEP]."""
    tokenizer = FullTokenizer(None, do_lower_case, sp_model_file)
    pieces = tokenizer.convert_ids_to_tokens(range(len(tokenizer.vocab)))
    max_masks = int(model.max_predictions_per_seq)
    root, model = text_root(model, sp_model_file, do_lower_case)
    fill = MaskFiller(model, root.tokenizer, pieces, seq_length, max_masks, "the export's seq_length", sp_model_file)
    text_spec = tf.TensorSpec([None], tf.string, name="text")
    root.top_k = tf.function(fill, input_signature=[text_spec, tf.TensorSpec([], tf.int32, name="top_k")])
    # serving_default calls top_k's traced graph (one trace of the model, not two)
    root.serve = tf.function(lambda texts: root.top_k(texts, tf.constant(top_k, tf.int32)),
                             input_signature=[text_spec])
    root.sp_model_file = tf.saved_model.Asset(sp_model_file)
    return save(root, path, {"serving_default": root.serve,
                             "top_k": root.top_k})
