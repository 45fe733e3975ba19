"""Model Garden encoders' `activation`, in every form Keras 2 / tf_keras and Keras 3 serialize it, read as the
original's activation (albert.weights.model_garden's table); Keras' erf gelu, unknown names and `Custom>` functions are
one line naming the file and the value. The real encoder Model Garden's exporter writes with its default gelu:
tests/test_hub_formats.py."""

import pytest

from albert.ground.errors import AlbertError
from albert.weights.model_garden import _activation

SOURCE = "enc/keras_metadata.pb"


@pytest.mark.parametrize("value, expected", [
    # Model Garden's default (official.modeling.activations.gelu, registered under "Text"), as tf_keras 2.x writes it
    ({"module": "builtins", "class_name": "function", "config": "Text>gelu", "registered_name": "function"}, "gelu"),
    ("Text>gelu", "gelu"),  # the older plain form of a registered function
    ({"class_name": "Text>gelu", "config": {"name": "Text>gelu"}}, "gelu"),
    ({"module": "builtins", "class_name": "function", "config": "Text>identity", "registered_name": "function"},
     "linear"),
    ("relu", "relu"),  # a built-in, as a plain name
    ({"module": "keras.activations", "class_name": "function", "config": "relu", "registered_name": "relu"}, "relu"),
    ({"module": "keras.src.activations.activations", "class_name": "function", "config": "tanh",
      "registered_name": "tanh"}, "tanh"),
    ({"class_name": "linear", "config": {"name": "linear"}}, "linear"),
    ({"class_name": "Activation", "config": {"name": "act", "activation": "relu"}}, "relu"),
    ({"class_name": "gelu", "config": {"name": "gelu", "approximate": True}}, "gelu"),  # Keras' gelu, tanh form
])
def test_each_serialized_form_maps_to_the_originals_activation(value, expected):
    assert _activation(value, SOURCE) == expected


@pytest.mark.parametrize("value, why", [
    ("gelu", "Keras' gelu is the erf form (approximate=False), not ALBERT's tanh gelu (Model Garden's Text>gelu)"),
    ({"module": "keras.activations", "class_name": "function", "config": "gelu", "registered_name": "gelu"},
     "Keras' gelu is the erf form (approximate=False), not ALBERT's tanh gelu (Model Garden's Text>gelu)"),
    ({"class_name": "gelu", "config": {"name": "gelu", "approximate": False}},
     "Keras' gelu is the erf form (approximate=False), not ALBERT's tanh gelu (Model Garden's Text>gelu)"),
    ({"module": "builtins", "class_name": "function", "config": "Custom>my_act", "registered_name": "function"},
     "no counterpart in ALBERT (known: Text>gelu, Text>identity, relu, tanh, linear)"),
    ("Text>relu6", "no counterpart in ALBERT (known: Text>gelu, Text>identity, relu, tanh, linear)"),
    ([1, 2], "no counterpart in ALBERT (known: Text>gelu, Text>identity, relu, tanh, linear)"),
])
def test_erf_gelu_unknown_names_and_custom_functions_are_one_line(value, why):
    import json

    with pytest.raises(AlbertError) as raised:
        _activation(value, SOURCE)
    assert str(raised.value) == f"{SOURCE}: activation {json.dumps(value)} is not readable as ALBERT's: {why}"
