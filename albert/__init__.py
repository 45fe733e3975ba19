"""ALBERT ("A Lite BERT") for TensorFlow 2 / Keras 3: a faithful re-implementation of the original release.

`import albert` loads no TensorFlow and changes nothing else: the names below come from their modules on first use
(PEP 562), so the command lines' argument checks and light tools start in a second. Keras classes register when the
module that defines them is imported; `albert.load_model(path)` reads a `.keras` file of any model here.
"""

from albert.ground.stderr_filter import import_quietly

_NAMES = {  # public name -> the module that defines it (docs/architecture.md lists the modules)
    "AlbertConfig": "albert.config",
    "AlbertError": "albert.ground.errors",
    "AlbertEncoder": "albert.model.encoder",
    "AlbertPretrainer": "albert.tasks.pretraining.model",
    "AlbertClassifier": "albert.tasks.classification.model",
    "AlbertSquadV1": "albert.tasks.squad.model",
    "AlbertSquadV2": "albert.tasks.squad.model",
    "AlbertMultipleChoice": "albert.tasks.race.model",
    "AlbertTokenClassifier": "albert.tasks.ner.model",
    "AlbertPreprocessor": "albert.model.preprocessor",
    "load_model": "albert.tasks.loading",
    "LoadReport": "albert.weights.loader",
    "load_original_checkpoint": "albert.weights.loader",
    "save_original_checkpoint": "albert.weights.tf_checkpoints",
    "original_variable_map": "albert.weights.original",
    "load_weights": "albert.weights.loader",
}
__all__ = sorted(_NAMES)


def __getattr__(name):
    if name in _NAMES:  # TensorFlow's start-up lines kept off stderr when this starts it (its warnings pass)
        return getattr(import_quietly(_NAMES[name]), name)
    raise AttributeError(f"module 'albert' has no attribute {name!r}")


def __dir__():
    return __all__
