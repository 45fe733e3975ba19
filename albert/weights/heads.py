"""Which task model a model directory's weights hold -- the heads present -- read from its files without TensorFlow:
config.json's `architectures` (Hugging Face), task.json (keras-hub), or the head variables of a checkpoint (the
original's names, ours, a SavedModel's object graph). What `python -m albert.convert` builds before loading.
"""

import dataclasses

from albert.ground.errors import AlbertError
from albert.weights import huggingface, keras_hub
from albert.weights.bundle_index import shapes
from albert.weights.formats import ModelDirectory
from albert.weights.object_graph import checkpoint_names

# A variable name that marks a head -> the task model class that has it (the first that matches wins).
_MARKERS = (("cls/predictions", "AlbertPretrainer"),
            ("cls/token", "AlbertTokenClassifier"), ("token_head", "AlbertTokenClassifier"), ("mlm_head", "AlbertPretrainer"),
            ("albert_pretrainer/predictions", "AlbertPretrainer"),
            ("start_logits", "AlbertSquadV2"), ("squad_head/end_dense_0", "AlbertSquadV2"),
            ("cls/squad", "AlbertSquadV1"), ("squad_head", "AlbertSquadV1"),
            ("choice_head", "AlbertMultipleChoice"))


LABELLED = ("AlbertClassifier", "AlbertTokenClassifier")  # the classes whose num_labels the weights fix


@dataclasses.dataclass(frozen=True)
class Heads:
    """The task model of a model directory's weights: its task model class name (albert.tasks.<task>.model), the
    constructor arguments the weights fix, the Hugging Face architecture when config.json names one, and the number of
    labels of a classification head (2 when the weights have none). `model_class` is None where the weights cannot say
    (`unclear` says why, and what to pass)."""

    model_class: str | None
    arguments: dict
    architecture: str | None
    num_labels: int
    unclear: str = ""


def heads_of(files: ModelDirectory) -> Heads:
    """The Heads of a ModelDirectory (albert.weights.formats.read_model_directory's)."""
    if files.format == "huggingface":
        values = huggingface.read_config(files.weights)
        name = huggingface.architecture_of(values) or "AlbertModel"
        if name not in huggingface.ARCHITECTURES:
            raise AlbertError(f"{files.config}: architecture {name} has no counterpart here (supported: "
                              f"{', '.join(huggingface.ARCHITECTURES)})")
        model_class, labels = huggingface.ARCHITECTURES[name].model_class, huggingface.num_labels(values)
        arguments = {"num_labels": labels} if model_class in LABELLED else {}
        if model_class in (*LABELLED, "AlbertMultipleChoice"):
            arguments["dropout_prob"] = values.get("classifier_dropout_prob", 0.1)
        return Heads(model_class, arguments, name, labels)
    if files.format == "keras_hub":
        task, classes = keras_hub.task_of(files.weights)
        if task is None:
            return Heads("AlbertEncoder", {}, None, 2)
        if task not in keras_hub.TASKS:
            raise AlbertError(f"{files.weights}/task.json: keras-hub task {task} has no counterpart here "
                              f"(supported: {', '.join(keras_hub.TASKS)})")
        model_class = keras_hub.TASKS[task][0]
        return Heads(model_class, {"num_labels": classes} if model_class == "AlbertClassifier" else {}, None,
                     classes or 2)
    return _checkpoint_heads(files.weights)


def _checkpoint_heads(prefix: str) -> Heads:
    with open(prefix + ".index", "rb") as f:
        found = shapes(f.read())
    # The keys, and an object-based checkpoint's variable names (a SavedModel's keys say only `variables/<i>`).
    names = " ".join(found) + " " + " ".join(checkpoint_names(prefix).values())
    for marker, model_class in _MARKERS:
        if marker in names:
            if model_class == "AlbertTokenClassifier":
                labels = next((shape[0] for name, shape in sorted(found.items())
                               if "token/output_weights" in name or "token_head/output_weights" in name), 2)
                return Heads(model_class, {"num_labels": labels}, None, labels)
            return Heads(model_class, {}, None, 2)
    for name, shape in sorted(found.items()):
        if name == "output_weights" or ("classifier_head/output_weights" in name and "OPTIMIZER" not in name):
            if shape[0] == 1 and name == "output_weights":
                return Heads(None, {}, None, 1, f"{prefix}: output_weights [1, H] is a multiple-choice (RACE) head "
                             "or a regression classifier; pass --architecture AlbertForMultipleChoice or "
                             "AlbertForSequenceClassification")
            return Heads("AlbertClassifier", {"num_labels": shape[0]}, None, shape[0])
    return Heads("AlbertEncoder", {}, None, 2)
