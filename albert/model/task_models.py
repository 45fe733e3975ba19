"""Keras models made of the encoder and a head: pretraining (MLM + SOP) and the fine-tuning tasks.

Each model keeps its encoder as `.encoder` and its heads under fixed attribute names, which the checkpoint name
table (`albert/weights/original.py`) uses; `checkpoint_heads` says which head tables apply. A task model's output is its
task output only (the classifier's logits, SQuAD's start/end logits, ...), so `compile`/`fit`/`predict` work with
stock Keras losses and metrics and `predict` returns nothing else; the hidden states are `model.encoder(inputs)`.
"""

import collections

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from albert.config import AlbertConfig
from albert.data.features import PACKED_INPUTS
from albert.data.fill_mask import MAX_MASKS, masked_inputs, predictions
from albert.data.token_windows import padded, sentence_windows, word_tags
from albert.ground import arguments
from albert.ground.errors import AlbertError, shown
from albert.model import answering, heads
from albert.model.encoder import AlbertEncoder
from albert.model.from_pretrained import FromPretrained
from albert.model.serialization import ConfigSerializable, register
from albert.model.text_inputs import TextInputs
from albert.text.tokenization import FullTokenizer


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

    max_predictions_per_seq = MAX_MASKS  # the most masks fill_mask takes in one text (the pretraining data's)

    def fill_mask(self, texts, top_k: int = 5, batch_size: int = 32):
        """The words the masked-LM head puts at each `[MASK]` of raw texts, as transformers' `pipeline("fill-mask")`:
        for a text with one mask, a list of `top_k` dicts `{"score", "token", "token_str", "sequence"}` (softmax
        probability over the vocabulary, the piece's id, its word, the text with the mask filled); for a text with
        several masks, one such list per mask; a list of texts gives a list of those (albert.data.fill_mask)."""
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


_Words = collections.namedtuple("_Words", "words tags")


def is_word_lists(x) -> bool:
    """A list of sentences, each a list (or tuple) of word strings."""
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(
        isinstance(s, (list, tuple)) and all(isinstance(w, str) for w in s) for s in x)


@register
class AlbertTokenClassifier(_EncoderWithHeads):
    """Token classification (NER, run_ner.py): the logits [B,T,num_labels] (float32), one row per position; a word
    is read at its first piece (albert.data.token_windows)."""

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

    # fit / predict on lists of words (the preprocessor's SentencePiece model, in windows: albert.data.token_windows)
    labels = None  # the tag names, in the order of the logits (set by fit on tag strings, or by hand)
    doc_stride = None  # pieces between a long sentence's windows (default: half the preprocessor's seq_length)

    def _windows(self, sentences, tags=None):
        self._require_preprocessor()
        p = self.preprocessor
        tokenizer = FullTokenizer(None, p.do_lower_case, p.spm_model_file)
        names = list(self.labels) if self.labels is not None else list(range(self.num_labels))
        rows = [_Words(tuple(words), None if tags is None else tuple(tags[i])) for i, words in enumerate(sentences)]
        stride = arguments.whole(type(self).__name__, "doc_stride", self.doc_stride, 1, optional=True)
        stride = max(1, (p.seq_length - 2) // 2) if stride is None else stride
        windows = sentence_windows(rows, tokenizer, names, p.seq_length, stride)
        return rows, names, windows, padded(windows, p.seq_length)

    def fit(self, x=None, y=None, **kwargs):
        """Keras fit; `x` may be a list of sentences, each a list of words, and `y` their tags (one per word: names,
        which set `labels` when it is None, or ids): each word is in the loss once, at its first piece."""
        if not is_word_lists(x):
            return super().fit(x, y, **kwargs)
        if y is None or len(y) != len(x) or any(len(t) != len(w) for t, w in zip(y, x)):
            raise AlbertError("fit on lists of words needs y: one list of tags per sentence, one tag per word")
        if self.labels is None and any(isinstance(t, str) for tags in y for t in tags):
            found = {t for tags in y for t in tags}
            self.labels = tuple(sorted(found, key=lambda t: (t != "O", t[2:], t[:1])))
        if self.labels is not None and len(self.labels) != self.num_labels:
            raise AlbertError(f"{len(self.labels)} tag names ({', '.join(map(str, self.labels))}) for num_labels "
                              f"{self.num_labels}")
        _, _, _, arrays = self._windows(x, y)
        tags = arrays.pop("tag_ids")
        kwargs.setdefault("sample_weight", (tags >= 0).astype("float32"))
        return super().fit(arrays, np.maximum(tags, 0), **kwargs)

    def predict(self, x, batch_size=None, **kwargs):
        """Keras predict; on a list of sentences (each a list of words) one tag per word (names when `labels` is set,
        else ids), each word read at its first piece in the window where it has the most context; no sentences: []."""
        if isinstance(x, (list, tuple)) and x and isinstance(x[0], str):
            raise AlbertError(f"{type(self).__name__}.predict: x[0] is the string {shown(x[0])}, not a sentence as a "
                              "list of words; pass [text.split() for text in texts] (one tag per word comes back)")
        if not isinstance(x, (list, tuple)) or (x and not isinstance(x[0], (list, tuple))):  # not sentences of words
            return super().predict(x, batch_size=batch_size, **kwargs)
        where = f"{type(self).__name__}.predict"
        x = arguments.text_lists(where, "x", x)  # sentences of words: each word a string
        batch_size = arguments.whole(where, "batch_size", batch_size, 1, optional=True)
        if not x:
            return []
        rows, names, windows, arrays = self._windows(x)
        del arrays["tag_ids"]
        logits = super().predict(arrays, batch_size=batch_size, **kwargs)
        return word_tags(windows, np.asarray(logits).argmax(-1), rows, names)


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
class AlbertSquadV2(_EncoderWithHeads):
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

    def choose(self, articles, questions, options, *, max_seq_length: int | None = None,
               max_qa_length: int | None = None, batch_size: int = 32):
        """The option run_race.py picks for each question on its article (docs/python-api.md): a dict {"index",
        "option", "probabilities"} per question, one dict for one (article, question, options) of strings."""
        return answering.race_choices(self, articles, questions, options, max_seq_length, max_qa_length, batch_size)
