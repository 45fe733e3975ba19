"""A user's own classification files, read as users have them: CSV (RFC 4180 quoting: fields holding commas, quotes
and newlines), TSV (plain tab-separated values, as GLUE's files and the IANA format: a quote is text), JSON Lines
and a JSON array of objects; CRLF, a UTF-8 byte order mark, extra unnamed columns and blank lines are fine.

Columns are named from the header (or, with `header=False`, given as 0-based indexes); each row becomes a `Row`
with the line it starts on, so every mistake is one line naming `file:line` (AlbertError). Labels are text: the
train file's distinct values (`label_set`: sorted as strings, or by value when every one is a number; JSON's 1 and
"1" are one label), or the user's list.
"""

import csv
import dataclasses
import io
import json
import math
import os

from albert.ground.errors import AlbertError
from albert.tasks.glue import InputExample

FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".json": "json"}
FLAGS = {"text_a": "--text_a_column", "text_b": "--text_b_column", "label": "--label_column"}


@dataclasses.dataclass(frozen=True)
class Columns:
    """Where the text and the label are: header names, or 0-based indexes for a file without a header."""

    text_a: str | int
    text_b: str | int | None = None
    label: str | int | None = None


@dataclasses.dataclass(frozen=True)
class Row:
    line: int  # where the row starts in its file (1-based); for a JSON array, the object's index + 1
    text_a: str
    text_b: str | None
    label: str | None


def file_format(path: str, given: str | None = None) -> str:
    """csv, tsv, jsonl or json: `given` (--file_format), else from the extension."""
    if given:
        if given not in FORMATS.values():
            raise AlbertError(f"--file_format {given!r} is unknown; use one of {', '.join(FORMATS.values())}")
        return given
    extension = os.path.splitext(path)[1].lower()
    if extension not in FORMATS:
        raise AlbertError(f"{path}: cannot tell the format from the extension {extension or '(none)'!r}; name the "
                          f"file .csv, .tsv, .jsonl or .json, or pass --file_format")
    return FORMATS[extension]


def decoded(path: str, encoding: str = "utf-8") -> str:
    """The file's text, its byte order mark left out; a byte the encoding cannot read is one line naming the line."""
    with open(path, "rb") as f:
        data = f.read()
    if encoding.replace("_", "-").lower() in ("utf-8", "utf8") and data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise AlbertError(f"{path}:{line}: byte 0x{data[e.start]:02x} is not {encoding} text; pass the file's "
                          "encoding with --encoding (e.g. --encoding=latin-1)") from None
    except LookupError:
        raise AlbertError(f"--encoding {encoding!r} is not an encoding Python knows (e.g. utf-8, latin-1, cp1252)") \
            from None


def _records(path: str, text: str, kind: str):
    """(line, list of fields or dict) of each non-blank record."""
    if kind == "csv":
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        start = 1
        try:
            for fields in reader:
                if any(field.strip() for field in fields):
                    yield start, fields
                start = reader.line_num + 1
        except csv.Error as e:
            raise AlbertError(f"{path}:{reader.line_num}: not CSV ({e}); quote a field that holds a quote, a comma "
                              "or a newline, doubling its quotes") from None
    elif kind == "tsv":
        for number, line in enumerate(text.split("\n"), 1):
            line = line.removesuffix("\r")
            if line.strip():
                yield number, line.split("\t")
    elif kind == "jsonl":
        for number, line in enumerate(text.split("\n"), 1):
            if line.strip():
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as e:
                    raise AlbertError(f"{path}:{number}: not JSON ({e.msg} at column {e.colno})") from None
                if not isinstance(value, dict):
                    raise AlbertError(f"{path}:{number}: a JSON Lines row must be an object {{\"column\": value}}")
                yield number, value
    else:
        try:
            values = json.loads(text)
        except json.JSONDecodeError as e:
            raise AlbertError(f"{path}:{e.lineno}: not JSON ({e.msg} at column {e.colno})") from None
        except RecursionError:
            raise AlbertError(f"{path}: JSON nested too deep to be a list of rows") from None
        if not isinstance(values, list) or not all(isinstance(v, dict) for v in values):
            raise AlbertError(f"{path}: a .json file must hold one array of objects [{{\"column\": value}}, ...]; "
                              "for one object per line name it .jsonl")
        yield from enumerate(values, 1)


def _text(value) -> str | None:
    """A cell as text: JSON numbers as written (1, not 1.0), None for an empty or missing cell."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = value if isinstance(value, str) else json.dumps(value) if isinstance(value, (list, dict)) else str(value)
    return text if text.strip() else None


def read_rows(path: str, columns: Columns, header: bool = True, encoding: str = "utf-8",
              kind: str | None = None, labelled: bool = True) -> list:
    """The rows of a user's file. `labelled`: the label column must be there (train and dev files); a test file may
    lack it (its rows' label is None). A row without text, or without a label where one is needed, a column the
    file does not have, are one line naming the file and line."""
    kind = file_format(path, kind)
    records = _records(path, decoded(path, encoding), kind)
    places = {}  # field -> index (csv / tsv) or key (json)
    if kind in ("csv", "tsv"):
        names = None
        if header:
            first = next(records, None)
            if first is None:
                raise AlbertError(f"{path}: empty; it needs a header line and rows")
            names = [name.strip() for name in first[1]]
        for field, wanted in dataclasses.asdict(columns).items():
            if wanted is None:
                continue
            if names is None:
                if not isinstance(wanted, int) and not str(wanted).isdigit():
                    raise AlbertError(f"{FLAGS[field]} {wanted!r}: a file without a header names its columns by "
                                      "0-based index (e.g. 0)")
                places[field] = int(wanted)
            elif str(wanted) in names:
                places[field] = names.index(str(wanted))
            elif field == "label" and not labelled:
                continue  # a test file without labels
            else:
                raise AlbertError(f"{path}: no column {wanted!r} ({FLAGS[field]}); its columns are "
                                  f"{', '.join(repr(n) for n in names)}")
    else:
        places = {field: str(wanted) for field, wanted in dataclasses.asdict(columns).items() if wanted is not None}
    rows = []
    for line, record in records:
        cells = {}
        for field, place in places.items():
            if isinstance(record, dict):
                cells[field] = _text(record.get(place))
            elif place < len(record):
                cells[field] = _text(record[place])
            else:
                raise AlbertError(f"{path}:{line}: {len(record)} column(s), but {FLAGS[field]} is column {place} "
                                  "(0-based)")
        for field in ("text_a", "text_b"):
            if field in places and cells[field] is None:
                raise AlbertError(f"{path}:{line}: no text in column {getattr(columns, field)!r} ({FLAGS[field]})")
        if labelled and cells.get("label") is None:
            raise AlbertError(f"{path}:{line}: no label in column {columns.label!r} (--label_column)")
        rows.append(Row(line, cells["text_a"], cells.get("text_b"), cells.get("label")))
    if not rows:
        raise AlbertError(f"{path}: no rows")
    return rows


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def label_set(rows: list) -> list:
    """The distinct labels of the train rows: sorted by value when every one is a number, else as strings."""
    labels = {row.label for row in rows}
    if all(_number(label) is not None for label in labels):
        return sorted(labels, key=lambda label: (_number(label), label))
    return sorted(labels)


def check_labels(rows: list, labels: list, path: str, source: str = "the train file's"):
    """Every labelled row's label is one of `labels` (`source`: where they came from, for the message)."""
    known = set(labels)
    for row in rows:
        if row.label is not None and row.label not in known:
            raise AlbertError(f"{path}:{row.line}: label {row.label!r} is not one of {source} labels "
                              f"({', '.join(labels)}); pass --labels with every label")


LABELS_FILE = "labels.json"  # in a run's output_dir: the label names the model was trained with
SPLIT_FLAGS = {"train": "--train_file", "dev": "--dev_file", "test": "--test_file"}  # run_classifier.py's, run_ner.py's


@dataclasses.dataclass(frozen=True)
class OwnTask:
    """A classification (or regression) task on a user's files, with what run_classifier.py's job reads of a GLUE
    Task: `name` (metrics, the feature cache), `labels` (None: regression), `directory` (how exports describe it),
    `pair`, and `examples(split)`. Every file is read and checked when the task is made (`own_task`), before
    TensorFlow starts."""

    files: dict  # split -> path
    labels: tuple | None
    pair: bool
    rows: dict = dataclasses.field(repr=False, compare=False)  # split -> [Row]

    @property
    def name(self) -> str:
        return "own-regression" if self.labels is None else "own"

    @property
    def is_regression(self) -> bool:
        return self.labels is None

    @property
    def directory(self) -> str:
        return os.path.basename(self.files.get("train") or next(iter(self.files.values())))

    def examples(self, split: str) -> list:
        """The split's rows as InputExamples (guid: the row's 0-based index in its file)."""
        if split not in self.rows:
            raise AlbertError(f"no {SPLIT_FLAGS[split]} given: the {split} rows are read from it")
        placeholder = 0.0 if self.is_regression else self.labels[0]
        return [InputExample(str(index), row.text_a, row.text_b,
                             placeholder if row.label is None else float(row.label) if self.is_regression
                             else row.label)
                for index, row in enumerate(self.rows[split])]


def parse_labels(name: str, text: str) -> tuple:
    """--labels: comma-separated label names, each once."""
    labels = tuple(label.strip() for label in text.split(","))
    if not all(labels) or len(set(labels)) != len(labels):
        raise AlbertError(f"--{name} {text!r}: comma-separated label names, each once and none empty "
                          "(e.g. --labels=negative,positive)")
    return labels


def recorded_labels(output_dir: str) -> dict | None:
    """{"labels": [...] or None, "regression": bool} recorded in a run's directory, or None."""
    path = os.path.join(output_dir, LABELS_FILE)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            values = json.load(f)
        labels = values["labels"]
        if not (labels is None or (isinstance(labels, list) and labels and all(isinstance(x, str) for x in labels))):
            raise ValueError("labels")
        return {"labels": labels, "regression": bool(values.get("regression", labels is None)),
                "pair": bool(values.get("pair", False))}
    except (ValueError, KeyError, TypeError):
        raise AlbertError(f"{path}: not the labels file a training run writes ({{\"labels\": [...]}}); remove it "
                          "or pass --labels") from None


def labels_record(task: OwnTask) -> str:
    """The text of LABELS_FILE for a task."""
    return json.dumps({"labels": None if task.labels is None else list(task.labels),
                       "regression": task.is_regression, "pair": task.pair}, ensure_ascii=False, indent=1) + "\n"


def own_task(files: dict, columns: Columns, header: bool = True, encoding: str = "utf-8", kind: str | None = None,
             labels: tuple | None = None, regression: bool = False, recorded: dict | None = None) -> OwnTask:
    """Read and check every file of a task on a user's files (`files`: split -> path, None where not given).
    The labels: `labels` (--labels), else those `recorded` by the training run in its directory, else the train
    file's; each dev label must be one of them; a regression target must be a number."""
    given = {split: path for split, path in files.items() if path}
    for split, path in given.items():
        if not os.path.isfile(path):
            raise AlbertError(f"{path}: {SPLIT_FLAGS[split]} not found")
    if regression and labels:
        raise AlbertError("--regression predicts a number: leave out --labels")
    if recorded is not None and recorded["regression"] != regression:
        what, fix = ("regression", "pass") if recorded["regression"] else ("classification", "leave out")
        raise AlbertError(f"the run's {LABELS_FILE} says it is a {what} run; {fix} --regression")
    pair = columns.text_b is not None
    if recorded is not None and not given:
        pair = recorded["pair"]  # an export-only run: the model's inputs as trained
    elif recorded is not None and recorded["pair"] != pair:
        fix = "pairs: pass --text_b_column" if recorded["pair"] else "single texts: leave out --text_b_column"
        raise AlbertError(f"the run's {LABELS_FILE} says it was trained on {fix}")
    rows = {split: read_rows(path, columns, header, encoding, kind, labelled=split != "test")
            for split, path in given.items()}
    if regression:
        for split, split_rows in rows.items():
            for row in split_rows:
                if row.label is not None and _number(row.label) is None:
                    raise AlbertError(f"{given[split]}:{row.line}: label {row.label!r} is not a number "
                                      "(--regression)")
        return OwnTask(given, None, pair, rows)
    if labels and recorded is not None and tuple(recorded["labels"]) != tuple(labels):
        raise AlbertError(f"--labels {','.join(labels)}: the run's {LABELS_FILE} has {','.join(recorded['labels'])}; "
                          "a run's labels stay as it was trained (another --output_dir for other labels)")
    if labels:
        source = "--labels'"
    elif recorded is not None:
        labels, source = tuple(recorded["labels"]), f"the run's {LABELS_FILE}"
    elif "train" in rows:
        labels, source = tuple(label_set(rows["train"])), "the train file's"
    else:
        raise AlbertError("which labels? pass --labels, or --train_file, or the --output_dir of the training run "
                          f"(its {LABELS_FILE})")
    if len(labels) < 2:
        raise AlbertError(f"{given.get('train', '--labels')}: one label ({labels[0]!r}); a classifier needs at least "
                          "two (for a numeric target pass --regression)")
    for split, split_rows in rows.items():
        check_labels(split_rows, list(labels), given[split], source)
    return OwnTask(given, tuple(labels), pair, rows)
