"""`AlbertPretrainer`: the encoder with the masked-LM and sentence-order heads; `fill_mask` on raw texts.
"""

import numpy as np
from keras import ops

from albert.config import AlbertConfig
from albert.ground import arguments
from albert.model import heads
from albert.model.encoder import AlbertEncoder
from albert.model.serialization import register
from albert.model.task_model import TaskModel
from albert.tasks.pretraining.fill_mask import masked_inputs, MAX_MASKS, predictions
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
        several masks, one such list per mask; a list of texts gives a list of those
        (albert.tasks.pretraining.fill_mask)."""
        where = f"{type(self).__name__}.fill_mask"
        texts, single = arguments.texts(where, "texts", texts)
        batch_size = arguments.whole(where, "batch_size", batch_size, 1)
        self._require_preprocessor()
        p = self.preprocessor
        tokenizer = FullTokenizer(None, p.do_lower_case, p.spm_model_file)
        top_k = arguments.whole(where, "top_k", top_k, 1, maximum=len(tokenizer.vocab))
        if not texts:
            return []
        masked = masked_inputs(texts, tokenizer, p.seq_length, self.max_predictions_per_seq, top_k)
        logits = [np.asarray(self({k: v[start:start + batch_size] for k, v in masked.features.items()},
                                  training=False)["mlm_logits"]) for start in range(0, len(texts), batch_size)]
        answers = predictions(texts, masked, np.concatenate(logits), top_k, tokenizer)
        return answers[0] if single else answers
