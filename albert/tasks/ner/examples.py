"""run_ner.py's data: every file read and checked before TensorFlow starts (`ner_task`), the tag set recorded in the
run directory (albert_run.json: albert.weights.run_record) and read back by evaluation-, prediction- and export-only
runs, and the predictions
written as CoNLL lines (what conlleval reads: `word gold predicted`, or `word predicted` for a test file, with the
input's -DOCSTART- lines and sentence breaks)."""

import dataclasses

from albert.runner.settings import SPLIT_FLAGS
from albert.ground import userfiles
from albert.ground.errors import AlbertError, shown
from albert.tasks.ner.conll import DOCSTART, check_tags, read_sentences, tag_set
from albert.weights.run_record import RECORD, read_record

@dataclasses.dataclass(frozen=True)
class NerTask:
    files: dict  # split -> path
    labels: tuple
    scheme: str
    sentences: dict = dataclasses.field(repr=False, compare=False)  # split -> [Sentence]

    def split(self, name: str) -> list:
        if name not in self.sentences:
            raise AlbertError(f"no {SPLIT_FLAGS[name]} given: the {name} sentences are read from it")
        return self.sentences[name]


def recorded(output_dir: str) -> dict | None:
    """{"labels": [...], "scheme": ...} a training run recorded in its directory (albert.weights.run_record), or
    None."""
    record = read_record(output_dir)
    if record is None or record.model_class != "AlbertTokenClassifier":
        return None
    return {"labels": list(record.labels), "scheme": record.scheme or "IOB2"}


def ner_task(files: dict, scheme: str = "IOB2", encoding: str = "utf-8", kind: str | None = None,
             recorded_labels: dict | None = None) -> NerTask:
    """Read and check every file given (`files`: split -> path or None); the tags: those the run recorded, else
    the train file's; every dev tag must be one of them."""
    given = {split: path for split, path in files.items() if path}
    for split, path in given.items():
        userfiles.check_readable(path, SPLIT_FLAGS[split])
    if recorded_labels is not None and recorded_labels["scheme"] != scheme:
        raise AlbertError(f"the run's {RECORD} says its tags are {recorded_labels['scheme']}; pass "
                          f"--tag_scheme={recorded_labels['scheme']}")
    sentences = {split: read_sentences(path, scheme, split != "test", encoding, kind, SPLIT_FLAGS[split])
                 for split, path in given.items()}
    if recorded_labels is not None:
        labels = list(recorded_labels["labels"])
        if "train" in sentences:
            check_tags(sentences["train"], labels, given["train"])
    elif "train" in sentences:
        labels = tag_set(sentences["train"])
    else:
        raise AlbertError(f"which tags? pass --train_file, or the --output_dir of the training run (its {RECORD})")
    if len(labels) < 2:
        raise AlbertError(f"{userfiles.where(given.get('train'))}: one tag ({shown(labels[0])}); token classification "
                          "needs at least two")
    for split in ("dev", "test"):
        if split in sentences:
            check_tags(sentences[split], labels, given[split])
    return NerTask(given, tuple(labels), scheme, sentences)


def prediction_lines(sentences: list, predicted: list) -> str:
    """CoNLL lines of predictions: `word gold predicted` (or `word predicted` for untagged sentences), a blank line
    after each sentence, the input's -DOCSTART- lines where they were."""
    out = []
    for sentence, tags in zip(sentences, predicted, strict=True):
        if sentence.document_start:
            out.append(f"{DOCSTART} O O\n\n" if sentence.tags is not None else f"{DOCSTART} O\n\n")
        gold = sentence.tags if sentence.tags is not None else [None] * len(sentence.words)
        for word, truth, guess in zip(sentence.words, gold, tags, strict=True):
            out.append(f"{word} {truth} {guess}\n" if truth is not None else f"{word} {guess}\n")
        out.append("\n")
    return "".join(out)
