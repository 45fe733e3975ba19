"""Keras models made of the encoder and a head: pretraining (MLM + SOP) and the fine-tuning tasks.

Each model keeps its encoder as `.encoder` and its heads under fixed attribute names, which the checkpoint name
table (`albert/weights/original.py`) uses; `checkpoint_heads` says which head tables apply. A task model's output is its
task output only (the classifier's logits, SQuAD's start/end logits, ...), so `compile`/`fit`/`predict` work with
stock Keras losses and metrics and `predict` returns nothing else; the hidden states are `model.encoder(inputs)`.
"""

import keras
import tensorflow as tf
from keras import ops

from albert.config import AlbertConfig
from albert.data.features import PACKED_INPUTS
from albert.model import heads
from albert.model.encoder import AlbertEncoder
from albert.model.from_pretrained import FromPretrained
from albert.model.serialization import ConfigSerializable, register
from albert.model.text_inputs import TextInputs


class _EncoderWithHeads(FromPretrained, TextInputs, ConfigSerializable, keras.Model):
    """Builds every head as soon as the model is made, so weights exist before the first call (for checkpoint
    loading and parameter counts)."""

    def build(self, input_shape=None):
        for name in ("mlm_head", "sop_head", "classifier_head", "squad_head", "choice_head", "token_head"):
            if hasattr(self, name):
                getattr(self, name).build()


@register
class AlbertPretrainer(_EncoderWithHeads):
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


@register
class AlbertClassifier(_EncoderWithHeads):
    """GLUE classification (num_labels > 1) or regression (num_labels == 1, STS-B): the logits [B,num_labels]
    (float32)."""

    checkpoint_heads = ("classifier",)
    config_arguments = ("num_labels", "dropout_prob")
    cuts_batches = True  # fit / evaluate / predict compute only real tokens (albert.model.text_inputs)

    def __init__(self, config: AlbertConfig, num_labels: int, dropout_prob: float = 0.1,
                 name="albert_classifier", **kwargs):
        super().__init__(name=name, **kwargs)
        self.config, self.num_labels, self.dropout_prob = config, num_labels, dropout_prob
        self.encoder = AlbertEncoder(config)
        self.classifier_head = heads.ClassificationHead(config, num_labels, dropout_prob, name="classifier")
        self.build()

    def call(self, inputs, training=None):
        inputs = self._features(inputs)
        return self.classifier_head(self.encoder(inputs, training=training, pooled_only=True)["pooled_output"],
                                    training=training)


@register
class AlbertTokenClassifier(_EncoderWithHeads):
    """Token classification (NER, run_ner.py): the logits [B,T,num_labels] (float32), one row per position; a word
    is read at its first piece (albert.tasks.token_features)."""

    checkpoint_heads = ("token",)
    config_arguments = ("num_labels", "dropout_prob")

    def __init__(self, config: AlbertConfig, num_labels: int, dropout_prob: float = 0.1,
                 name="albert_token_classifier", **kwargs):
        super().__init__(name=name, **kwargs)
        self.config, self.num_labels, self.dropout_prob = config, num_labels, dropout_prob
        self.encoder = AlbertEncoder(config)
        self.token_head = heads.TokenClassificationHead(config, num_labels, dropout_prob, name="token_classifier")
        self.build()

    def call(self, inputs, training=None):
        inputs = self._features(inputs)
        return self.token_head(self.encoder(inputs, training=training)["sequence_output"], training=training)


@register
class AlbertSquadV1(_EncoderWithHeads):
    """SQuAD v1.1 span model: {`start_logits`, `end_logits`} [B,T] (float32)."""

    checkpoint_heads = ("squad_v1",)

    def __init__(self, config: AlbertConfig, name="albert_squad_v1", **kwargs):
        super().__init__(name=name, **kwargs)
        self.config = config
        self.encoder = AlbertEncoder(config)
        self.squad_head = heads.SquadV1Head(config, name="squad")
        self.build()

    def call(self, inputs, training=None):
        inputs = self._features(inputs)
        return dict(self.squad_head(self.encoder(inputs, training=training)["sequence_output"], training=training))


@register
class AlbertSquadV2(_EncoderWithHeads):
    """SQuAD 2.0 with the original XLNet-style head. Inputs add `p_mask` [B,T] and, for the training outputs,
    `start_positions` [B]; see `heads.SquadV2Head` for the outputs of each mode."""

    checkpoint_heads = ("squad_v2",)
    config_arguments = ("start_n_top", "end_n_top", "dropout_prob")
    serving_inputs = {"input_ids": 2, "input_mask": 2, "segment_ids": 2, "p_mask": 2}

    def __init__(self, config: AlbertConfig, start_n_top: int = 5, end_n_top: int = 5, dropout_prob: float = 0.1,
                 name="albert_squad_v2", **kwargs):
        super().__init__(name=name, **kwargs)
        self.config, self.start_n_top, self.end_n_top = config, start_n_top, end_n_top
        self.dropout_prob = dropout_prob
        self.encoder = AlbertEncoder(config)
        self.squad_head = heads.SquadV2Head(config, start_n_top, end_n_top, dropout_prob, name="squad_v2")
        self.build()

    def features_from_text(self, texts) -> dict:
        """(questions, contexts) -> features with the original's `p_mask`: 0 on [CLS] and the context pieces, 1 on
        the question, both [SEP]s and the padding."""
        features = dict(super().features_from_text(texts))
        positions = ops.arange(ops.shape(features["input_ids"])[1], dtype="int32")[None, :]
        last = ops.sum(features["input_mask"], axis=1, keepdims=True) - 1
        context = (features["segment_ids"] == 1) & (positions < last)
        features["p_mask"] = ops.where(context | (positions == 0), 0, 1)
        return features

    def call(self, inputs, training=None):
        inputs = self._features(inputs)
        sequence_output = self.encoder(inputs, training=training)["sequence_output"]
        return dict(self.squad_head(sequence_output, inputs["p_mask"], start_positions=inputs.get("start_positions"),
                                    training=training))


@register
class AlbertMultipleChoice(_EncoderWithHeads):
    """RACE multiple choice: inputs are [B,C,T]; the logits [B,C] (float32)."""

    checkpoint_heads = ("choice",)
    config_arguments = ("num_choices", "dropout_prob")
    cuts_batches = True
    serving_inputs = {"input_ids": 3, "input_mask": 3, "segment_ids": 3}

    def __init__(self, config: AlbertConfig, num_choices: int = 4, dropout_prob: float = 0.1,
                 name="albert_multiple_choice", **kwargs):
        super().__init__(name=name, **kwargs)
        self.config, self.num_choices, self.dropout_prob = config, num_choices, dropout_prob
        self.encoder = AlbertEncoder(config)
        self.choice_head = heads.MultipleChoiceHead(config, num_choices, dropout_prob, name="choice")
        self.build()

    def features_from_text(self, texts) -> dict:
        """(contexts [B], endings [B,C]) -> [B,C,T] features, each choice packed as the pair (context, ending); or
        endings [B,C] alone as single segments."""
        parts = list(texts) if isinstance(texts, (tuple, list)) else [texts]
        endings = tf.convert_to_tensor(parts[-1], tf.string)
        choices = tf.shape(endings)[-1]
        flat = [tf.reshape(endings, [-1])]
        if len(parts) == 2:
            contexts = tf.reshape(tf.convert_to_tensor(parts[0], tf.string), [-1, 1])
            flat.insert(0, tf.reshape(tf.broadcast_to(contexts, tf.shape(endings)), [-1]))
        features = super().features_from_text(tuple(flat) if len(flat) == 2 else flat[0])
        return {k: tf.reshape(v, [-1, choices, tf.shape(v)[-1]]) for k, v in features.items()}

    def call(self, inputs, training=None):
        inputs = self._features(inputs)
        flat = {key: ops.reshape(value, (-1, ops.shape(value)[-1])) for key, value in inputs.items()
                if key in PACKED_INPUTS}
        return self.choice_head(self.encoder(flat, training=training, pooled_only=True)["pooled_output"],
                                training=training)
