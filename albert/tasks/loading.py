"""`load_model`: a `.keras` file of any model of this package, read back.

Every Keras class here is registered (package `albert`) where it is defined; this module imports them all, so that
`keras.models.load_model` finds them whichever one the file holds (a task model, the encoder inside a functional
model, a preprocessor on raw strings).
"""

import keras

from albert.model.encoder import AlbertEncoder
from albert.model.preprocessor import AlbertPreprocessor
from albert.tasks.classification.model import AlbertClassifier
from albert.tasks.ner.model import AlbertTokenClassifier
from albert.tasks.pretraining.model import AlbertPretrainer
from albert.tasks.race.model import AlbertMultipleChoice
from albert.tasks.squad.model import AlbertSquadV1, AlbertSquadV2

CLASSES = (AlbertEncoder, AlbertPreprocessor, AlbertPretrainer, AlbertClassifier, AlbertSquadV1, AlbertSquadV2,
           AlbertMultipleChoice, AlbertTokenClassifier)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """keras.models.load_model, this package's classes known by their registered names (`albert>AlbertClassifier`,
    ...) besides `custom_objects`."""
    known = {keras.saving.get_registered_name(cls): cls for cls in CLASSES}
    known.update(custom_objects or {})
    return keras.models.load_model(filepath, custom_objects=known, compile=compile, safe_mode=safe_mode)
