"""Property tests of the task readers: CoNLL and NER JSON Lines, the GLUE layouts, SQuAD and RACE JSON and the
pretraining corpus, written by their standard writers and read back exactly, or refused in one line naming the file
and line. Seeded Hypothesis, a fixed number of examples (tests/reader_properties.py)."""

import gzip
import json

import pytest
from hypothesis import given, strategies as st

from albert.data.corpus import read_lines
from albert.tasks import glue, race, squad
from albert.tasks.conll import Sentence, read_sentences
from albert.tasks.glue import InputExample
from albert.tasks.race import RaceExample
from albert.tasks.squad import SquadExample
from tests.reader_properties import examples, texts, LINE_ENDS, LINE_END, refused_in_one_line, WORD, TAG


# --------------------------------------------------------------------------------------------------- CoNLL
SEPARATOR = st.sampled_from([" ", "\t", "  ", " \t "])


@examples(100)
@given(documents=st.lists(st.lists(st.lists(st.tuples(WORD, TAG), min_size=1, max_size=4), min_size=1, max_size=3),
                          min_size=1, max_size=3),
       ending=LINE_ENDS, separator=SEPARATOR, middle=st.booleans(), docstart=st.booleans(), bom=st.booleans(),
       padding=st.sampled_from(["", " ", "\t"]), labelled=st.booleans())
def test_conll_written_reads_back(tmp_path_factory, documents, ending, separator, middle, docstart, bom, padding,
                                  labelled):
    """A CoNLL writer's file (2 or 4 columns, spaces or tabs, -DOCSTART- lines, blank lines between sentences, LF /
    CRLF / CR line ends, whitespace around the fields): the sentences, words and tags as written."""
    lines, expected = [], []
    for document in documents:
        if docstart:
            lines += [f"-DOCSTART-{separator}-X-{separator}-X-{separator}O" if middle else "-DOCSTART- O", ""]
        for index, sentence in enumerate(document):
            start = len(lines) + 1
            for word, tag in sentence:
                fields = [word, "NN", "I-NP", tag] if middle else [word, tag]
                lines.append(padding + separator.join(fields if labelled else [word]) + padding)
            lines.append(padding)
            expected.append(Sentence(tuple(w for w, _ in sentence), tuple(t for _, t in sentence) if labelled
                                     else None, start, docstart and index == 0))
    path = tmp_path_factory.mktemp("conll") / "train.txt"
    path.write_bytes(("\ufeff" if bom else "").encode() + ending.join(lines).encode("utf-8"))
    assert read_sentences(str(path), labelled=labelled) == expected


@examples(60)
@given(sentences=st.lists(st.lists(st.tuples(WORD, TAG, st.sampled_from(["", " ", "\t", " \u00a0"])), min_size=1,
                                   max_size=4), min_size=1, max_size=4),
       ending=LINE_ENDS, ascii_only=st.booleans())
def test_ner_json_lines_read_back_with_tags_trimmed(tmp_path_factory, sentences, ending, ascii_only):
    """{"tokens": [...], "tags": [...]} a line: the words as written, each tag trimmed of surrounding whitespace."""
    text = "".join(json.dumps({"tokens": [w for w, _, _ in s], "tags": [p + t + p for _, t, p in s]},
                              ensure_ascii=ascii_only) + ending for s in sentences)
    path = tmp_path_factory.mktemp("nerjsonl") / "train.jsonl"
    path.write_bytes(text.encode("utf-8"))
    assert read_sentences(str(path)) == [Sentence(tuple(w for w, _, _ in s), tuple(t for _, t, _ in s), i + 1)
                                         for i, s in enumerate(sentences)]


@pytest.mark.parametrize("data", [b"EU B-ORG\rrejects O\r\rPeter B-PER\r", b"EU B-ORG\r\nrejects O\r\n\r\nPeter B-PER"])
def test_conll_cr_line_ends(tmp_path, data):
    path = tmp_path / "train.txt"
    path.write_bytes(data)
    assert read_sentences(str(path)) == [Sentence(("EU", "rejects"), ("B-ORG", "O"), 1),
                                         Sentence(("Peter",), ("B-PER",), 4)]


@pytest.mark.parametrize("tag", ["O\n", "B-PER\r", "B-\nPER", "B-PER\r\n"])
def test_ner_tag_with_a_line_break_is_refused_in_one_line(tmp_path, tag):
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps({"tokens": ["EU"], "tags": [tag]}) + "\n", encoding="utf-8")
    if tag.strip() in ("O", "B-PER"):
        assert read_sentences(str(path)) == [Sentence(("EU",), (tag.strip(),), 1)]  # trimmed
    else:
        assert refused_in_one_line(lambda: read_sentences(str(path)), path).startswith(f"{path}:1: ")


# ---------------------------------------------------------------------------------------------------- GLUE
GLUE_TEXT = texts(without="\t\r\n", max_pieces=5)


def _glue_rows(draw, task, layout, count):
    width = max(c for c in (layout.text_a, layout.text_b or 0, layout.label or 0, layout.guid or 0)) + 1
    if layout.label == -1:
        width += 1
    rows = []
    for index in range(count):
        cells = [draw(st.sampled_from(["x", "id", str(index)])) for _ in range(width)]
        cells[layout.text_a] = draw(GLUE_TEXT)
        if layout.text_b is not None:
            cells[layout.text_b] = draw(GLUE_TEXT)
        if layout.label is not None:
            value = (repr(draw(st.floats(0, 5, allow_nan=False))) if task.is_regression
                     else draw(st.sampled_from(task.labels)))
            cells[layout.label] = draw(st.sampled_from(["", " "])) + value + draw(st.sampled_from(["", "  "]))
        rows.append(cells)
    return rows


@examples(120)
@given(data=st.data(), name=st.sampled_from(["sst-2", "cola", "mrpc", "qnli", "rte", "sts-b", "mnli", "qqp", "wnli"]),
       split=st.sampled_from(["train", "dev", "test"]), ending=LINE_ENDS, bom=st.booleans())
def test_glue_layouts_read_back(tmp_path_factory, data, name, split, ending, bom):
    """Each task's TSV layout, written with arbitrary texts (no tab, no line end) and labels with spaces around: the
    examples as written (guid, texts exactly, label trimmed; the test split's placeholder)."""
    task = glue.get_task(name)
    layout = task.splits[split]
    rows = _glue_rows(data.draw, task, layout, data.draw(st.integers(1, 4)))
    lines = (["\t".join(f"h{i}" for i in range(len(rows[0])))] if layout.header else []) + ["\t".join(r) for r in rows]
    directory = tmp_path_factory.mktemp("glue")
    (directory / task.directory).mkdir()
    (directory / task.directory / layout.file).write_bytes(
        ("\ufeff" if bom else "").encode() + ending.join(lines).encode("utf-8") + ending.encode())
    offset = 2 if layout.header else 1
    expected = []
    for index, row in enumerate(rows):
        label = task.placeholder if layout.label is None else row[layout.label].strip()
        expected.append(InputExample(row[layout.guid] if split == "test" else f"{split}-{index + offset - 1}",
                                     row[layout.text_a], row[layout.text_b] if layout.text_b is not None else None,
                                     float(label) if task.is_regression and layout.label is not None else label))
    assert glue.read_examples(task, str(directory), split) == expected


# --------------------------------------------------------------------------------------------------- SQuAD
@examples(80)
@given(paragraphs=st.lists(st.tuples(texts(max_pieces=6), st.lists(st.tuples(texts(max_pieces=3), st.integers(0, 500),
                                                                          st.integers(0, 40), st.booleans()),
                                                                min_size=1, max_size=3)), min_size=1, max_size=3),
       ascii_only=st.booleans(), indent=st.sampled_from([None, 1]), training=st.booleans(), bom=st.booleans())
def test_squad_json_reads_back(tmp_path_factory, paragraphs, ascii_only, indent, training, bom):
    """A SQuAD 2.0 file of arbitrary texts: every question, its context and its answer (the slice of the context
    at answer_start) as written."""
    data, expected, number = [], [], 0
    for context, questions in paragraphs:
        qas = []
        for question, start, length, impossible in questions:
            start = min(start, len(context))
            answer = context[start:start + length]
            qid = f"q{number}"
            number += 1
            qas.append({"id": qid, "question": question, "is_impossible": impossible,
                        "answers": [] if impossible else [{"text": answer, "answer_start": start}]})
            if not training:
                expected.append(SquadExample(qid, question, context))
            elif impossible:
                expected.append(SquadExample(qid, question, context, is_impossible=True))
            else:
                expected.append(SquadExample(qid, question, context, answer, start))
        data.append({"context": context, "qas": qas})
    path = tmp_path_factory.mktemp("squad") / "train.json"
    path.write_bytes(("\ufeff" if bom else "").encode() + json.dumps(
        {"version": "v2.0", "data": [{"title": "t", "paragraphs": data}]}, ensure_ascii=ascii_only,
        indent=indent).encode("utf-8"))
    assert squad.read_examples(str(path), training) == expected


# ---------------------------------------------------------------------------------------------------- RACE


@examples(60)
@given(articles=st.lists(st.tuples(texts(max_pieces=6), st.lists(st.tuples(texts(max_pieces=3), st.lists(
    texts(max_pieces=2), min_size=4, max_size=4), st.sampled_from(["A", "B", "C", "D", " C", "D\n"])), min_size=1,
    max_size=3)), min_size=1, max_size=3),
       layout=st.sampled_from(["all.txt", "articles"]), ascii_only=st.booleans(), ending=LINE_ENDS)
def test_race_json_reads_back(tmp_path_factory, articles, layout, ascii_only, ending):
    """RACE in both layouts (all.txt: one article a line; one file per article): every question with its article,
    options and answer as written (the answer letter trimmed)."""
    directory = tmp_path_factory.mktemp("race")
    level = directory / "RACE" / "dev" / "high"
    level.mkdir(parents=True)
    objects, expected = [], []
    for number, (article, questions) in enumerate(articles):
        objects.append({"id": f"high{number}.txt", "article": article, "questions": [q for q, _, _ in questions],
                        "options": [o for _, o, _ in questions], "answers": [a for _, _, a in questions]})
        expected += [RaceExample(f"high{number}.txt-{i}", "high", article, q, tuple(o), "ABCD".index(a.strip()))
                     for i, (q, o, a) in enumerate(questions)]
    if layout == "all.txt":
        (level / "all.txt").write_bytes("".join(json.dumps(o, ensure_ascii=ascii_only) + ending
                                                for o in objects).encode("utf-8"))
    else:
        for number, o in enumerate(objects):
            (level / f"{number:03d}.txt").write_bytes(json.dumps(o, ensure_ascii=ascii_only, indent=4).replace(
                "\n", ending).encode("utf-8"))
    assert race.read_examples(str(directory), "dev", high_only=True) == expected


# -------------------------------------------------------------------------------------------------- corpora
@examples(80)
@given(lines=st.lists(texts(without="\r\n", max_pieces=5), max_size=8), ending=LINE_ENDS, final_end=st.booleans(),
       bom=st.booleans(), compressed=st.booleans())
def test_corpus_lines_read_back(tmp_path_factory, lines, ending, final_end, bom, compressed):
    """A pretraining corpus, plain or gzip: the lines as written (U+2028, U+0085, form feed... are text), numbered
    from 1, at LF, CRLF or CR."""
    text = ending.join(lines) + (ending if final_end and lines else "")
    data = ("\ufeff" if bom else "").encode() + text.encode("utf-8")
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_bytes(gzip.compress(data, mtime=0) if compressed else data)
    expected = list(lines)
    if expected and not bom:
        expected[0] = expected[0].removeprefix("\ufeff")  # a BOM at the start is dropped, written or not
    if expected and not final_end and expected[-1] == "":
        expected.pop()  # no line end after an empty last line: the file ends with the previous line's end
    assert list(read_lines(str(path))) == list(enumerate(expected, 1))


@pytest.mark.parametrize("split", [b"\r|\n", b"|\r\n", b"\r\n|", b"\r|\r"])
def test_corpus_line_end_across_the_read_chunk(tmp_path, split):
    """A CRLF (or CR CR) where the reader's 1 MiB chunk ends is one line end (or two), never an extra line."""
    before, after = split.split(b"|")
    head = b"x" * ((1 << 20) - len(before))
    path = tmp_path / "corpus.txt"
    path.write_bytes(head + before + after + b"last\n")
    ends = len(LINE_END.findall((before + after).decode()))
    assert list(read_lines(str(path))) == [(1, head.decode())] + [(2, "")] * (ends - 1) + [(ends + 1, "last")]


@pytest.mark.parametrize("data,line", [(b"ok\n\xff\n", 2), (b"ok\r\rbad \xc3\n", 3), (b"\xed\xa0\x80\n", 1)])
def test_corpus_bad_utf8_one_line_naming_the_line(tmp_path, data, line):
    path = tmp_path / "corpus.txt"
    path.write_bytes(data)
    message = refused_in_one_line(lambda: list(read_lines(str(path))), path)
    assert message.startswith(f"{path}:{line}: "), message
