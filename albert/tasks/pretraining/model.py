"""`AlbertPretrainer`: the encoder with the masked-LM and sentence-order heads; `fill_mask` on raw texts.
"""

import numpy as np
import tensorflow as tf
from keras import ops

from albert.config import AlbertConfig
from albert.ground import arguments
from albert.ground.errors import AlbertError, shown
from albert.model import heads
from albert.model.encoder import AlbertEncoder
from albert.model.serialization import register
from albert.model.task_model import TaskModel
from albert.tasks.pretraining.fill_mask import as_predictions, MaskFiller, MAX_MASKS
from albert.text.tokenization import FullTokenizer


@register
class AlbertPretrainer(TaskModel):
    """Encoder + masked-LM + sentence-order heads. Inputs add `masked_lm_positions` [B,P]; outputs
    {`mlm_logits` [B,P,V], `sop_logits` [B,2]} (float32); `with_hidden_states` adds the encoder's outputs."""

    checkpoint_heads = ("mlm", "sop")
    serving_inputs = {"input_ids": 2, "input_mask": 2, "segment_ids": 2, "masked_lm_positions": 2}

    def __init__(self, config: AlbertConfig, name="albert_pretrainer", **kwargs):
        super().__init__(name=name, **kwargs)
        self.config = config
        self.encoder = AlbertEncoder(config)
        self.mlm_head = heads.MaskedLMHead(config, name="predictions")
        self.sop_head = heads.SentenceOrderHead(config, name="seq_relationship")
        self.build()

    def call(self, inputs, training=None):
        outputs = self.with_hidden_states(inputs, training=training)
        return {"mlm_logits": outputs["mlm_logits"], "sop_logits": outputs["sop_logits"]}

    def features_from_text(self, texts) -> dict:
        """Strings -> features with every position as a masked-LM position (`mlm_logits` [B,T,V])."""
        features = dict(super().features_from_text(texts))
        ids = features["input_ids"]
        features["masked_lm_positions"] = ops.broadcast_to(ops.arange(ops.shape(ids)[1], dtype="int32"),
                                                           ops.shape(ids))
        return features

    def with_hidden_states(self, inputs, training=None) -> dict:
        """The encoder's outputs (sequence, pooled, every block's, embeddings) and the two heads' logits."""
        inputs = self._features(inputs)
        outputs = dict(self.encoder(inputs, training=training))
        outputs["mlm_logits"] = self.mlm_head(outputs["sequence_output"], inputs["masked_lm_positions"],
                                              self.encoder.embeddings.word_embeddings)
        outputs["sop_logits"] = self.sop_head(outputs["pooled_output"])
        return outputs

    max_predictions_per_seq = MAX_MASKS  # the most masks fill_mask takes in one text (the pretraining data's)

    def fill_mask(self, texts, top_k: int = 5, batch_size: int = 32):
        """The words the masked-LM head puts at each `[MASK]` of raw texts, as transformers' `pipeline("fill-mask")`:
        for a text with one mask, a list of `top_k` dicts `{"score", "token", "token_str", "sequence"}` (softmax
        probability over the vocabulary, the piece's id, its word, the text with the mask filled); for a text with
        several masks, one such list per mask; a list of texts gives a list of those. The computation is the
        fill-mask SavedModel's (albert.tasks.pretraining.fill_mask.MaskFiller), on this model as it is."""
        where = f"{type(self).__name__}.fill_mask"
        texts, single = arguments.texts(where, "texts", texts)
        batch_size = arguments.whole(where, "batch_size", batch_size, 1)
        self._require_preprocessor()
        fill, vocabulary = self._mask_filler()
        top_k = arguments.whole(where, "top_k", top_k, 1, maximum=vocabulary)
        if not texts:
            return []
        outputs = []
        for start in range(0, len(texts), batch_size):
            chunk = texts[start:start + batch_size]
            found = {k: v.numpy() for k, v in fill(tf.constant(chunk), tf.constant(top_k, tf.int32)).items()}
            for number, error in enumerate(found["errors"], start + 1):
                if error:
                    raise AlbertError(f"{where}: text {number} ({shown(texts[number - 1])}): {error.decode()}")
            found["token_strs"] = np.char.decode(found["token_strs"].astype(bytes), "utf-8")
            outputs += as_predictions(chunk, found)
        return outputs[0] if single else outputs

    def _mask_filler(self) -> tuple:
        """(MaskFiller of this model and its preprocessor as a tf.function traced once, the vocabulary's size),
        kept per preprocessor and max_predictions_per_seq (out of Keras' attribute tracking)."""
        p, most = self.preprocessor, int(self.max_predictions_per_seq)
        key = (id(p), p.seq_length, most)
        kept = self.__dict__.get("_fill_mask")
        if kept is None or kept[0] != key:
            tokenizer = FullTokenizer(None, p.do_lower_case, p.spm_model_file)
            pieces = tokenizer.convert_ids_to_tokens(range(len(tokenizer.vocab)))
            filler = MaskFiller(self, p.tokenizer, pieces, p.seq_length, most, "the preprocessor's seq_length",
                                f"{type(self).__name__}.fill_mask")
            step = tf.function(filler, input_signature=[tf.TensorSpec([None], tf.string),
                                                        tf.TensorSpec([], tf.int32)])
            kept = (key, step, len(pieces))
            object.__setattr__(self, "_fill_mask", kept)
        return kept[1], kept[2]
