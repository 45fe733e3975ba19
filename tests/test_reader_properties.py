"""Property tests of the readers of a user's files: rows of arbitrary Unicode text (quotes, separators, CR / LF in
fields, a BOM, long and empty fields) written by the standard writers (csv with each quoting style, a TSV writer,
JSON Lines and JSON arrays, a CoNLL writer, the GLUE layouts, SQuAD and RACE JSON, a corpus) read back as exactly
the rows written, or refused in one line naming the file where the format or the reader's rules cannot hold them.
Hypothesis runs seeded (derandomize) with a fixed number of examples: the same inputs every run."""

import csv
import gzip
import io
import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from albert.data.corpus import read_lines
from albert.ground.errors import AlbertError
from albert.tasks import glue, race, squad
from albert.tasks.conll import Sentence, read_sentences
from albert.tasks.glue import InputExample
from albert.tasks.own_data import Columns, Row, read_rows
from albert.tasks.race import RaceExample
from albert.tasks.squad import SquadExample
from tests.reader_targets import message_fault


SCALE = int(os.environ.get("ALBERT_PROPERTY_SCALE", "1"))  # tools/fuzz_readers.py --properties: more examples


def examples(count: int):
    """Seeded Hypothesis settings: `count` examples in the fast tier (times SCALE in a campaign, seeded anew)."""
    return settings(max_examples=count * SCALE, derandomize=SCALE == 1, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large])


# ----------------------------------------------------------------------------------------------------- texts
SPECIALS = ('"', "'", ",", ";", "\t", "\r", "\n", "\r\n", " ", "\u00a0", "\u2028", "\u2029", "\x85", "\x0c", "\x0b",
            "\x1c", "\x1e", "\ufeff", "\\", "{", "}", "[", "]", "é", "😀", "\u0301", "\x00", "-DOCSTART-", "0", "1",
            "\\ud800", "\\\\udc00", "\\u00e9", "𝄞")  # a backslash then `ud800` is text, no surrogate
ANY_CHAR = st.characters(blacklist_categories=("Cs",))  # every code point but lone surrogates (no UTF-8 for them)
PIECE = st.one_of(st.sampled_from(SPECIALS), ANY_CHAR, st.text(ANY_CHAR, min_size=250, max_size=400))


def texts(without: str = "", max_pieces: int = 8):
    """Text of pieces: specials, any character, now and then a long run (over the 200 a message shows)."""
    return st.lists(PIECE, max_size=max_pieces).map("".join).map(lambda t: "".join(c for c in t if c not in without))


LINE_ENDS = st.sampled_from(["\n", "\r\n", "\r"])
LINE_END = re.compile(r"\r\n|\r|\n")
LABEL_BREAKS = "\t\r\n"  # a label holding one of these (after trimming) must be refused
MAYBE_BREAKS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")  # refused or kept (control characters)


def refused_in_one_line(call, path) -> str:
    """The one-line message of the AlbertError `call` raises (naming `path`)."""
    with pytest.raises(AlbertError) as caught:
        call()
    message = str(caught.value)
    assert message_fault(message, str(path)) is None, (message_fault(message, str(path)), message)
    return message


def label_outcome(label: str):
    """What a label cell reads as: the trimmed text, None (no label: refused), or "refused" (a break inside);
    "either" where the break is one of the Unicode separators a reader may refuse or keep."""
    trimmed = label.strip()
    if not trimmed:
        return None
    if any(c in trimmed for c in LABEL_BREAKS):
        return "refused"
    return "either" if MAYBE_BREAKS.search(trimmed) else trimmed


def expect_rows(path, read, written, lines: bool = True):
    """`written`: [(line, text_a, text_b, label)] as written; the reader gives exactly those rows (texts as written,
    labels trimmed), or refuses in one line when a row has no text, no label or a label with a line break.
    `lines` False: the rows' line numbers are not compared (their order is)."""
    refuse, either = not written, False
    for _, text_a, text_b, label in written:
        outcome = label_outcome(label)
        refuse |= not text_a.strip() or (text_b is not None and not text_b.strip()) or outcome in (None, "refused")
        either |= outcome == "either"
    if refuse:
        refused_in_one_line(read, path)
        return
    try:
        rows = read()
    except AlbertError as e:
        assert either, str(e)  # only a label with a Unicode separator inside may be refused here
        assert message_fault(str(e), str(path)) is None, str(e)
        return
    expected = [Row(line, a, b, label.strip()) for line, a, b, label in written]
    if not lines:
        rows = [Row(0, r.text_a, r.text_b, r.label) for r in rows]
        expected = [Row(0, r.text_a, r.text_b, r.label) for r in expected]
    assert rows == expected


# ------------------------------------------------------------------------------------------------ own files: CSV
QUOTING = {"minimal": csv.QUOTE_MINIMAL, "all": csv.QUOTE_ALL, "nonnumeric": csv.QUOTE_NONNUMERIC}
ROW = st.tuples(texts(), texts(), texts(max_pieces=3))


def _lines_before(text: str) -> int:
    return len(LINE_END.findall(text))


@pytest.mark.parametrize("quoting", QUOTING)
@examples(80)
@given(rows=st.lists(ROW, max_size=5), ending=st.sampled_from(["\r\n", "\n", "\r"]), bom=st.booleans(),
       final_end=st.booleans(), pair=st.booleans())
def test_csv_written_by_pythons_writer_reads_back(tmp_path_factory, quoting, rows, ending, bom, final_end, pair):
    """Python's csv writer, with each quoting style and line end, read back exactly. (Python's writer quotes a field
    holding CR or LF only when that character is in its line terminator -- QUOTE_MINIMAL with "\\n" writes a lone
    CR bare -- so with "\\n" or "\\r" line ends the texts leave out the other one: that file could hold no row.)"""
    other = {"\r\n": "", "\n": "\r", "\r": "\n"}[ending]
    rows = [tuple("".join(c for c in cell if c not in other) for cell in row) for row in rows]
    out, written = io.StringIO(), []
    writer = csv.writer(out, quoting=QUOTING[quoting], lineterminator=ending)
    writer.writerow(["text_a", "text_b", "label"] if pair else ["text_a", "label"])
    for text_a, text_b, label in rows:
        line = _lines_before(out.getvalue()) + 1
        writer.writerow([text_a, text_b, label] if pair else [text_a, label])
        if any(cell.strip() for cell in ((text_a, text_b, label) if pair else (text_a, label))):
            written.append((line, text_a, text_b if pair else None, label))  # a row of blank cells is a blank line
    text = out.getvalue()
    if not final_end:
        text = text.removesuffix(ending)
    path = tmp_path_factory.mktemp("csv") / "train.csv"
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))
    columns = Columns("text_a", "text_b" if pair else None, "label")
    expect_rows(path, lambda: read_rows(str(path), columns), written)


@examples(40)
@given(cells=st.lists(texts(without='"\r\n'), min_size=2, max_size=3),
       spaces=st.lists(st.sampled_from(["", " ", "  ", "\t"]), min_size=6, max_size=6))
def test_csv_quoted_field_after_spaces_is_read_whole(tmp_path_factory, cells, spaces):
    """`1, "a, b"`: a quoted field after spaces (and before the delimiter) is the quoted text, whole."""
    cells = [cell.replace(",", ", ") for cell in cells]
    fields = [f'{spaces[i]}"{cell}"{spaces[i + 3]}' for i, cell in enumerate(cells)]
    path = tmp_path_factory.mktemp("csv") / "train.csv"
    path.write_bytes(("a,b,c\r\n" + ",".join(fields) + "\r\n").encode("utf-8"))
    columns = Columns(0, 1 if len(cells) == 3 else None, len(cells) - 1)
    written = [(1, "a", "b" if len(cells) == 3 else None, "c" if len(cells) == 3 else "b")]
    if any(cell.strip() for cell in cells):  # a record of blank cells is a blank line
        written.append((2, cells[0], cells[1] if len(cells) == 3 else None, cells[-1]))
    expect_rows(path, lambda: read_rows(str(path), columns, header=False), written)


# ------------------------------------------------------------------------------------------------ own files: TSV
@examples(80)
@given(rows=st.lists(st.tuples(texts(without="\t\r\n"), texts(without="\t\r\n"), texts(without="\t\r\n", max_pieces=3)),
                     max_size=5),
       ending=LINE_ENDS, bom=st.booleans(), blank_lines=st.lists(st.booleans(), min_size=6, max_size=6),
       labelled=st.booleans())
def test_tsv_reads_back(tmp_path_factory, rows, ending, bom, blank_lines, labelled):
    """Tab-separated rows (a cell holds no tab and no line end: the format cannot hold them), blank lines between,
    any line end: the rows as written, a quote being text. A test file may lack the label column."""
    lines, written = ["text_a\ttext_b\tlabel" if labelled else "text_a\ttext_b"], []
    for index, (text_a, text_b, label) in enumerate(rows):
        if blank_lines[index]:
            lines.append("")
        cells = [text_a, text_b, label] if labelled else [text_a, text_b]
        lines.append("\t".join(cells))
        if any(cell.strip() for cell in cells):
            written.append((len(lines), text_a, text_b, label if labelled else "-"))
    path = tmp_path_factory.mktemp("tsv") / "data.tsv"
    path.write_bytes(("\ufeff" if bom else "").encode() + ending.join(lines).encode("utf-8") + ending.encode())
    columns = Columns("text_a", "text_b", "label" if labelled else None)
    read = lambda: read_rows(str(path), columns, labelled=labelled)  # noqa: E731
    if labelled:
        expect_rows(path, read, written)
    elif not written or any(not a.strip() or not b.strip() for _, a, b, _ in written):
        refused_in_one_line(read, path)
    else:
        assert read() == [Row(line, a, b, None) for line, a, b, _ in written]


def test_tsv_cell_with_a_lone_cr_is_two_lines(tmp_path):
    """CR ends a line in a TSV file as LF does: `a\\rb\\t1` is two lines, not a row whose text holds a CR."""
    path = tmp_path / "data.tsv"
    path.write_bytes(b"text\tlabel\r\na\rb\t1\r\n")
    assert read_rows(str(path), Columns(0, None, 1), header=False, labelled=False) == [
        Row(1, "text", None, "label"), Row(2, "a", None, None), Row(3, "b", None, "1")]


# --------------------------------------------------------------------------------------- own files: JSON Lines
JSON_VALUE_TEXT = texts(max_pieces=6)


@examples(80)
@given(rows=st.lists(st.tuples(JSON_VALUE_TEXT, JSON_VALUE_TEXT, texts(max_pieces=3)), max_size=5),
       ending=LINE_ENDS, ascii_only=st.booleans(), array=st.booleans(), bom=st.booleans())
def test_json_lines_and_arrays_read_back(tmp_path_factory, rows, ending, ascii_only, array, bom):
    """JSON Lines (any line end) and a JSON array of objects: the texts as written, labels trimmed."""
    objects = [{"text_a": a, "text_b": b, "label": label} for a, b, label in rows]
    if array:
        text = "[" + ending + ("," + ending).join(json.dumps(o, ensure_ascii=ascii_only) for o in objects) + "]"
        path = tmp_path_factory.mktemp("json") / "train.json"
    else:
        text = "".join(json.dumps(o, ensure_ascii=ascii_only) + ending for o in objects)
        path = tmp_path_factory.mktemp("jsonl") / "train.jsonl"
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))
    read = lambda: read_rows(str(path), Columns("text_a", "text_b", "label"))  # noqa: E731
    written = [(index + 1 + array, a, b, label) for index, (a, b, label) in enumerate(rows)]  # where it starts
    expect_rows(path, read, written)


JSON_ONE_LINE_CASES = {  # what a JSON reader must refuse in one line naming file:line
    "duplicate key": '{"text_a": "a", "text_a": "b", "label": "1"}',
    "lone surrogate": '{"text_a": "a\\ud800", "label": "1"}',
    "lone low surrogate": '{"text_a": "\\udc00x", "label": "1"}',
    "deep nesting": '{"text_a": "a", "label": "1", "x": ' + "[" * 100000 + "]" * 100000 + "}",
    "huge integer": '{"text_a": "a", "label": ' + "9" * 5000 + "}",
    "NaN": '{"text_a": "a", "label": NaN}',
}


@pytest.mark.parametrize("case", JSON_ONE_LINE_CASES)
@pytest.mark.parametrize("reader", ["own-jsonl", "own-json", "ner-jsonl", "squad", "race"])
def test_json_limits_are_one_line_naming_the_line(tmp_path, case, reader):
    """Each JSON reader refuses a duplicate key, a lone surrogate, nesting past the parser's depth and an integer
    past Python's digit limit in one line naming file:line (the bad object is on line 2)."""
    good = '{"text_a": "fine", "label": "0"}'
    bad = JSON_ONE_LINE_CASES[case]
    if reader == "own-jsonl":
        path = tmp_path / "train.jsonl"
        path.write_text(good + "\n" + bad + "\n", encoding="utf-8")
        read = lambda: read_rows(str(path), Columns("text_a", None, "label"))  # noqa: E731
    elif reader == "own-json":
        path = tmp_path / "train.json"
        path.write_text("[" + good + ",\n" + bad + "]\n", encoding="utf-8")
        read = lambda: read_rows(str(path), Columns("text_a", None, "label"))  # noqa: E731
    elif reader == "ner-jsonl":
        path = tmp_path / "train.jsonl"
        path.write_text('{"tokens": ["a"], "tags": ["O"]}\n' + bad.replace('"text_a"', '"tokens"') + "\n",
                        encoding="utf-8")
        read = lambda: read_sentences(str(path))  # noqa: E731
    elif reader == "squad":
        path = tmp_path / "squad.json"
        path.write_text('{"data": [\n' + bad + "]}\n", encoding="utf-8")
        read = lambda: squad.read_examples(str(path), False)  # noqa: E731
    else:
        directory = tmp_path / "RACE" / "train" / "middle"
        directory.mkdir(parents=True)
        path = directory / "all.txt"
        path.write_text(json.dumps(RACE_ARTICLE) + "\n" + bad + "\n", encoding="utf-8")
        read = lambda: race.read_examples(str(tmp_path), "train", middle_only=True)  # noqa: E731
    message = refused_in_one_line(read, path)
    assert message.startswith(f"{path}:2: "), message


# ---------------------------------------------------------------------------------------- own files: no header
@examples(40)
@given(rows=st.lists(st.tuples(texts(without="\t\r\n"), texts(without="\t\r\n", max_pieces=3)), min_size=1,
                     max_size=4),
       kind=st.sampled_from(["csv", "tsv"]))
def test_no_header_indexes_and_labels_trimmed(tmp_path_factory, rows, kind):
    """Without a header the columns are 0-based indexes; a label `" 1 "` is `1`."""
    path = tmp_path_factory.mktemp("noheader") / f"train.{kind}"
    if kind == "csv":
        out = io.StringIO()
        csv.writer(out).writerows([[label, text] for text, label in rows])
        data = out.getvalue()
    else:
        data = "".join(f"{label}\t{text}\n" for text, label in rows)
    path.write_bytes(data.encode("utf-8"))
    written = [(i + 1, text, None, label) for i, (text, label) in enumerate(rows)]
    if kind == "csv":  # line numbers: a quoted field's line ends count
        lines, out = [], io.StringIO()
        writer = csv.writer(out)
        for text, label in rows:
            lines.append(_lines_before(out.getvalue()) + 1)
            writer.writerow([label, text])
        written = [(line, text, None, label) for line, (text, label) in zip(lines, rows)]
    written = [w for w in written if w[1].strip() or w[3].strip()]
    expect_rows(path, lambda: read_rows(str(path), Columns(1, None, 0), header=False), written)


# --------------------------------------------------------------------------------------------------- CoNLL
WORD = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=6).filter(
    lambda w: not any(c.isspace() for c in w) and w != "-DOCSTART-" and not w.startswith("\ufeff"))
TAG = st.one_of(st.just("O"), st.builds(lambda p, t: f"{p}-{t}", st.sampled_from("BI"),
                                        st.sampled_from(["PER", "LOC", "ORG", "MISC", "X", "é"])))
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
RACE_ARTICLE = {"id": "m1.txt", "article": "a", "questions": ["q"], "options": [["a", "b", "c", "d"]],
                "answers": ["A"]}


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


UNICODE_SPACES = ["\u00a0", "\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\x1c", "\x1f", "\u3000", "\u2009"]


@examples(40)
@given(words=st.lists(st.tuples(WORD, st.sampled_from(UNICODE_SPACES), WORD, TAG), min_size=1, max_size=3),
       ending=LINE_ENDS, middle=st.booleans())
def test_conll_word_holding_a_unicode_space_is_never_cut(tmp_path_factory, words, ending, middle):
    """A CoNLL word holding a Unicode space other than space and tab (no-break space, U+2028, U+0085, form feed,
    ideographic space...): read whole, or refused in one line -- never cut into a shorter word with the rest taken
    for a middle column (columns are separated by spaces and tabs, as CoNLL's files are written)."""
    lines = [" ".join([a + space + b, "NN", "O", tag] if middle else [a + space + b, tag])
             for a, space, b, tag in words]
    path = tmp_path_factory.mktemp("conll") / "train.txt"
    path.write_bytes(ending.join(lines).encode("utf-8"))
    try:
        sentences = read_sentences(str(path))
    except AlbertError as e:
        assert message_fault(str(e), str(path)) is None, str(e)
        return
    assert sentences == [Sentence(tuple(a + space + b for a, space, b, _ in words), tuple(t for *_, t in words), 1)]


BAD_BYTES = [b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\xe2\x82"]


@examples(60)
@given(before=st.lists(texts(without="\r\n\t,\"", max_pieces=3), min_size=1, max_size=5), ending=LINE_ENDS,
       bad=st.sampled_from(BAD_BYTES), reader=st.sampled_from(["csv", "tsv", "conll", "glue", "corpus"]))
def test_bytes_not_utf8_name_their_line(tmp_path_factory, before, ending, bad, reader):
    """A byte UTF-8 cannot read, after lines of any text and line end: one line naming file:line of that byte."""
    directory = tmp_path_factory.mktemp("bad")
    head = ending.join(["a\tb" if reader in ("tsv", "glue") else "a,b" if reader == "csv" else "x O"] +
                       [f"{t}\t1" if reader in ("tsv", "glue") else f"{t},1" if reader == "csv" else f"x{t} O"
                        for t in before]) + ending
    data = head.encode("utf-8") + b"y" + bad + b" O" + ending.encode()
    line = len(before) + 2
    if reader == "glue":
        (directory / "SST-2").mkdir()
        path = directory / "SST-2" / "train.tsv"
        read = lambda: glue.read_examples(glue.get_task("sst-2"), str(directory), "train")  # noqa: E731
    elif reader == "corpus":
        path = directory / "corpus.txt"
        read = lambda: list(read_lines(str(path)))  # noqa: E731
    elif reader == "conll":
        path = directory / "train.txt"
        read = lambda: read_sentences(str(path))  # noqa: E731
    else:
        path = directory / f"train.{reader}"
        read = lambda: read_rows(str(path), Columns(0, None, 1), header=False)  # noqa: E731
    path.write_bytes(data)
    message = refused_in_one_line(read, path)
    assert message.startswith(f"{path}:{line}: "), message


@examples(40)
@given(rows=st.lists(st.tuples(st.text(st.characters(codec="cp1252", blacklist_characters="\t\r\n"), min_size=1,
                                       max_size=20).filter(str.strip), st.sampled_from(["0", "1", " 1"])),
                     min_size=1, max_size=4),
       encoding=st.sampled_from(["utf-16", "cp1252", "latin-1", "utf-8-sig"]), ending=LINE_ENDS)
def test_other_encodings_read_back(tmp_path_factory, rows, encoding, ending):
    """--encoding: a TSV file in UTF-16 (its BOM), cp1252, Latin-1 or UTF-8 with a BOM reads back as written."""
    if encoding == "latin-1":
        rows = [(t.encode("cp1252").decode("latin-1"), label) for t, label in rows]
        rows = [(t, label) for t, label in rows if t.strip()]  # cp1252's ellipsis is Latin-1's U+0085: text
    path = tmp_path_factory.mktemp("enc") / "train.tsv"
    path.write_bytes(ending.join(["text\tlabel"] + [f"{t}\t{label}" for t, label in rows]).encode(encoding))
    expect_rows(path, lambda: read_rows(str(path), Columns("text", None, "label"), encoding=encoding),
                [(i + 2, t, None, label) for i, (t, label) in enumerate(rows)])


COLUMN_NAMES = st.one_of(st.sampled_from(["0", "1", "01", "²", "١", "1 ", " 1", "-1", "1.0", "x", "label", "",
                                          "9" * 30, "\u2028", "a\nb"]), st.text(max_size=5), st.integers(-2, 3))


@examples(60)
@given(text_a=COLUMN_NAMES, label=COLUMN_NAMES, header=st.booleans(), labelled=st.booleans(),
       kind=st.sampled_from(["csv", "tsv", "jsonl"]))
def test_any_column_flag_is_a_column_or_one_line(tmp_path_factory, text_a, label, header, labelled, kind):
    """--text_a_column / --label_column of any value (Unicode digits, spaces, signs, huge numbers, line breaks): a
    column, or one line. Without a header a column is ASCII digits: `²` is no index. A test file may lack the label
    column: its rows' label is then None."""
    path = tmp_path_factory.mktemp("columns") / f"train.{kind}"
    if kind == "jsonl":
        path.write_text('{"0": "zero", "1": "one", "x": "ex", "label": "1"}\n', encoding="utf-8")
    else:
        separator = "," if kind == "csv" else "\t"
        path.write_text(separator.join(["x", "label"]) + "\n" + separator.join(["text", "1"]) + "\n",
                        encoding="utf-8")
    read = lambda: read_rows(str(path), Columns(text_a, None, label), header=header, labelled=labelled)  # noqa: E731
    try:
        rows = read()
    except AlbertError as e:
        assert message_fault(str(e), str(path)) is None or message_fault(str(e), "--") is None, str(e)
        if not header and kind != "jsonl" and str(text_a) in ("0", "1"):
            assert str(label) not in ("0", "1") or not labelled
        return
    if kind != "jsonl" and not header:
        assert isinstance(text_a, int) or (text_a.isascii() and text_a.isdigit()), (text_a, rows)
    assert all(row.text_a for row in rows)


@pytest.mark.parametrize("encoding,data", [
    ("utf-7", b"text\tlabel\r\nfine\t0\r\na\t+2AA-\r\n"),
    ("utf-7", b"text\tlabel\nfine\t0\na+2AA-\t1\n"),
    ("unicode_escape", b"text\tlabel\nfine\t0\na\\ud800\t1\n"),
    ("raw_unicode_escape", b"text\tlabel\nfine\t0\n\\udfff\t1\n"),
])
@pytest.mark.parametrize("reader", ["tsv", "conll"])
def test_lone_surrogates_from_any_encoding_are_refused(tmp_path, encoding, data, reader):
    """Whatever --encoding decodes the file, a lone surrogate (no character: no tokenizer and no UTF-8 file takes
    it) is refused in one line naming its line (3), before anything is written."""
    if reader == "conll":
        data = data.replace(b"\t", b" ").replace(b"text label", b"x O").replace(b"fine 0", b"y O").replace(
            b" 1", b" O").replace(b"a +2AA-", b"+2AA- O")
        path = tmp_path / "train.txt"
        read = lambda: read_sentences(str(path), encoding=encoding)  # noqa: E731
    else:
        path = tmp_path / "train.tsv"
        read = lambda: read_rows(str(path), Columns("text", None, "label"), encoding=encoding)  # noqa: E731
    path.write_bytes(data)
    assert refused_in_one_line(read, path).startswith(f"{path}:3: ")
