"""The pretraining objective: masked-LM loss normalised by the total masked-LM weight, plus the mean
sentence-order loss (spec §5.2), and the four evaluation metrics of the original (§5.3)."""

import tensorflow as tf

from albert.data.features import PACKED_INPUTS

MODEL_INPUTS = PACKED_INPUTS + ("masked_lm_positions",)


def pretraining_loss(model, batch, training):
    """Per-replica partial sums for albert.train.loop: loss terms and metrics."""
    outputs = model({k: batch[k] for k in MODEL_INPUTS}, training=training)
    weights = tf.cast(batch["masked_lm_weights"], tf.float32)
    labels = batch["masked_lm_ids"]
    mlm_nll = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=outputs["mlm_logits"])
    mlm_correct = tf.cast(tf.equal(tf.argmax(outputs["mlm_logits"], -1, output_type=labels.dtype), labels),
                          tf.float32)
    sop_labels = tf.reshape(batch["next_sentence_labels"], [-1])
    sop_nll = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=sop_labels, logits=outputs["sop_logits"])
    sop_correct = tf.cast(tf.equal(tf.argmax(outputs["sop_logits"], -1, output_type=sop_labels.dtype), sop_labels),
                          tf.float32)
    examples = tf.cast(tf.shape(sop_labels)[0], tf.float32)
    mlm_loss, mlm_weight = tf.reduce_sum(weights * mlm_nll), tf.reduce_sum(weights)
    terms = [(mlm_loss, mlm_weight, 1e-5), (tf.reduce_sum(sop_nll), examples, 0.0)]
    metrics = {
        "masked_lm_loss": (mlm_loss, mlm_weight),
        "masked_lm_accuracy": (tf.reduce_sum(weights * mlm_correct), mlm_weight),
        "sentence_order_loss": (tf.reduce_sum(sop_nll), examples),
        "sentence_order_accuracy": (tf.reduce_sum(sop_correct), examples),
    }
    return terms, metrics
