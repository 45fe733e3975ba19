"""Raw-string inputs for the encoder and every task model: `TextInputs`.

A model with a `preprocessor` (an AlbertPreprocessor: attached by `from_pretrained`, albert.model.from_pretrained,
or by hand) takes raw strings:

    model = albert.AlbertClassifier.from_pretrained("albert_base", num_labels=2)
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x=(texts_a, texts_b), y=labels)      # a pair is a tuple of two string arrays
    model.predict(["some text"])                   # single segments: one string array

In `fit`/`evaluate`/`predict`, text arrays are tokenized once per call (in chunks, by one compiled function kept
per model) into a tf.data pipeline of features; a `tf.data.Dataset` of strings is mapped; a call on string
tensors tokenizes in the call. Integer feature dicts pass through unchanged, with or without a preprocessor.
"""

import numbers
import weakref

import numpy as np
import tensorflow as tf

from albert.data.buckets import cut_to_bucket
from albert.data.features import step_boundaries
from albert.ground import arguments
from albert.ground.errors import AlbertError

_TOKENIZERS = weakref.WeakKeyDictionary()  # model -> (preprocessor, compiled features_from_text), out of tracking


def _unpandas(value):
    """A pandas Series / DataFrame column as its NumPy array; anything else as it is."""
    return value.to_numpy() if hasattr(value, "to_numpy") and not isinstance(value, np.ndarray) else value


def _is_text_array(value) -> bool:
    """A batch of strings: a string tensor, a NumPy array of strings, or a (nested) list of str/bytes."""
    if isinstance(value, (str, bytes)):
        return False
    if isinstance(value, (tf.Tensor, tf.RaggedTensor)):
        return value.dtype == tf.string
    value = _unpandas(value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "SU" or (value.dtype.kind == "O" and value.size > 0
                                            and isinstance(value.flat[0], (str, bytes)))
    if isinstance(value, list):
        return len(value) > 0 and all(isinstance(v, (str, bytes)) or _is_text_array(v) for v in value)
    return False


def is_text(inputs) -> bool:
    """Strings a preprocessor takes: one text array (single segments) or a tuple of two (pairs)."""
    if isinstance(inputs, tuple) and len(inputs) == 2:
        return all(_is_text_array(part) for part in inputs)
    return _is_text_array(inputs)


def _to_tensor(inputs):
    def one(value):
        return tf.convert_to_tensor(_unpandas(value), tf.string)

    return tuple(one(part) for part in inputs) if isinstance(inputs, tuple) else one(inputs)


def _array_like(value) -> bool:
    """An array or a tensor (NumPy, TensorFlow, ...): Keras' to take."""
    return hasattr(value, "shape") and hasattr(value, "dtype")


def _is_batch(value) -> bool:
    """A list or tuple (Keras takes neither of strings nor of numbers), or a one-dimensional array of Python
    objects (strings, or a mistake)."""
    return isinstance(value, (list, tuple)) or (
        _array_like(value) and getattr(value, "dtype", None) == object and getattr(value, "ndim", 0) == 1)


def checked_texts(where: str, x) -> int | None:
    """How many texts `x` holds when it is text given as a Python list (or tuple, or array of objects), or a pair
    (texts_a, texts_b) of them -- 0: empty --; None for what Keras takes as it is (arrays, tensors, feature dicts, a
    list of arrays, a Dataset). An AlbertError line for None, a number, one string, a list holding something that is
    not a string (named by its position), rows of different lengths, or a pair of different lengths."""
    if x is None or isinstance(x, (bool, numbers.Number)):
        raise AlbertError(f"{where}: x is {arguments.described(x)}, not a list of strings, a pair (texts_a, texts_b) "
                          "of them, feature arrays or a tf.data.Dataset")
    if isinstance(x, (str, bytes)):
        return arguments.text_batch(where, "x", x)[0]
    if not _is_batch(x) or (len(x) and all(_array_like(v) and not _is_batch(v) for v in x)):
        return None
    if isinstance(x, tuple) and len(x) == 2 and all(_is_batch(part) for part in x):
        counts = [arguments.text_batch(where, f"x[{i}]", part)[0] for i, part in enumerate(x)]
        if counts[0] != counts[1]:
            raise AlbertError(f"{where}: x[0] holds {counts[0]} texts and x[1] {counts[1]}; a pair (texts_a, "
                              "texts_b) needs one text_b per text_a")
        return counts[0]
    return arguments.text_batch(where, "x", x)[0]


def _spec_is_text(spec) -> bool:
    if isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(s, tf.TensorSpec) for s in spec):
        return all(s.dtype == tf.string for s in spec)
    return isinstance(spec, tf.TensorSpec) and spec.dtype == tf.string


class TextInputs:
    """Adds `preprocessor` and raw-string `fit`/`evaluate`/`predict`/call to a Keras model."""

    # A model whose outputs have no sequence axis (a classifier's logits) computes only real tokens in fit /
    # evaluate / predict on strings or feature arrays: each batch cut to its longest example (to its length bucket
    # when the model is XLA-compiled: albert.data.features.step_boundaries).
    cuts_batches = False

    @property
    def preprocessor(self):
        """The AlbertPreprocessor that turns strings into this model's features, or None (feature dicts only)."""
        return self.__dict__.get("_text_preprocessor")

    def __setattr__(self, name, value):
        if name == "preprocessor":
            # Not tracked as a sub-layer: it can be attached to a built model, holds no weights and stays out of
            # checkpoints and int32 exports; `.keras` files still carry it (its config and SentencePiece asset).
            object.__setattr__(self, "_text_preprocessor", value)
        else:
            super().__setattr__(name, value)

    # ------------------------------------------------------------------------------------------ strings in
    def _require_preprocessor(self):
        if self.preprocessor is None:
            raise AlbertError(f"{type(self).__name__} got strings but has no preprocessor: make it with "
                              "from_pretrained(directory), or set model.preprocessor = albert.AlbertPreprocessor("
                              "spm_model_file)")

    def features_from_text(self, texts) -> dict:
        """String tensors (one [B] tensor, or a pair) -> the model's feature dict."""
        self._require_preprocessor()
        return self.preprocessor(texts)

    def _features(self, inputs):
        return self.features_from_text(inputs) if is_text(inputs) else inputs

    def tokenize(self, texts, chunk: int = 4096) -> dict:
        """Text arrays (as `fit` takes them) -> the model's features as NumPy arrays, tokenized in chunks by one
        compiled function kept for this model (its kernels, regexes included, are built once)."""
        preprocessor, function = _TOKENIZERS.get(self, (None, None))
        if function is None or preprocessor is not self.preprocessor:
            function = tf.function(self.features_from_text, reduce_retracing=True)
            _TOKENIZERS[self] = (self.preprocessor, function)
        texts = _to_tensor(texts)
        rows = int(tf.shape(texts[0] if isinstance(texts, tuple) else texts)[0])
        parts = []
        for start in range(0, rows, chunk):
            piece = tuple(t[start:start + chunk] for t in texts) if isinstance(texts, tuple) else \
                texts[start:start + chunk]
            parts.append({k: v.numpy() for k, v in function(piece).items()})
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}

    def _text_dataset(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False, grouped=False):
        """Strings (and labels) -> (a batched tf.data.Dataset of features, the order its examples were put in or
        None): text arrays are tokenized once (not every epoch), a Dataset of strings is mapped."""
        self._require_preprocessor()
        if isinstance(x, tf.data.Dataset):
            return x.map(lambda first, *rest: (self.features_from_text(first), *rest),
                         num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE), None
        return self._feature_dataset(self.tokenize(x), y, sample_weight, batch_size, shuffle, grouped)

    def _feature_dataset(self, features: dict, y=None, sample_weight=None, batch_size=None, shuffle=False,
                         grouped=False):
        """Feature arrays (and labels) -> (batches, the order its examples were put in or None). A model whose
        outputs have no sequence axis (`cuts_batches`) computes only real tokens: each batch is cut to its longest
        example, or under XLA (`jit_compile`) to the smallest length bucket holding it (a bounded number of compiled
        shapes), the same batches as given; `grouped` (evaluation, prediction) first orders the examples by length,
        stably."""

        features = {k: np.asarray(v) for k, v in features.items()}
        rest = tuple(np.asarray(v) for v in (y, sample_weight) if v is not None)
        bounds = step_boundaries(features["input_ids"].shape[-1], compiled=bool(self.jit_compile)) \
            if self.cuts_batches else None
        order = None
        if grouped and bounds:
            mask = features["input_mask"]
            lengths = mask.sum(-1) if mask.ndim == 2 else mask.sum(-1).max(-1)
            order = np.argsort(lengths, kind="stable")
            features = {k: v[order] for k, v in features.items()}
            rest = tuple(v[order] for v in rest)
        dataset = tf.data.Dataset.from_tensor_slices((features,) + rest)
        if shuffle:
            dataset = dataset.shuffle(len(features["input_ids"]), reshuffle_each_iteration=True)
        dataset = dataset.batch(batch_size or 32)
        if bounds:
            dataset = dataset.map(lambda first, *others: (cut_to_bucket(first, bounds), *others))
        return dataset.prefetch(tf.data.AUTOTUNE), order

    def _takes_features(self, x) -> bool:
        """Feature arrays a bucketing model cuts (a dict holding input_ids and input_mask, not tensors of a Dataset)."""
        return self.cuts_batches and isinstance(x, dict) and {"input_ids", "input_mask"} <= set(x) and all(
            isinstance(v, (np.ndarray, list)) for v in x.values())

    def _takes_text(self, x) -> bool:
        if isinstance(x, tf.data.Dataset):
            spec = x.element_spec
            if isinstance(spec, tuple) and not _spec_is_text(spec):
                spec = spec[0]
            return _spec_is_text(spec)
        return is_text(x)

    def _batches(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False, grouped=False):
        """(x as batches, their order) for strings or feature arrays; None when Keras takes x as it is."""
        if self._takes_text(x):
            return self._text_dataset(x, y, sample_weight, batch_size, shuffle, grouped)
        if self._takes_features(x):
            return self._feature_dataset(x, y, sample_weight, batch_size, shuffle, grouped)
        return None

    def _validation(self, validation_data, batch_size):
        if isinstance(validation_data, tuple) and validation_data:
            made = self._batches(*validation_data[:3], batch_size=batch_size, grouped=True)
        else:
            made = self._batches(validation_data, batch_size=batch_size, grouped=True) \
                if validation_data is not None else None
        return validation_data if made is None else made[0]

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, **kwargs):
        self._texts_to_learn(x, "fit", batch_size)
        made = self._batches(x, y, sample_weight, batch_size, shuffle)
        if made is not None:
            if validation_split:
                raise AlbertError("fit on strings or feature arrays: pass validation_data=(x, labels) instead of "
                                  "validation_split")
            x, y, sample_weight, batch_size = made[0], None, None, None
            shuffle = False  # done in the pipeline (Keras warns that it cannot shuffle a Dataset)
        validation_data = self._validation(validation_data, kwargs.get("validation_batch_size") or batch_size)
        return super().fit(x, y, batch_size=batch_size, epochs=epochs, verbose=verbose, callbacks=callbacks,
                           validation_split=validation_split, validation_data=validation_data, shuffle=shuffle,
                           class_weight=class_weight, sample_weight=sample_weight, **kwargs)

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, **kwargs):
        self._texts_to_learn(x, "evaluate", batch_size)
        made = self._batches(x, y, sample_weight, batch_size, grouped=True)
        if made is not None:
            x, y, sample_weight, batch_size = made[0], None, None, None
        return super().evaluate(x, y, batch_size=batch_size, verbose=verbose, sample_weight=sample_weight, **kwargs)

    def _texts_to_learn(self, x, method: str, batch_size):
        """fit / evaluate's checks of text given as lists (albert.ground.arguments), and of an empty one."""
        where = f"{type(self).__name__}.{method}"
        arguments.whole(where, "batch_size", batch_size, 1, optional=True)
        if x is not None and checked_texts(where, x) == 0:
            raise AlbertError(f"{where}: x holds no texts; pass at least one")

    def _empty_prediction(self, pair: bool):
        """The outputs of no texts (each with 0 rows): the model called on zero rows of features."""
        self._require_preprocessor()
        rows = [tf.zeros([0], tf.string) for _ in range(2 if pair else 1)]
        if getattr(self, "serving_inputs", {}).get("input_ids") == 3:  # [B, choices, T]: the endings are [B, C]
            rows[-1] = tf.zeros([0, self.num_choices], tf.string)
        outputs = self(self.features_from_text(tuple(rows) if pair else rows[0]), training=False)
        return tf.nest.map_structure(lambda value: np.asarray(value), outputs)

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """Keras predict; on text given as lists, each text checked first (albert.ground.arguments), and no texts
        (`[]`, or `([], [])`) give outputs of 0 rows."""
        where = f"{type(self).__name__}.predict"
        batch_size = arguments.whole(where, "batch_size", batch_size, 1, optional=True)
        if checked_texts(where, x) == 0:
            return self._empty_prediction(isinstance(x, tuple) and len(x) == 2)
        made = self._batches(x, batch_size=batch_size, grouped=True)
        if made is None:
            return super().predict(x, batch_size=batch_size, verbose=verbose, steps=steps, callbacks=callbacks)
        outputs = super().predict(made[0], verbose=verbose, steps=steps, callbacks=callbacks)
        order = made[1]
        if order is None:
            return outputs
        inverse = np.argsort(order)  # back to the examples' order
        return {k: v[inverse] for k, v in outputs.items()} if isinstance(outputs, dict) else outputs[inverse]
