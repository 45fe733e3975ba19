"""Pretraining and task heads, each a Keras layer laid out like the original's variables.

Weights that the original stores as `[num_classes, H]` (`output_weights`) are kept in that layout here and used
transposed, so loading an original checkpoint never reshapes anything. Every head returns float32 logits, also
under a mixed-precision policy, because losses are computed from them.
"""

import keras
import tensorflow as tf
from keras import ops

from albert.config import AlbertConfig
from albert.model.encoder import dense, get_activation, layer_norm, truncated_normal

# The original hard-codes stddev 0.02 for the fine-tuning `output_weights` (classifier, SQuAD v1, RACE).
TASK_INITIALIZER_RANGE = 0.02


def gather_positions(sequence, positions):
    """[B,T,H] gathered at int [B,P] positions -> [B,P,H]."""
    return tf.gather(sequence, tf.cast(positions, tf.int32), batch_dims=1)


class MaskedLMHead(keras.layers.Layer):
    """Original `cls/predictions`: at the masked positions only, Dense H->E with the hidden activation,
    LayerNorm, then logits against the word-embedding table (tied) plus an own output bias [V]."""

    def __init__(self, config: AlbertConfig, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.dense = dense(config.embedding_size, config, "transform_dense",
                           activation=get_activation(config.hidden_act))
        self.layer_norm = layer_norm("transform_LayerNorm")

    def build(self, input_shape=None):
        self.dense.build((None, None, self.config.hidden_size))
        self.layer_norm.build((None, None, self.config.embedding_size))
        self.output_bias = self.add_weight(shape=(self.config.vocab_size,), initializer="zeros",
                                           name="output_bias")

    def call(self, sequence_output, masked_lm_positions, embedding_table):
        x = self.layer_norm(self.dense(gather_positions(sequence_output, masked_lm_positions)))
        # float32 even under mixed precision: with logits for the P masked positions only, this product is a
        # fraction of a percent of the step's FLOPs, and the loss over V classes is sensitive to its rounding.
        table = ops.cast(embedding_table, "float32")
        return ops.matmul(ops.cast(x, "float32"), ops.transpose(table)) + ops.cast(self.output_bias, "float32")


class _OutputWeights(keras.layers.Layer):
    """`output_weights` [C,H] and `output_bias` [C], logits = x @ W^T + b, with optional dropout on x."""

    def __init__(self, config: AlbertConfig, num_outputs: int, dropout_prob: float = 0.0,
                 stddev: float = TASK_INITIALIZER_RANGE, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.num_outputs = num_outputs
        self.stddev = stddev
        self.dropout = keras.layers.Dropout(dropout_prob)

    def build(self, input_shape=None):
        self.output_weights = self.add_weight(
            shape=(self.num_outputs, self.config.hidden_size), initializer=truncated_normal(self.stddev),
            name="output_weights")
        self.output_bias = self.add_weight(shape=(self.num_outputs,), initializer="zeros", name="output_bias")

    def call(self, x, training=None):
        x = self.dropout(x, training=training)
        logits = ops.matmul(x, ops.transpose(self.output_weights))
        return ops.cast(logits, "float32") + ops.cast(self.output_bias, "float32")


class SentenceOrderHead(_OutputWeights):
    """Original `cls/seq_relationship`: 2-way logits on the pooled output (0 = in order, 1 = swapped)."""

    def __init__(self, config: AlbertConfig, **kwargs):
        super().__init__(config, 2, stddev=config.initializer_range, **kwargs)


class ClassificationHead(_OutputWeights):
    """GLUE head on the pooled output: dropout (0.1, training only) then `output_weights` [num_labels,H]. With
    num_labels=1 it is the STS-B regression head."""

    def __init__(self, config: AlbertConfig, num_labels: int, dropout_prob: float = 0.1, **kwargs):
        super().__init__(config, num_labels, dropout_prob=dropout_prob, **kwargs)


class TokenClassificationHead(_OutputWeights):
    """Token classification (NER): dropout, then `output_weights` [num_labels,H] at every position: [B,T,H] ->
    [B,T,num_labels]."""

    def __init__(self, config: AlbertConfig, num_labels: int, dropout_prob: float = 0.1, **kwargs):
        super().__init__(config, num_labels, dropout_prob=dropout_prob, **kwargs)


class MultipleChoiceHead(_OutputWeights):
    """RACE head: one score per (context, option) pooled output, `output_weights` [1,H]; [B*C,H] -> [B,C]."""

    def __init__(self, config: AlbertConfig, num_choices: int = 4, dropout_prob: float = 0.1, **kwargs):
        super().__init__(config, 1, dropout_prob=dropout_prob, **kwargs)
        self.num_choices = num_choices

    def call(self, pooled_output, training=None):
        return ops.reshape(super().call(pooled_output, training=training), (-1, self.num_choices))


class SquadV1Head(_OutputWeights):
    """SQuAD v1.1 span head `cls/squad`: [B,T,H] -> start and end logits [B,T]."""

    def __init__(self, config: AlbertConfig, **kwargs):
        super().__init__(config, 2, **kwargs)

    def call(self, sequence_output, training=None):
        logits = super().call(sequence_output, training=training)
        return {"start_logits": logits[..., 0], "end_logits": logits[..., 1]}


class SquadV2Head(keras.layers.Layer):
    """The original SQuAD 2.0 head (XLNet style): start logits; end logits conditioned on a start position (the
    gold one in training, a beam of `start_n_top` at inference, each keeping `end_n_top` ends); and an
    answerability logit from the CLS state and the start-probability-weighted state.

    `p_mask` [B,T] is 1 where no answer may start or end (question, separators, padding).
    """

    def __init__(self, config: AlbertConfig, start_n_top: int = 5, end_n_top: int = 5,
                 dropout_prob: float = 0.1, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.start_n_top = start_n_top
        self.end_n_top = end_n_top
        h = config.hidden_size
        self.start_dense = dense(1, config, "start_logits_dense")
        self.end_dense_0 = dense(h, config, "end_logits_dense_0", activation="tanh")
        self.end_layer_norm = layer_norm("end_logits_LayerNorm")
        self.end_dense_1 = dense(1, config, "end_logits_dense_1")
        self.answer_dense_0 = dense(h, config, "answer_class_dense_0", activation="tanh")
        self.answer_dense_1 = dense(1, config, "answer_class_dense_1", use_bias=False)
        self.dropout = keras.layers.Dropout(dropout_prob)

    def build(self, input_shape=None):
        h = self.config.hidden_size
        self.start_dense.build((None, None, h))
        self.end_dense_0.build((None, None, 2 * h))
        self.end_layer_norm.build((None, None, h))
        self.end_dense_1.build((None, None, h))
        self.answer_dense_0.build((None, 2 * h))
        self.answer_dense_1.build((None, h))

    @staticmethod
    def _mask(logits, p_mask):
        return logits * (1.0 - p_mask) - 1e30 * p_mask

    def _end_logits(self, hidden, start_hidden):
        """hidden [..., T, H] and start_hidden [..., H] -> end logits [..., T] (float32)."""
        tiled = ops.broadcast_to(ops.expand_dims(start_hidden, -2), ops.shape(hidden))
        x = self.end_dense_0(ops.concatenate([hidden, tiled], axis=-1))
        return ops.cast(ops.squeeze(self.end_dense_1(self.end_layer_norm(x)), -1), "float32")

    def call(self, sequence_output, p_mask, start_positions=None, training=None):
        p_mask = ops.cast(p_mask, "float32")
        start_logits = ops.cast(ops.squeeze(self.start_dense(sequence_output), -1), "float32")
        start_logits = self._mask(start_logits, p_mask)
        start_log_probs = ops.log_softmax(start_logits, axis=-1)
        outputs = {}
        if start_positions is not None:
            start_hidden = gather_positions(sequence_output, ops.expand_dims(start_positions, -1))[:, 0]
            end_logits = self._mask(self._end_logits(sequence_output, start_hidden), p_mask)
            outputs["start_log_probs"] = start_log_probs
            outputs["end_log_probs"] = ops.log_softmax(end_logits, axis=-1)
        else:
            start_top_log_probs, start_top_index = ops.top_k(start_log_probs, k=self.start_n_top)
            start_hidden = gather_positions(sequence_output, start_top_index)  # [B,K,H]
            hidden = ops.broadcast_to(ops.expand_dims(sequence_output, 1),
                                      (ops.shape(sequence_output)[0], self.start_n_top,
                                       ops.shape(sequence_output)[1], self.config.hidden_size))
            end_logits = self._mask(self._end_logits(hidden, start_hidden), ops.expand_dims(p_mask, 1))
            end_top_log_probs, end_top_index = ops.top_k(ops.log_softmax(end_logits, axis=-1), k=self.end_n_top)
            k = self.start_n_top * self.end_n_top
            outputs.update(start_top_log_probs=start_top_log_probs, start_top_index=start_top_index,
                           end_top_log_probs=ops.reshape(end_top_log_probs, (-1, k)),
                           end_top_index=ops.reshape(end_top_index, (-1, k)))
        # Answerability: independent of the end so that each feature has one cls logit.
        start_probs = ops.softmax(start_logits, axis=-1)
        start_feature = ops.einsum("bt,bth->bh", ops.cast(start_probs, sequence_output.dtype), sequence_output)
        features = ops.concatenate([start_feature, sequence_output[:, 0, :]], axis=-1)
        x = self.dropout(self.answer_dense_0(features), training=training)
        outputs["cls_logits"] = ops.cast(ops.squeeze(self.answer_dense_1(x), -1), "float32")
        return outputs
