"""ALBERT ("A Lite BERT") for TensorFlow 2 / Keras 3: a faithful re-implementation of the original release.

Names are imported lazily, so that light tools (`python -m albert.info`) and the command lines' argument checks
start without loading TensorFlow. The Keras classes are registered for `keras.models.load_model` as soon as Keras
is imported, before or after `import albert`.
"""

import importlib
import importlib.abc
import importlib.util
import sys

_EXPORTS = {
    "AlbertConfig": "albert.config",
    "AlbertError": "albert.errors",
    "AlbertEncoder": "albert.modeling",
    "AlbertPretrainer": "albert.models",
    "AlbertClassifier": "albert.models",
    "AlbertSquadV1": "albert.models",
    "AlbertSquadV2": "albert.models",
    "AlbertMultipleChoice": "albert.models",
    "AlbertPreprocessor": "albert.preprocessing",
    "LoadReport": "albert.weights.original",
    "load_original_checkpoint": "albert.weights.original",
    "save_original_checkpoint": "albert.weights.original",
    "original_variable_map": "albert.weights.original",
    "load_weights": "albert.weights.loader",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'albert' has no attribute {name!r}")


def __dir__():
    return __all__


_KERAS_MODULES = ("albert.modeling", "albert.models", "albert.preprocessing")  # the modules that register Keras classes
# What importing them imports of this package: while one of these is half-imported, registering now would be a
# circular import; that import registers everything itself when it completes (modeling imports models last).
_CHAIN = ("albert.errors", "albert.config", "albert.serialization", "albert.pretrained", "albert.modeling",
          "albert.heads", "albert.models", "albert.preprocessing")
_HOOKED = ("keras", "tensorflow")


def _loaded(name: str) -> bool:
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    return module is not None and not getattr(spec, "_initializing", False)


def _register_keras_classes(just_imported: str | None = None):
    """Import the modules that register albert's Keras classes, once Keras and TensorFlow are both fully
    imported (TensorFlow imports Keras half-way through its own import, and the other way round)."""
    if any(name in sys.modules and not _loaded(name) for name in _CHAIN):
        return
    if all(_loaded(name) or name == just_imported for name in _HOOKED):
        for module in _KERAS_MODULES:
            importlib.import_module(module)


class _AfterKerasImport(importlib.abc.MetaPathFinder):
    """Runs `_register_keras_classes` after `keras` or `tensorflow` finishes importing, whoever imports them, so
    `keras.models.load_model` finds albert's classes in a process that imported `albert` first."""

    def __init__(self):
        self.pending, self.busy = set(_HOOKED), False

    def find_spec(self, name, path=None, target=None):
        if name not in self.pending or self.busy:
            return None
        self.pending.discard(name)
        if not self.pending:
            sys.meta_path.remove(self)
        self.busy = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            _register_keras_classes(name)

        spec.loader.exec_module = exec_module
        return spec


if all(name in sys.modules for name in _HOOKED):
    _register_keras_classes()
elif not any(isinstance(finder, _AfterKerasImport) for finder in sys.meta_path):
    sys.meta_path.insert(0, _AfterKerasImport())
