"""ALBERT ("A Lite BERT") for TensorFlow 2 / Keras 3: a faithful re-implementation of the original release."""

from albert.checkpoints import LoadReport, load_original_checkpoint, original_variable_map, save_original_checkpoint
from albert.config import AlbertConfig
from albert.errors import AlbertError
from albert.modeling import AlbertEncoder
from albert.models import (AlbertClassifier, AlbertMultipleChoice, AlbertPretrainer, AlbertSquadV1,
                           AlbertSquadV2)

__all__ = [
    "AlbertClassifier", "AlbertConfig", "AlbertEncoder", "AlbertError", "AlbertMultipleChoice", "AlbertPretrainer",
    "AlbertSquadV1", "AlbertSquadV2", "LoadReport", "load_original_checkpoint", "original_variable_map",
    "save_original_checkpoint",
]
