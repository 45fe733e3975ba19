"""`AlbertSquadV1` / `AlbertSquadV2`: the encoder with the SQuAD 1.1 span head or the original's SQuAD 2.0 head;
`answer` on raw questions and contexts (albert.tasks.squad.answering).
"""

from keras import ops

from albert.config import AlbertConfig
from albert.model import heads
from albert.model.encoder import AlbertEncoder
from albert.model.serialization import register
from albert.model.task_model import TaskModel
from albert.tasks.squad import answering


@register
class AlbertSquadV1(TaskModel):
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

    version_2 = False

    def answer(self, questions, contexts=None, *, doc_stride: int | None = None, max_seq_length: int | None = None,
               max_query_length: int | None = None,
               n_best_size: int = answering.N_BEST_SIZE, max_answer_length: int = answering.MAX_ANSWER_LENGTH,
               null_score_diff_threshold: float = 0.0, return_nbest: bool = False, batch_size: int = 32):
        """The answer to each question in its context, as run_squad.py predicts it (docs/python-api.md): a dict
        {"answer", "start", "end", "score", "probability"} per question (context[start:end] == answer; "score" as
        the SavedModel's: start + end logits, 1.1, or log-probabilities, 2.0; 2.0 adds "has_answer" and
        "null_score", and "no answer" is answer "" with start = end = -1), one dict for one (question, context)
        pair of strings; `return_nbest` adds the "nbest" list. Contexts of any length: windows of `doc_stride`."""
        return answering.squad_answers(self, questions, contexts, self.version_2, doc_stride, max_seq_length,
                                       max_query_length, n_best_size, max_answer_length, null_score_diff_threshold,
                                       return_nbest, batch_size)


@register
class AlbertSquadV2(TaskModel):
    """SQuAD 2.0 with the original XLNet-style head. Inputs add `p_mask` [B,T] and, for the training outputs,
    `start_positions` [B]; see `heads.SquadV2Head` for the outputs of each mode."""

    checkpoint_heads = ("squad_v2",)
    config_arguments = ("start_n_top", "end_n_top", "dropout_prob")
    version_2 = True
    answer = AlbertSquadV1.answer
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
