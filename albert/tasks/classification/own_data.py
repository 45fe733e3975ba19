"""A user's own classification files, read as users have them: CSV (RFC 4180 quoting: fields holding commas, quotes
and line ends; a quoted field may follow a space), TSV (plain tab-separated values, as GLUE's files and the IANA
format: a quote is text), JSON Lines and a JSON array of objects; LF, CRLF or CR line ends, a byte order mark, extra
unnamed columns and blank lines are fine. Opening, decoding, line ends and JSON's limits: albert.ground.userfiles.

Columns are named from the header (or, with `header=False`, given as 0-based indexes); each row becomes a `Row`
with the line it starts on, so every mistake is one line naming `file:line` (AlbertError). Labels are text: the
train file's distinct values (`label_set`: sorted as strings, or by value when every one is a number; JSON's 1 and
"1" are one label), or the user's list. One number written two ways (`1` and `1.0`, `1` and `01`) is refused in
one line, never two classes (`check_spellings`).
"""

import dataclasses
import json
import math
import os
import re

from albert.runner.settings import SPLIT_FLAGS
from albert.ground import user_json, userfiles
from albert.ground.errors import AlbertError, shown, shown_path
from albert.tasks.classification.glue import InputExample
from albert.weights.run_record import RECORD, read_record

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
    line: int  # where the row starts in its file (1-based); for a JSON array, the line its object starts on
    text_a: str
    text_b: str | None
    label: str | None


def file_format(path: str, given: str | None = None) -> str:
    """csv, tsv, jsonl or json: `given` (--file_format), else from the extension."""
    if given:
        if given not in FORMATS.values():
            raise AlbertError(f"--file_format {shown(given)} is unknown; use one of {', '.join(FORMATS.values())}")
        return given
    extension = os.path.splitext(path)[1].lower()
    if extension not in FORMATS:
        raise AlbertError(f"{shown_path(path)}: cannot tell the format from the extension "
                          f"{shown(extension or '(none)')}; name the file .csv, .tsv, .jsonl or .json, or pass "
                          "--file_format")
    return FORMATS[extension]


def _records(path: str, text: str, kind: str, header: bool = True):
    """(line, list of fields or dict) of each non-blank record; CSV and TSV records as wide as the first
    (userfiles.check_width)."""
    if kind in ("csv", "tsv"):
        records = userfiles.csv_records(text, path) if kind == "csv" else userfiles.tsv_records(text)
        width, first = None, "the header" if header else "the first row"
        for line, fields in records:
            if any(field.strip() for field in fields):
                if width is None:
                    width = len(fields)
                userfiles.check_width(fields, width, userfiles.where(path, line), "," if kind == "csv" else "\t",
                                      first)
                yield line, fields
        return
    if kind == "jsonl":
        values = user_json.json_lines(text, path, literal=True)
        shape = "a JSON Lines row must be an object {\"column\": value}"
    else:
        values = user_json.json_array_items(text, path, "a .json file must hold one array of objects "
                                            "[{\"column\": value}, ...]; for one object per line name it .jsonl",
                                            literal=True)
        shape = "a .json file holds objects {\"column\": value}; for one object per line name it .jsonl"
    for line, value in values:
        if not isinstance(value, dict):
            raise AlbertError(f"{userfiles.where(path, line)}: {shape}")
        yield line, value


def _text(value, place: str, column: str) -> str | None:
    """A cell as text: JSON numbers as written (`1.0` as `1`, `1e400` as `1e400`), None for an empty or missing cell;
    a JSON array or object is one line (a cell holds one text, label or number)."""
    if value is None:
        return None
    if isinstance(value, (list, dict)):
        kind = "an array" if isinstance(value, list) else "an object"
        raise AlbertError(f"{place}: {column} holds {kind} ({shown(json.dumps(value, ensure_ascii=False), 60)}); a "
                          "cell is one string or number")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, user_json.JsonNumber) and re.fullmatch(r"-?[0-9]+\.0+", value):
        value = value[:value.index(".")]
    text = str(value)  # a plain str, JsonNumbers included
    return text if text.strip() else None


def _places(path: str, records, columns: Columns, header: bool, kind: str, labelled: bool) -> dict:
    """field -> where its cell is: an index (CSV / TSV) or a key (JSON)."""
    if kind not in ("csv", "tsv"):
        return {field: str(wanted) for field, wanted in dataclasses.asdict(columns).items() if wanted is not None}
    places, names = {}, None
    if header:
        first = next(records, None)
        if first is None:
            raise AlbertError(f"{userfiles.where(path)}: empty; it needs a header line and rows")
        names = [name.strip() for name in first[1]]
    for field, wanted in dataclasses.asdict(columns).items():
        if wanted is None:
            continue
        if names is None:
            try:
                places[field] = userfiles.column_index(FLAGS[field], wanted)
            except AlbertError:
                if field == "label" and not labelled:
                    continue  # a test file without labels: whatever --label_column says
                raise
        elif names.count(str(wanted)) > 1:
            raise AlbertError(f"{userfiles.where(path, 1)}: {names.count(str(wanted))} columns are named "
                              f"{shown(wanted)} ({FLAGS[field]}); rename all but one")
        elif str(wanted) in names:
            places[field] = names.index(str(wanted))
        elif field == "label" and not labelled:
            continue  # a test file without labels
        else:
            raise AlbertError(f"{userfiles.where(path)}: no column {shown(wanted)} ({FLAGS[field]}); its columns are "
                              f"{', '.join(shown(n, 40) for n in names[:20])}{', ...' if len(names) > 20 else ''}")
    return places


def read_rows(path: str, columns: Columns, header: bool = True, encoding: str = "utf-8",
              kind: str | None = None, labelled: bool = True, what: str = "file") -> list:
    """The rows of a user's file. `labelled`: the label column must be there (train and dev files); a test file may
    lack it (its rows' label is None), with or without a header. A row without text, or without a label where one
    is needed, a column the file does not have, are one line naming the file and line. Texts are kept as written;
    labels are trimmed, and one holding a tab or a line break is refused."""
    kind = file_format(path, kind)
    text = userfiles.read_text(path, what, encoding, userfiles.ENCODING_FIX)
    records = _records(path, text, kind, header)
    places = _places(path, records, columns, header, kind, labelled)
    rows = []
    for line, record in records:
        place = userfiles.where(path, line)
        cells = {}
        for field, column in places.items():
            if isinstance(record, dict):
                cells[field] = _text(record.get(column), place, f"column {shown(column)} ({FLAGS[field]})")
            elif column < len(record):
                cells[field] = _text(record[column], place, f"column {column} ({FLAGS[field]})")
            elif field == "label" and not labelled:
                cells[field] = None
            else:
                raise AlbertError(f"{place}: {len(record)} column(s), but {FLAGS[field]} is column {column} "
                                  "(0-based)")
        for field in ("text_a", "text_b"):
            if field in places and cells[field] is None:
                raise AlbertError(f"{place}: no text in column {shown(getattr(columns, field))} ({FLAGS[field]})")
        label = cells.get("label")
        label = None if label is None else userfiles.label_cell(label, place)
        if labelled and label is None:
            raise AlbertError(f"{place}: no label in column {shown(columns.label)} (--label_column)")
        rows.append(Row(line, cells["text_a"], cells.get("text_b"), label))
    if not rows:
        raise AlbertError(f"{userfiles.where(path)}: no rows")
    return rows


_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")  # as CSV and JSON write them: no 1_000


def _number(text: str) -> float | None:
    if not _NUMBER.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _same_number(label: str, labels) -> str | None:
    """The label of `labels` that is the number `label` is, written another way (`1` for `1.0`, `01` or `1e0`)."""
    value = _number(label)
    if value is None:
        return None
    return next((other for other in labels if other != label and _number(other) == value), None)


def check_spellings(rows: list, path: str):
    """No number is two labels of one file: `1` and `1.0` (or `01`) are one line, never two classes. Merging them
    would pick one spelling to write back in the predictions, and two spellings of a number are as likely two
    sources of one class (a spreadsheet's 1.0, a typed 01) as two codes: the user says which."""
    seen = {}  # number -> (label, line) of its first spelling
    for row in rows:
        value = None if row.label is None else _number(row.label)
        if value is None:
            continue
        label, line = seen.setdefault(value, (row.label, row.line))
        if label != row.label:
            raise AlbertError(f"{userfiles.where(path, row.line)}: label {shown(row.label)} and label {shown(label)} "
                              f"(line {line}) are one number written two ways; write each class's label one way "
                              f"(both {shown(label)}, or both {shown(row.label)})")


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
            twin = _same_number(row.label, labels)
            if twin is not None:
                raise AlbertError(f"{userfiles.where(path, row.line)}: label {shown(row.label)} is {source} label "
                                  f"{shown(twin)} written another way; write it {shown(twin)}")
            raise AlbertError(f"{userfiles.where(path, row.line)}: label {shown(row.label)} is not one of {source} "
                              f"labels ({_listed(labels)}); pass --labels with every label")




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
        source = self.files.get("train") or next(iter(self.files.values()), None)
        return os.path.basename(source) if source else "own-files"  # an export-only run reads no file

    def examples(self, split: str) -> list:
        """The split's rows as InputExamples (guid: the row's 0-based index in its file)."""
        if split not in self.rows:
            raise AlbertError(f"no {SPLIT_FLAGS[split]} given: the {split} rows are read from it")
        placeholder = 0.0 if self.is_regression else self.labels[0]
        return [InputExample(str(index), row.text_a, row.text_b,
                             placeholder if row.label is None else float(row.label) if self.is_regression
                             else row.label)
                for index, row in enumerate(self.rows[split])]


def _listed(labels, separator: str = ", ") -> str:
    """Labels as a message lists them: plain when plain, quoted when they hold anything else, the first 20."""
    plain = all(label and label.isprintable() and label.strip() == label and "," not in label for label in labels)
    named = [label if plain else shown(label, 40) for label in list(labels)[:20]]
    return separator.join(named) + (f", ... ({len(labels)} in all)" if len(labels) > 20 else "")


def parse_labels(name: str, text: str) -> tuple:
    """--labels: comma-separated label names, each once, trimmed; none holding a tab or a line break."""
    labels = tuple(userfiles.label_cell(label, f"--{name}") or "" for label in text.split(","))
    if not all(labels) or len(set(labels)) != len(labels):
        raise AlbertError(f"--{name} {shown(text)}: comma-separated label names, each once and none empty "
                          "(e.g. --labels=negative,positive)")
    for label in labels:
        twin = _same_number(label, labels)
        if twin is not None:
            raise AlbertError(f"--{name} {shown(text)}: {shown(label)} and {shown(twin)} are one number written two "
                              "ways; name each class once")
    return labels


def recorded_labels(output_dir: str) -> dict | None:
    """{"labels": [...] or None, "regression": bool, "pair": bool} a training run on a user's files recorded in its
    directory (albert.weights.run_record), or None."""
    record = read_record(output_dir)
    if record is None or record.model_class != "AlbertClassifier" or record.task != "own":
        return None
    return {"labels": None if record.labels is None else list(record.labels), "regression": record.regression,
            "pair": record.pair}


def own_task(files: dict, columns: Columns, header: bool = True, encoding: str = "utf-8", kind: str | None = None,
             labels: tuple | None = None, regression: bool = False, recorded: dict | None = None) -> OwnTask:
    """Read and check every file of a task on a user's files (`files`: split -> path, None where not given).
    The labels: `labels` (--labels), else those `recorded` by the training run in its directory, else the train
    file's; each dev label must be one of them; a regression target must be a number."""
    given = {split: path for split, path in files.items() if path}
    for split, path in given.items():
        userfiles.check_readable(path, SPLIT_FLAGS[split])
    if regression and labels:
        raise AlbertError("--regression predicts a number: leave out --labels")
    if recorded is not None and recorded["regression"] != regression:
        what, fix = ("regression", "pass") if recorded["regression"] else ("classification", "leave out")
        raise AlbertError(f"the run's {RECORD} says it is a {what} run; {fix} --regression")
    pair = columns.text_b is not None
    if recorded is not None and not given:
        pair = recorded["pair"]  # an export-only run: the model's inputs as trained
    elif recorded is not None and recorded["pair"] != pair:
        fix = "pairs: pass --text_b_column" if recorded["pair"] else "single texts: leave out --text_b_column"
        raise AlbertError(f"the run's {RECORD} says it was trained on {fix}")
    rows = {split: read_rows(path, columns, header, encoding, kind, labelled=split != "test", what=SPLIT_FLAGS[split])
            for split, path in given.items()}
    if not regression:
        for split, split_rows in rows.items():
            check_spellings(split_rows, given[split])
    if regression:
        for split, split_rows in rows.items():
            for row in split_rows:
                if row.label is not None and _number(row.label) is None:
                    raise AlbertError(f"{userfiles.where(given[split], row.line)}: label {shown(row.label)} is not a "
                                      "finite number (--regression)")
        return OwnTask(given, None, pair, rows)
    if labels and recorded is not None and tuple(recorded["labels"]) != tuple(labels):
        raise AlbertError(f"--labels {_listed(labels, ',')}: the run's {RECORD} has "
                          f"{_listed(recorded['labels'], ',')}; "
                          "a run's labels stay as it was trained (another --output_dir for other labels)")
    if labels:
        source = "--labels'"
    elif recorded is not None:
        labels, source = tuple(recorded["labels"]), f"the run's {RECORD}"
    elif "train" in rows:
        labels, source = tuple(label_set(rows["train"])), "the train file's"
    else:
        raise AlbertError("which labels? pass --labels, or --train_file, or the --output_dir of the training run "
                          f"(its {RECORD})")
    if len(labels) < 2:
        where = f"--labels {shown(','.join(labels))}" if source == "--labels'" else \
            f"{shown_path(given['train'])}" if source == "the train file's" else source
        raise AlbertError(f"{where}: one label ({shown(labels[0])}); a classifier needs at least two (for a numeric "
                          "target pass --regression)")
    for split, split_rows in rows.items():
        check_labels(split_rows, list(labels), given[split], source)
    return OwnTask(given, tuple(labels), pair, rows)
