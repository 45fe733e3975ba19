"""`AlbertTokenClassifier`: the encoder with a token-classification head; `fit` / `predict` on lists of words.
"""

import collections

import numpy as np
import tensorflow as tf

from albert.config import AlbertConfig
from albert.ground import arguments
from albert.ground.errors import AlbertError, shown
from albert.model import heads
from albert.model.encoder import AlbertEncoder
from albert.model.serialization import register
from albert.model.task_model import TaskModel
from albert.data.features import step_boundaries
from albert.tasks.ner.tagging import tagger
from albert.tasks.ner.windows import padded, sentence_windows, unknown_id
from albert.text.tokenization import FullTokenizer


_Words = collections.namedtuple("_Words", "words tags")


def is_word_lists(x) -> bool:
    """A list of sentences, each a list (or tuple) of word strings."""
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(
        isinstance(s, (list, tuple)) and all(isinstance(w, str) for w in s) for s in x)


@register
class AlbertTokenClassifier(TaskModel):
    """Token classification (NER, run_ner.py): the logits [B,T,num_labels] (float32), one row per position; a word
    is read at its first piece (albert.tasks.ner.windows)."""

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

    # fit / predict on lists of words (the preprocessor's SentencePiece model, in windows: albert.tasks.ner.windows)
    labels = None  # the tag names, in the order of the logits (set by fit on tag strings, or by hand)
    doc_stride = None  # pieces between a long sentence's windows (default: half the preprocessor's seq_length)

    def _windows(self, sentences, tags=None):
        self._require_preprocessor()
        p = self.preprocessor
        tokenizer = FullTokenizer(None, p.do_lower_case, p.spm_model_file)
        names = self._names()
        rows = [_Words(tuple(words), None if tags is None else tuple(tags[i])) for i, words in enumerate(sentences)]
        windows = sentence_windows(rows, tokenizer, names, p.seq_length, self._stride())
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
        else ids), each word read at its first piece in the window where it has the most context -- the serving
        model's computation (albert.tasks.ner.tagging), `batch_size` sentences at a time; no sentences: []."""
        if isinstance(x, (list, tuple)) and x and isinstance(x[0], str):
            raise AlbertError(f"{type(self).__name__}.predict: x[0] is the string {shown(x[0])}, not a sentence as a "
                              "list of words; pass [text.split() for text in texts] (one tag per word comes back)")
        if not isinstance(x, (list, tuple)) or (x and not isinstance(x[0], (list, tuple))):  # not sentences of words
            return super().predict(x, batch_size=batch_size, **kwargs)
        where = f"{type(self).__name__}.predict"
        x = arguments.text_lists(where, "x", x)  # sentences of words: each word a string
        batch_size = arguments.whole(where, "batch_size", batch_size, 1, optional=True)
        unknown = sorted(set(kwargs) - {"verbose"})
        if unknown:
            raise AlbertError(f"{where}: on lists of words it takes batch_size (and verbose), not "
                              f"{', '.join(unknown)}; pass feature arrays for Keras' other arguments")
        if not x:
            return []
        tag_words, names = self._word_tagger(), self._names()
        tags, batch = [], batch_size or 32
        for start in range(0, len(x), batch):
            ids = tag_words(tf.ragged.constant([list(words) for words in x[start:start + batch]], tf.string,
                                               ragged_rank=1, row_splits_dtype=tf.int64))
            tags += [[names[i] for i in row] for row in ids.to_list()]
        return tags

    def _names(self) -> list:
        return list(self.labels) if self.labels is not None else list(range(self.num_labels))

    def _stride(self) -> int:
        stride = arguments.whole(type(self).__name__, "doc_stride", self.doc_stride, 1, optional=True)
        return max(1, (self.preprocessor.seq_length - 2) // 2) if stride is None else stride

    def _word_tagger(self):
        """albert.tasks.ner.tagging.tagger on this model and its preprocessor's tokenizer, traced once per
        preprocessor and doc_stride (out of Keras' attribute tracking)."""
        self._require_preprocessor()
        p, stride = self.preprocessor, self._stride()
        key = (id(p), p.seq_length, stride)
        kept = self.__dict__.get("_tag_words")
        if kept is None or kept[0] != key:
            unk = unknown_id(FullTokenizer(None, p.do_lower_case, p.spm_model_file))
            tag_words = tagger(self, p.tokenizer, unk, p.seq_length, stride, step_boundaries(p.seq_length))
            step = tf.function(tag_words, input_signature=[tf.RaggedTensorSpec([None, None], tf.string, 1,
                                                                               tf.int64)])
            kept = (key, step)
            object.__setattr__(self, "_tag_words", kept)
        return kept[1]
