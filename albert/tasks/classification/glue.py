"""GLUE tasks: each task's real file layout and quirks (spec §9.1), read into examples.

One declarative table says, per task and split, the file, whether it has a header, and which columns hold the
guid, the text(s) and the label. Quirks kept from the original: CoLA's train/dev files have no header, QQP skips
rows that are too short (the released train file has a few), STS-B labels are floats (regression), test splits
carry a placeholder label. Every other row holds as many fields as the file's first line (a tab inside a text
would shift the columns after it, the label taken from the text): refused in one line (userfiles.check_width).
"""

import dataclasses
import math
import os

from albert.ground import userfiles
from albert.ground.errors import AlbertError, shown

NLI_LABELS = ("contradiction", "entailment", "neutral")
ENTAILMENT_LABELS = ("entailment", "not_entailment")
BINARY_LABELS = ("0", "1")


@dataclasses.dataclass(frozen=True)
class InputExample:
    guid: str
    text_a: str
    text_b: str | None
    label: str | float


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where one split's fields are: column indices (-1 = last), or None. `guid` None means "<split>-<row>"."""

    file: str
    header: bool
    text_a: int
    text_b: int | None
    label: int | None  # None: the split's placeholder label
    guid: int | None = None


@dataclasses.dataclass(frozen=True)
class Task:
    name: str
    directory: str
    labels: tuple | None  # None: regression
    splits: dict  # split -> Layout
    placeholder: str | float = "0"  # label of the unlabelled test split
    skip_short_rows: bool = False

    @property
    def is_regression(self) -> bool:
        return self.labels is None

    @property
    def pair(self) -> bool:
        """Whether the task's examples are pairs (text_a, text_b)."""
        return any(layout.text_b is not None for layout in self.splits.values())


def _nli(dev, test, a, b):
    """Header, guid in column 0, texts in columns a and b, label last; the test split is unlabelled."""
    return dict(train=Layout("train.tsv", True, a, b, -1, 0), dev=Layout(dev, True, a, b, -1, 0),
                test=Layout(test, True, a, b, None, 0))


TASKS = {
    "mnli": Task("mnli", "MNLI", NLI_LABELS, _nli("dev_matched.tsv", "test_matched.tsv", 8, 9),
                 placeholder="contradiction"),
    "mismnli": Task("mismnli", "MNLI", NLI_LABELS, _nli("dev_mismatched.tsv", "test_mismatched.tsv", 8, 9),
                    placeholder="contradiction"),
    "mrpc": Task("mrpc", "MRPC", BINARY_LABELS, dict(
        train=Layout("train.tsv", True, 3, 4, 0), dev=Layout("dev.tsv", True, 3, 4, 0),
        test=Layout("test.tsv", True, 3, 4, None, 0))),
    "cola": Task("cola", "CoLA", BINARY_LABELS, dict(
        train=Layout("train.tsv", False, 3, None, 1), dev=Layout("dev.tsv", False, 3, None, 1),
        test=Layout("test.tsv", True, 1, None, None, 0))),
    "sst-2": Task("sst-2", "SST-2", BINARY_LABELS, dict(
        train=Layout("train.tsv", True, 0, None, 1), dev=Layout("dev.tsv", True, 0, None, 1),
        test=Layout("test.tsv", True, 1, None, None, 0))),
    "sts-b": Task("sts-b", "STS-B", None, dict(
        train=Layout("train.tsv", True, 7, 8, -1, 0), dev=Layout("dev.tsv", True, 7, 8, -1, 0),
        test=Layout("test.tsv", True, 7, 8, None, 0)), placeholder=0.0),
    "qqp": Task("qqp", "QQP", BINARY_LABELS, dict(
        train=Layout("train.tsv", True, 3, 4, 5, 0), dev=Layout("dev.tsv", True, 3, 4, 5, 0),
        test=Layout("test.tsv", True, 1, 2, None, 0)), skip_short_rows=True),
    "qnli": Task("qnli", "QNLI", ENTAILMENT_LABELS, _nli("dev.tsv", "test.tsv", 1, 2), placeholder="entailment"),
    "rte": Task("rte", "RTE", ENTAILMENT_LABELS, _nli("dev.tsv", "test.tsv", 1, 2), placeholder="entailment"),
    "wnli": Task("wnli", "WNLI", BINARY_LABELS, dict(
        train=Layout("train.tsv", True, 1, 2, -1), dev=Layout("dev.tsv", True, 1, 2, -1),
        test=Layout("test.tsv", True, 1, 2, None, 0))),
    "ax": Task("ax", "diagnostic", NLI_LABELS, dict(test=Layout("diagnostic.tsv", True, 1, 2, None, 0)),
               placeholder="contradiction"),
}


def get_task(name: str) -> Task:
    task = TASKS.get(name.lower())
    if task is None:
        raise AlbertError(f"unknown --task_name {name!r}; use one of {', '.join(TASKS)}")
    return task


def read_examples(task: Task, data_dir: str, split: str) -> list:
    """The examples of one split of a task directory in the GLUE layout."""
    if split not in task.splits:
        raise AlbertError(f"task {task.name} has no {split} split (it is predict-only)")
    layout = task.splits[split]
    path = os.path.join(data_dir, task.directory, layout.file)
    if not os.path.lexists(path):
        raise AlbertError(f"{userfiles.where(path)}: file not found; --data_dir must hold "
                          f"{task.directory}/{layout.file}")
    needed = max(c if c >= 0 else 0 for c in (layout.text_a, layout.text_b, layout.label, layout.guid)
                 if c is not None) + 1
    examples, width = [], None
    for lineno, row in userfiles.tsv_records(userfiles.read_text(path, f"{task.name} {split} file")):
        if width is None:
            width = len(row)  # the header's, or the first row's (CoLA's train and dev files have no header)
        if layout.header and lineno == 1:
            continue
        if len(row) < needed:
            if task.skip_short_rows and split != "test":  # a test row must give a submission line
                continue
            raise AlbertError(f"{userfiles.where(path, lineno)}: {len(row)} tab-separated column(s), {task.name} "
                              f"needs at least {needed}; fix or remove the row")
        userfiles.check_width(row, width, userfiles.where(path, lineno), "\t",
                              "the header" if layout.header else "the first row")
        examples.append(InputExample(
            guid=row[layout.guid] if layout.guid is not None and split == "test" else f"{split}-{lineno - 1}",
            text_a=row[layout.text_a], text_b=row[layout.text_b] if layout.text_b is not None else None,
            label=_label(task, layout, row, path, lineno)))
    if not examples:
        raise AlbertError(f"{userfiles.where(path)}: no examples" + (" (only the header line)" if layout.header
                                                                     else "") +
                          f"; --data_dir must hold the {task.name} {split} data")
    return examples


def _label(task, layout, row, path, lineno):
    if layout.label is None:
        return task.placeholder
    value = row[layout.label].strip()
    place = userfiles.where(path, lineno)
    if task.is_regression:
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise AlbertError(f"{place}: label {shown(value)} is not a finite number ({task.name} is a regression "
                              "task)")
        return number
    if value not in task.labels:
        raise AlbertError(f"{place}: unknown label {shown(value)} for {task.name}; expected one of "
                          f"{', '.join(task.labels)}")
    return value


@dataclasses.dataclass(frozen=True)
class InputFeatures:
    input_ids: list
    input_mask: list
    segment_ids: list
    label_id: int | float
    is_real_example: int = 1


def truncate_pair(tokens_a: list, tokens_b: list, max_length: int):
    """The original's rule: pop from the END of the longer list (B on ties) until the pair fits."""
    while len(tokens_a) + len(tokens_b) > max_length:
        (tokens_a if len(tokens_a) > len(tokens_b) else tokens_b).pop()


def convert_example(example: InputExample, task: Task, max_seq_length: int, tokenizer) -> InputFeatures:
    """[CLS] a [SEP] (b [SEP]) as ids, segment 0 through the first [SEP], padded with 0 (spec §9.2)."""
    tokens_a = tokenizer.tokenize(example.text_a)
    tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else []
    if tokens_b:
        truncate_pair(tokens_a, tokens_b, max_seq_length - 3)
    else:
        tokens_a = tokens_a[:max_seq_length - 2]
    tokens = ["[CLS]", *tokens_a, "[SEP]"]
    segment_ids = [0] * len(tokens)
    if tokens_b:
        tokens += [*tokens_b, "[SEP]"]
        segment_ids += [1] * (len(tokens_b) + 1)
    input_ids = tokenizer.convert_tokens_to_ids(tokens)
    padding = max_seq_length - len(input_ids)
    label = float(example.label) if task.is_regression else task.labels.index(example.label)
    return InputFeatures(input_ids + [0] * padding, [1] * len(input_ids) + [0] * padding, segment_ids + [0] * padding,
                         label)
