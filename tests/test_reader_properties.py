"""Property tests of the readers of a user's own classification files (run_classifier.py --train_file ...): rows of
arbitrary Unicode text (quotes, separators, CR / LF in fields, a BOM, long and empty fields) written by csv with each
quoting style, a TSV writer and JSON Lines / JSON arrays, with or without a header, read back as exactly the rows
written, or refused in one line naming the file. Hypothesis runs seeded (derandomize) with a fixed number of
examples: the same inputs every run (tests/reader_properties.py)."""

import csv
import io
import json

import pytest
from hypothesis import given, strategies as st

from albert.tasks.race import examples as race
from albert.tasks.squad import examples as squad
from albert.tasks.ner.conll import read_sentences
from albert.tasks.classification.own_data import Columns, Row, read_rows
from tests.reader_properties import examples, texts, LINE_ENDS, LINE_END, refused_in_one_line, expect_rows, RACE_ARTICLE


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
    """CR ends a line in a TSV file as LF does: `a\\rb\\t1` is two lines, not a row whose text holds a CR; the
    first of them, `a`, is a row of one field where the file's rows have two: refused, naming line 2."""
    path = tmp_path / "data.tsv"
    path.write_bytes(b"text\tlabel\r\na\rb\t1\r\n")
    message = refused_in_one_line(lambda: read_rows(str(path), Columns(0, None, 1), header=False, labelled=False),
                                  path)
    assert message == (f"{path}:2: 1 field where the first row has 2; give the row a cell for every column (an empty "
                       "cell is nothing between two tabs)")
    path.write_bytes(b"text\tlabel\r\na\t0\rb\t1\r\n")
    assert read_rows(str(path), Columns(0, None, 1), header=False, labelled=False) == [
        Row(1, "text", None, "label"), Row(2, "a", None, "0"), Row(3, "b", None, "1")]


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


# ---------------------------------------------------------------------------------- own files: widths, numbers
NONBLANK = texts(max_pieces=4).map(lambda text: "x" + text)  # a cell that is never blank
LABEL = st.sampled_from(["pos", "neg", " 1 ", "0"])


@pytest.mark.parametrize("kind", ["csv", "tsv"])
@examples(60)
@given(rows=st.lists(st.tuples(NONBLANK, LABEL, st.lists(texts(max_pieces=2), min_size=2, max_size=2)), min_size=1,
                     max_size=5),
       extra=st.integers(0, 2), bad=st.data(), header=st.booleans())
def test_a_row_of_another_width_is_refused_naming_its_line(tmp_path_factory, kind, rows, extra, bad, header):
    """Rows of as many fields as the header (or, without one, the first row) -- text, label and `extra` more --
    written by Python's csv writer or as tab-separated cells, read back exactly; one of them written with another
    number of fields (a cell lost, or a separator inside a text) is refused in one line naming its line."""
    clean = (lambda cell: cell) if kind == "csv" else (lambda cell: "".join(c for c in cell if c not in "\t\r\n"))
    width = 2 + extra
    records = [[clean(text), label, *map(clean, more[:extra])] for text, label, more in rows]
    names = ["text", "label", *(f"c{i}" for i in range(extra))]
    at = bad.draw(st.integers(0 if header else 1, len(records)), "bad row")  # len(records): no bad row
    if at < len(records):
        wrong = bad.draw(st.integers(1, width + 2).filter(lambda n: n != width), "its width")
        records[at] = (records[at] + [clean(f"y{i}") for i in range(wrong)])[:wrong]
    out, lines = io.StringIO(), []
    writer = csv.writer(out, lineterminator="\r\n")
    for record in ([names] if header else []) + records:
        lines.append(len(LINE_END.findall(out.getvalue())) + 1)
        if kind == "csv":
            writer.writerow(record)
        else:
            out.write("\t".join(record) + "\r\n")
    lines = lines[1:] if header else lines
    path = tmp_path_factory.mktemp("width") / f"train.{kind}"
    path.write_bytes(out.getvalue().encode("utf-8"))
    columns = Columns("text", None, "label") if header else Columns(0, None, 1)
    read = lambda: read_rows(str(path), columns, header=header)  # noqa: E731
    if at < len(records):
        first = "the header" if header else "the first row"
        message = refused_in_one_line(read, path)
        count = len(records[at])
        assert message.startswith(f"{path}:{lines[at]}: {count} field{'' if count == 1 else 's'} where {first} has "
                                  f"{width}; "), message
    else:
        assert read() == [Row(line, text, None, label.strip()) for line, (text, label, *_) in zip(lines, records)]


NUMBER = st.integers(0, 2).flatmap(lambda n: st.sampled_from([str(n), f"{n}.0", f"0{n}", f"{n}e0", f"{n}.00"]))


@examples(60)
@given(labels=st.lists(NUMBER, min_size=2, max_size=6))
def test_one_number_written_two_ways_is_one_line_never_two_classes(tmp_path_factory, labels):
    """Labels that are numbers: each spelled one way, they are the classes, sorted by value; the first label that
    spells an earlier one's number another way (`1` and `1.0`, `01`, `1e0`) is refused in one line naming both lines."""
    from albert.tasks.classification.own_data import own_task

    path = tmp_path_factory.mktemp("numbers") / "train.csv"
    path.write_text("text,label\n" + "".join(f"t{i},{label}\n" for i, label in enumerate(labels)), encoding="utf-8")
    read = lambda: own_task({"train": str(path)}, Columns("text", label="label"))  # noqa: E731
    first = {}
    for index, label in enumerate(labels):
        spelled, line = first.setdefault(float(label), (label, index + 2))
        if spelled != label:
            message = refused_in_one_line(read, path)
            assert message == (f"{path}:{index + 2}: label {label!r} and label {spelled!r} (line {line}) are one "
                               f"number written two ways; write each class's label one way (both {spelled!r}, or "
                               f"both {label!r})")
            return
    if len(first) < 2:
        refused_in_one_line(read, path)  # one class
    else:
        assert read().labels == tuple(sorted(set(labels), key=float))
