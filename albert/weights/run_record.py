"""What a fine-tuning run records in its directory beside its checkpoints, so that the directory is a whole model:
its task, the task model class its checkpoints hold, the names of its outputs (labels, or tags) in logits order,
and the preprocessing it was trained with (`albert_run.json`). `from_pretrained(RUN)` builds the model from it;
`--output_dir=RUN` alone evaluates, predicts and exports; a runner given a run of another task says so. No
TensorFlow here: the command lines read it before TensorFlow starts.

Runs made before this record wrote `labels.json` (a user's own classification files: labels, regression, pair;
run_ner.py: labels, scheme); it is read as the record of such a run.
"""

import dataclasses
import json
import os

from albert.ground import user_json, userfiles
from albert.ground.atomic import write_text
from albert.ground.errors import AlbertError

RECORD = "albert_run.json"
LEGACY_LABELS = "labels.json"  # what runs before albert_run.json recorded (own files and NER only)

# The runner of each task model class, and what its head is called in messages.
RUNNERS = {"AlbertClassifier": ("run_classifier.py", "classification"),
           "AlbertTokenClassifier": ("run_ner.py", "token classification (NER)"),
           "AlbertSquadV1": ("run_squad.py", "SQuAD 1.1 answer span"),
           "AlbertSquadV2": ("run_squad.py", "SQuAD 2.0 answer span and no-answer"),
           "AlbertMultipleChoice": ("run_race.py", "multiple choice (RACE)")}

RUNNER_HEADS = {"run_classifier.py": "classification", "run_ner.py": "token classification (NER)",
                "run_squad.py": "SQuAD answer span", "run_race.py": "multiple choice (RACE)"}


@dataclasses.dataclass(frozen=True)
class RunRecord:
    model_class: str  # the task model class (albert.tasks.<task>.model) the run's checkpoints hold (a key of RUNNERS)
    task: str  # a GLUE task's name, "own" (a user's files), "ner", "squad", "race"
    labels: tuple | None = None  # the output names in logits order (None: regression, SQuAD, RACE)
    regression: bool = False  # a classifier predicting a number (one output)
    pair: bool = False  # a classifier of text pairs (text_a, text_b)
    scheme: str | None = None  # NER: the tag scheme (IOB1, IOB2, IOBES)
    preprocessing: dict = dataclasses.field(default_factory=dict)  # do_lower_case, max_seq_length, doc_stride, ...

    @property
    def runner(self) -> str:
        return RUNNERS[self.model_class][0]

    @property
    def head(self) -> str:
        return RUNNERS[self.model_class][1]

    def describe(self) -> str:
        """`a run_classifier.py run (classification, task rte)`: what messages call the run."""
        return f"a {self.runner} run ({self.head}, task {self.task})"

    def text(self) -> str:
        values = {"model_class": self.model_class, "task": self.task,
                  "labels": None if self.labels is None else list(self.labels)}
        if self.model_class == "AlbertClassifier":
            values.update(regression=self.regression, pair=self.pair)
        if self.scheme is not None:
            values["scheme"] = self.scheme
        values["preprocessing"] = self.preprocessing
        return json.dumps(values, ensure_ascii=False, indent=1) + "\n"


def write_record(output_dir: str, record: RunRecord):
    write_text(os.path.join(output_dir, RECORD), record.text())


def read_record(directory: str) -> RunRecord | None:
    """The RunRecord of a run directory (albert_run.json, else a legacy labels.json), or None (not a run's, or a run
    that has not started training). A record that is not one this project writes is one line naming it."""
    if not directory or "://" in directory or not os.path.isdir(directory):
        return None
    path = os.path.join(directory, RECORD)
    if os.path.isfile(path):
        return _parsed(path, _read(path), legacy=False)
    legacy = os.path.join(directory, LEGACY_LABELS)
    if os.path.isfile(legacy):
        return _parsed(legacy, _read(legacy), legacy=True)
    return None


def _read(path: str):
    return user_json.parse_json(userfiles.read_text(path, os.path.basename(path)), path)


def _parsed(path: str, values, legacy: bool) -> RunRecord:
    try:
        if not isinstance(values, dict):
            raise ValueError
        labels = values.get("labels")
        if not (labels is None or (isinstance(labels, list) and labels and all(isinstance(x, str) for x in labels))):
            raise ValueError
        if legacy:  # {"labels", "regression", "pair"} of a classifier, {"labels", "scheme"} of run_ner.py
            if "scheme" in values:
                return RunRecord("AlbertTokenClassifier", "ner", _tuple(labels), scheme=_text(values["scheme"]))
            return RunRecord("AlbertClassifier", "own", _tuple(labels),
                             regression=_flag(values.get("regression", labels is None)),
                             pair=_flag(values.get("pair", False)))
        model_class, task = values["model_class"], _text(values["task"])
        preprocessing = values.get("preprocessing", {})
        if model_class not in RUNNERS or not isinstance(preprocessing, dict):
            raise ValueError
        scheme = values.get("scheme")
        record = RunRecord(model_class, task, _tuple(labels), _flag(values.get("regression", False)),
                           _flag(values.get("pair", False)), None if scheme is None else _text(scheme),
                           preprocessing)
        if model_class in ("AlbertClassifier", "AlbertTokenClassifier") and labels is None and not record.regression:
            raise ValueError
        return record
    except (ValueError, KeyError, TypeError):
        raise AlbertError(f"{userfiles.where(path)}: not the record a training run writes in its directory (its task, "
                          "labels and preprocessing); remove it, or use another --output_dir") from None


def _tuple(labels):
    return None if labels is None else tuple(labels)


def _text(value) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError
    return value


def _flag(value) -> bool:
    if not isinstance(value, bool):
        raise ValueError
    return value
