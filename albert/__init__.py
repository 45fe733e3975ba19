"""ALBERT ("A Lite BERT") for TensorFlow 2 / Keras 3: a faithful re-implementation of the original release.

Names are imported lazily, so that light tools (`python -m albert.info`) start without loading TensorFlow.
"""

import importlib

_EXPORTS = {
    "AlbertConfig": "albert.config",
    "AlbertError": "albert.errors",
    "AlbertEncoder": "albert.modeling",
    "AlbertPretrainer": "albert.models",
    "AlbertClassifier": "albert.models",
    "AlbertSquadV1": "albert.models",
    "AlbertSquadV2": "albert.models",
    "AlbertMultipleChoice": "albert.models",
    "LoadReport": "albert.checkpoints",
    "load_original_checkpoint": "albert.checkpoints",
    "save_original_checkpoint": "albert.checkpoints",
    "original_variable_map": "albert.checkpoints",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'albert' has no attribute {name!r}")


def __dir__():
    return __all__
