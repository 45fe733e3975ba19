"""`AlbertMultipleChoice`: the encoder with the RACE multiple-choice head; `choose` on raw articles, questions and
options (albert.tasks.race.answering).
"""

import tensorflow as tf
from keras import ops

from albert.config import AlbertConfig
from albert.data.features import PACKED_INPUTS
from albert.model import heads
from albert.model.encoder import AlbertEncoder
from albert.model.serialization import register
from albert.model.task_model import TaskModel
from albert.tasks.race import answering


@register
class AlbertMultipleChoice(TaskModel):
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

    def choose(self, articles, questions, options, *, max_seq_length: int | None = None,
               max_qa_length: int | None = None, batch_size: int = 32):
        """The option run_race.py picks for each question on its article (docs/python-api.md): a dict {"index",
        "option", "probabilities"} per question, one dict for one (article, question, options) of strings."""
        return answering.race_choices(self, articles, questions, options, max_seq_length, max_qa_length, batch_size)
