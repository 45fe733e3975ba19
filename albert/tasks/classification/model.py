"""`AlbertClassifier`: the encoder with a classification (or regression) head; `classify` on raw texts.
"""

import numpy as np

from albert.config import AlbertConfig
from albert.ground import arguments
from albert.ground.errors import AlbertError
from albert.model import heads
from albert.model.encoder import AlbertEncoder
from albert.model.serialization import register
from albert.model.task_model import TaskModel


@register
class AlbertClassifier(TaskModel):
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

    labels = None  # the label names in the order of the logits (from_pretrained of a run sets them; or by hand)

    def call(self, inputs, training=None):
        inputs = self._features(inputs)
        return self.classifier_head(self.encoder(inputs, training=training, pooled_only=True)["pooled_output"],
                                    training=training)

    def classify(self, texts, text_pairs=None, batch_size: int = 32):
        """Raw texts (and, for a pair model, the second text of each pair) -> for each text {"label": the most
        probable label, "score": its probability, "probabilities": {label: probability}}, labels named by
        `labels` (the run's, after from_pretrained of a run directory; else "0", "1", ...); a regression model
        (num_labels 1) gives {"score": its number}. One string gives one dict; an empty list, []."""
        where = f"{type(self).__name__}.classify"
        given, single = arguments.texts(where, "texts", texts)
        batch_size = arguments.whole(where, "batch_size", batch_size, 1)
        if text_pairs is not None:
            pairs, _ = arguments.texts(where, "text_pairs", [text_pairs] if single else text_pairs, single=False)
            if len(pairs) != len(given):
                raise AlbertError(f"{where}: {len(given)} texts and {len(pairs)} text_pairs; pass one second text "
                                  "per text")
        if not given:
            return []
        names = [str(n) for n in self.labels] if self.labels is not None else [str(i) for i in range(self.num_labels)]
        if len(names) != self.num_labels:
            raise AlbertError(f"{where}: {len(names)} labels ({', '.join(names)}) for num_labels {self.num_labels}")
        inputs = given if text_pairs is None else (given, pairs)
        logits = np.asarray(self.predict(inputs, batch_size=batch_size, verbose=0), dtype=np.float64)
        if self.num_labels == 1:
            results = [{"score": float(row[0])} for row in logits]
        else:
            exp = np.exp(logits - logits.max(-1, keepdims=True))
            probabilities = exp / exp.sum(-1, keepdims=True)
            results = [{"label": names[int(row.argmax())], "score": float(row.max()),
                        "probabilities": dict(zip(names, map(float, row)))} for row in probabilities]
        return results[0] if single else results
