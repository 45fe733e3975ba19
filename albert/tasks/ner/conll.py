"""Token-classification files (run_ner.py): CoNLL columns and JSON Lines, read into sentences of words and tags.

    CoNLL       one word per line, columns separated by spaces or tabs, the word first and the tag last (CoNLL-2003's
                `EU NNP B-NP B-ORG`, or the 2-column `EU B-ORG`); a blank line ends a sentence; a `-DOCSTART-` line
                starts a document. Every line of a file has the same number of columns.
    JSON Lines  one sentence per line: {"tokens": ["EU", "rejects", ...], "tags": ["B-ORG", "O", ...]}.
A test file may have no tags (CoNLL: one column; JSON Lines: no "tags"). Tags are IOB1, IOB2 or IOBES
(albert.tasks.ner.entities), used as given. Each mistake is one line naming file:line (AlbertError).
"""

import dataclasses
import os
import re

from albert.ground import user_json, userfiles
from albert.ground.userfiles import LINE_END
from albert.ground.errors import AlbertError, shown
from albert.tasks.ner.entities import check_tag, split_tag

DOCSTART = "-DOCSTART-"
_COLUMNS = re.compile(r"[ \t]+")  # columns split at spaces and tabs; other Unicode spaces stay inside a word
FORMATS = ("conll", "jsonl")


@dataclasses.dataclass(frozen=True)
class Sentence:
    words: tuple
    tags: tuple | None  # None: a test file without tags
    line: int  # where the sentence starts in its file
    document_start: bool = False  # a -DOCSTART- line came before it (since the previous sentence)


def file_format(path: str, given: str | None = None) -> str:
    """conll or jsonl: `given` (--file_format), else .jsonl / .json -> jsonl, anything else CoNLL."""
    if given:
        if given not in FORMATS:
            raise AlbertError(f"--file_format {shown(given)} is unknown for run_ner.py; use conll or jsonl")
        return given
    return "jsonl" if os.path.splitext(path)[1].lower() in (".jsonl", ".json") else "conll"


def read_sentences(path: str, scheme: str = "IOB2", labelled: bool = True, encoding: str = "utf-8",
                   kind: str | None = None, what: str = "file") -> list:
    """The sentences of a CoNLL or JSON Lines file; `labelled`: tags must be there (train and dev files). Lines end
    at LF, CRLF or CR; words are kept as written, tags trimmed (a tag holding whitespace inside is refused)."""
    kind = file_format(path, kind)
    text = userfiles.read_text(path, what, encoding, userfiles.ENCODING_FIX)
    sentences = _jsonl(path, text, scheme, labelled) if kind == "jsonl" else _conll(path, text, scheme, labelled)
    if not sentences:
        raise AlbertError(f"{userfiles.where(path)}: no sentences")
    return sentences


def _conll(path: str, text: str, scheme: str, labelled: bool) -> list:
    sentences, words, tags, start, columns, document = [], [], [], 0, None, False

    def close():
        nonlocal words, tags, document
        if words:
            sentences.append(Sentence(tuple(words), tuple(tags) if tags else None, start, document))
            words, tags, document = [], [], False

    for number, line in enumerate(userfiles.lines(text), 1):
        fields = _COLUMNS.split(line.strip(" \t")) if line.strip() else []
        if not fields:
            close()
            continue
        if fields[0] == DOCSTART:
            close()
            document = True
            continue
        where = userfiles.where(path, number)
        if columns is None:
            columns = len(fields)
            if labelled and columns < 2:
                raise AlbertError(f"{where}: one column; a CoNLL line is `word ... tag` (the tag last)")
        elif len(fields) != columns:
            raise AlbertError(f"{where}: {len(fields)} column(s), but the file's lines have {columns}; a word holds "
                              "no space")
        if not words:
            start = number
        words.append(fields[0])
        if columns > 1:
            tag = userfiles.label_cell(fields[-1], where, "tag") or ""
            check_tag(tag, scheme, where)
            tags.append(tag)
    close()
    return sentences


def _jsonl(path: str, text: str, scheme: str, labelled: bool) -> list:
    sentences = []
    if text.lstrip().startswith("["):
        raise AlbertError(f"{userfiles.where(path)}: a JSON array; run_ner.py reads JSON Lines, one sentence object "
                          "{\"tokens\": [...], \"tags\": [...]} on each line")
    for number, value in user_json.json_lines(text, path):
        where = userfiles.where(path, number)
        if not isinstance(value, dict) or not isinstance(value.get("tokens"), list):
            raise AlbertError(f'{where}: a row is an object {{"tokens": [...], "tags": [...]}}')
        words, tags = value["tokens"], value.get("tags")
        if not words or not all(isinstance(w, str) and w.strip() and not _COLUMNS.search(w) and not LINE_END.search(w)
                                for w in words):
            raise AlbertError(f"{where}: \"tokens\" must be a non-empty list of words (strings without spaces, tabs "
                              "or line ends)")
        if tags is None:
            if labelled:
                raise AlbertError(f'{where}: no "tags"; train and dev rows need one tag per token')
        else:
            if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                raise AlbertError(f'{where}: "tags" must be a list of tag strings (e.g. "B-PER"), not ids')
            if len(tags) != len(words):
                raise AlbertError(f"{where}: {len(words)} tokens but {len(tags)} tags")
            tags = [userfiles.label_cell(tag, where, "tag") or "" for tag in tags]
            for tag in tags:
                check_tag(tag, scheme, where)
        sentences.append(Sentence(tuple(words), None if tags is None else tuple(tags), number))
    return sentences


def tag_set(sentences: list) -> list:
    """The distinct tags of the train sentences: O first, then by entity type and prefix (B, I, E, S)."""
    tags = {tag for sentence in sentences for tag in sentence.tags or ()}
    order = "BIES"
    return sorted(tags, key=lambda tag: (tag != "O", split_tag(tag)[1], order.find(split_tag(tag)[0])))


def check_tags(sentences: list, labels: list, path: str):
    """Every tag of `sentences` is one of the train file's `labels`."""
    known = set(labels)
    for sentence in sentences:
        for offset, tag in enumerate(sentence.tags or ()):
            if tag not in known:
                raise AlbertError(f"{userfiles.where(path)}: the sentence at line {sentence.line} has tag {shown(tag)} "
                                  f"(word {offset + 1}), which the train file never has ({', '.join(labels)})")


def is_cased(sentences: list) -> bool:
    """Whether the words hold upper-case letters (the released SentencePiece models lowercase them)."""
    return any(any(c.isupper() for c in word) for sentence in sentences[:2000] for word in sentence.words)
