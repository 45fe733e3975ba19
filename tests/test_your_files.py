"""A user's files as people have them, read exactly or refused in one line: each case of docs/failure-behaviour.md's
"Your files" table. Readings are checked in-process on the readers (the rows or sentences a file gives); refusals
through the command line (exit status 2, one line on stderr, no output directory left behind), and every message
of the table is in the page, word for word."""

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from albert.ground.errors import AlbertError
from albert.tasks.conll import read_sentences
from albert.tasks.own_data import Columns, read_rows
from tests.helpers import ROOT

HF = os.path.join(ROOT, "tests", "fixtures", "weights", "hf_pretraining")
DOCS = os.path.join(ROOT, "docs", "failure-behaviour.md")


def write(path, content):
    with open(path, "wb") as f:
        f.write(content.encode("utf-8") if isinstance(content, str) else content)
    return str(path)


# ------------------------------------------------------------------------------------------------------ readings
READINGS = [  # (file name, bytes, Columns or "conll"/"jsonl", header, labelled, what it reads as)
    ("cr.conll", "EU B-ORG\rrejects O\r\rPeter B-PER\r", "conll", True, True,
     [(("EU", "rejects"), ("B-ORG", "O")), (("Peter",), ("B-PER",))]),
    ("cr.tsv", "text\tlabel\r\na\t1\rb\t0\n", Columns("text", label="label"), True, True, [("a", "1"), ("b", "0")]),
    ("spaces.csv", "text, label\nhi, 1\nho, 0\n", Columns("text", label="label"), True, True,
     [("hi", "1"), ("ho", "0")]),
    ("trailing.csv", "text,label\ngood,positive\nfine,positive \n", Columns("text", label="label"), True, True,
     [("good", "positive"), ("fine", "positive")]),
    ("quote_after_space.csv", 'label,text\n1, "a, b"\n0,c\n', Columns("text", label="label"), True, True,
     [("a, b", "1"), ("c", "0")]),
    ("tags.jsonl", '{"tokens": ["EU", "Peter"], "tags": ["B-ORG", "B-PER "]}\n{"tokens": ["x"], "tags": ["O\\n"]}\n',
     "jsonl", True, True, [(("EU", "Peter"), ("B-ORG", "B-PER")), (("x",), ("O",))]),
    ("test_no_label.csv", "a first text\nand a second\n", Columns("0", label="1"), False, False,
     [("a first text", None), ("and a second", None)]),
    ("test_no_label_header.csv", "text\na first text\n", Columns("text", label="label"), True, False,
     [("a first text", None)]),
    ("separators.tsv", "text\tlabel\na\u2028b\x0cc\x85d\t1\n", Columns("text", label="label"), True, True,
     [("a\u2028b\x0cc\x85d", "1")]),
    ("numbers.jsonl", '{"text": "a", "label": 12345678901234567890.0}\n{"text": "b", "label": 1e400}\n'
     '{"text": "c", "label": 2}\n', Columns("text", label="label"), True, True,
     [("a", "12345678901234567890"), ("b", "1e400"), ("c", "2")]),
]


@pytest.mark.parametrize("name,content,columns,header,labelled,expected", READINGS, ids=[r[0] for r in READINGS])
def test_a_file_reads_as_written(tmp_path, name, content, columns, header, labelled, expected):
    path = write(tmp_path / name, content)
    if columns in ("conll", "jsonl"):
        assert [(s.words, s.tags) for s in read_sentences(path, labelled=labelled)] == expected
    else:
        assert [(r.text_a, r.label) for r in read_rows(path, columns, header, labelled=labelled)] == expected


def test_crlf_cr_and_lf_number_lines_alike(tmp_path):
    for end in ("\n", "\r\n", "\r"):
        path = write(tmp_path / "a.csv", end.join(["text,label", "a,1", "", '"two', 'lines",0', "c,"]) + end)
        with pytest.raises(AlbertError) as e:
            read_rows(path, Columns("text", label="label"))
        assert str(e.value) == f"{path}:6: no label in column 'label' (--label_column)"


# ------------------------------------------------------------------------------------------------------ refusals
def _deep(depth: int) -> str:
    return '{"text": ' + "[" * depth + "]" * depth + ', "label": "a"}\n'


GOOD = "text,label\na good film,positive\na bad film,negative\n"
# (id, files {name: bytes}, extra arguments, the one line after "run_classifier.py: error: ", with {d} the files'
# directory). The base arguments: --train_file={d}/train.csv --text_a_column=text.
REFUSALS = [
    ("deep jsonl", {"train.jsonl": _deep(100_000)}, ["--train_file={d}/train.jsonl"],
     "{d}/train.jsonl:1: JSON nested too deep to read (over 1000 levels): refused"),
    ("unicode digit", {"train.csv": "a good film,positive\na bad film,negative\n"},
     ["--noheader", "--text_a_column=\u00b2", "--label_column=1"],
     "--text_a_column '\u00b2': a file without a header names its columns by 0-based index (e.g. 0)"),
    ("surrogate text", {"train.jsonl": '{"text": "a \\ud800 film", "label": "a"}\n{"text": "b", "label": "b"}\n'},
     ["--train_file={d}/train.jsonl"],
     "{d}/train.jsonl:1: the escape '\\\\ud800' is half of a UTF-16 surrogate pair, not a character; write the "
     "character itself or both halves of its pair"),
    ("surrogate label", {"train.jsonl": '{"text": "a", "label": "x"}\n{"text": "b", "label": "\\udc00"}\n'},
     ["--train_file={d}/train.jsonl"],
     "{d}/train.jsonl:2: the escape '\\\\udc00' is half of a UTF-16 surrogate pair, not a character; write the "
     "character itself or both halves of its pair"),
    ("duplicate key", {"train.jsonl": '{"text": "a", "label": "x", "label": "y"}\n'}, ["--train_file={d}/train.jsonl"],
     "{d}/train.jsonl:1: the key 'label' appears twice in one object; keep one"),
    ("huge number", {"train.jsonl": '{"text": "a", "label": ' + "9" * 5000 + "}\n"}, ["--train_file={d}/train.jsonl"],
     "{d}/train.jsonl:1: a number of more than 4300 digits: refused"),
    ("label line break", {"train.jsonl": '{"text": "a", "label": "x"}\n{"text": "b", "label": "y\\nz"}\n'},
     ["--train_file={d}/train.jsonl"],
     "{d}/train.jsonl:2: label 'y\\nz' holds a tab, a line break or another control character; a label is one line "
     "of text"),
    ("duplicate column", {"train.csv": "text,text,label\na,b,positive\nc,d,negative\n"}, [],
     "{d}/train.csv:1: 2 columns are named 'text' (--text_a_column); rename all but one"),
    ("array label", {"train.jsonl": '{"text": "a", "label": ["pos", "x"]}\n'}, ["--train_file={d}/train.jsonl"],
     "{d}/train.jsonl:1: column 'label' (--label_column) holds an array ('[\"pos\", \"x\"]'); a cell is one string "
     "or number"),
    ("one label given", {}, ["--labels=positive"],
     "--labels 'positive': one label ('positive'); a classifier needs at least two (for a numeric target pass "
     "--regression)"),
    ("underscore number", {"train.csv": "text,label\na,1_000\nb,2\n"}, ["--regression"],
     "{d}/train.csv:2: label '1_000' is not a finite number (--regression)"),
    ("utf-16 without bom", {"train.csv": "hello,pos\nbye,neg".encode("utf-16-le")},
     ["--noheader", "--text_a_column=0", "--label_column=1"],
     "{d}/train.csv:1: label '\\x00p\\x00o\\x00s\\x00' holds a tab, a line break or another control character; a "
     "label is one line of text (a NUL: is the file UTF-16? pass --encoding=utf-16)"),
    ("path line break", {}, ["--train_file={d}/new\nline.csv"], "'{d}/new\\nline.csv': --train_file not found"),
    ("directory", {"data.csv/x": ""}, ["--train_file={d}/data.csv"],
     "{d}/data.csv: is a directory; pass the --train_file itself"),
    ("fifo", {"pipe.csv": None}, ["--train_file={d}/pipe.csv"],
     "{d}/pipe.csv: is a FIFO (named pipe), not a regular file; pass a regular file as the --train_file"),
    ("device", {}, ["--train_file=/dev/zero"],
     "/dev/zero: is a character device, not a regular file; pass a regular file as the --train_file"),
    ("text after quote", {"train.csv": 'text,label\n"a" film,positive\nb,negative\n'}, [],
     "{d}/train.csv:2: text after the closing quote of field 1; quote the whole field, doubling the quotes inside "
     "it (\"\")"),
    ("unclosed quote", {"train.csv": 'text,label\n"a film,positive\nb,negative\n'}, [],
     "{d}/train.csv:2: a quote opens field 1 and is never closed; close it, or double the quotes inside a quoted "
     "field (\"\")"),
    ("nan", {"train.jsonl": '{"text": "a", "label": NaN}\n'}, ["--train_file={d}/train.jsonl"],
     "{d}/train.jsonl:1: not JSON (NaN is not a JSON value; write it as a string)"),
    ("infinite target", {"train.csv": "text,label\na,1e999\nb,2\n"}, ["--regression"],
     "{d}/train.csv:2: label '1e999' is not a finite number (--regression)"),
]


def _run(tmp_path, case):
    name, files, extra, expected = case
    d = tmp_path / re.sub(r"\W", "_", name)
    d.mkdir()
    for file, content in files.items():
        target = d / file
        target.parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            os.mkfifo(target)
        elif file.endswith("/x"):
            continue
        else:
            write(target, content)
    if "train.csv" not in files and not any(a.startswith("--train_file") for a in extra):
        write(d / "train.csv", GOOD)
    out = d / "out"
    args = [f"--train_file={d}/train.csv", "--text_a_column=text", f"--output_dir={out}", f"--init_checkpoint={HF}",
            "--max_seq_length=16", "--do_train", "--train_step=1", *[a.format(d=d) for a in extra]]
    result = subprocess.run([sys.executable, "run_classifier.py", *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=120, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    return result, expected.format(d=d), out


def test_each_refusal_is_one_line_exit_2_and_nothing_written(tmp_path):
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda case: (case, *_run(tmp_path, case)), REFUSALS))
    for case, result, expected, out in results:
        assert result.returncode == 2, (case[0], result.stderr[-2000:])
        assert result.stderr.splitlines() == [f"run_classifier.py: error: {expected}"], case[0]
        assert not os.path.exists(out), case[0]


def test_every_message_of_the_table_is_in_the_docs():
    with open(DOCS, encoding="utf-8") as f:
        page = f.read()
    section = page[page.index("## Your files"):]
    for name, _, _, expected in REFUSALS:
        shown = expected.replace("{d}/", "").replace("'{d}/", "'")
        assert shown.replace("|", "\\|") in section, name


def test_permission_refused_is_one_line_with_the_os_reason(tmp_path, monkeypatch):
    path = write(tmp_path / "train.csv", GOOD)
    real_open = os.open

    def refusing(file, *args, **kwargs):
        if str(file) == path:
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing)
    from albert.tasks.own_data import own_task

    with pytest.raises(AlbertError) as e:
        own_task({"train": path}, Columns("text", label="label"))
    assert str(e.value) == f"{path}: cannot read the --train_file (Permission denied)"


def test_every_reader_opens_through_the_ground(tmp_path):
    """Whatever reader meets a directory, a FIFO or a device, it says what the path is (and reads nothing)."""
    from albert.ground.userfiles import read_text
    from albert.tasks import glue, squad

    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "dir").mkdir()
    for path, kind in ((tmp_path / "pipe", "is a FIFO (named pipe), not a regular file"),
                       (tmp_path / "dir", "is a directory"), ("/dev/zero", "is a character device")):
        for read in (lambda p: read_text(p, "file"), lambda p: squad.read_examples(p, False),
                     lambda p: read_rows(p, Columns("text"), kind="csv"), lambda p: read_sentences(p)):
            with pytest.raises(AlbertError, match=f"^{re.escape(str(path))}: {re.escape(kind)}"):
                read(str(path))
    os.makedirs(tmp_path / "glue" / "RTE" / "train.tsv")
    with pytest.raises(AlbertError, match=r"train.tsv: is a directory; pass the rte train file itself$"):
        glue.read_examples(glue.get_task("rte"), str(tmp_path / "glue"), "train")


def test_a_long_value_is_cut_in_the_message(tmp_path):
    path = write(tmp_path / "dev.csv", "text,label\n" + "a,positive\nb,negative\nc," + "x" * 5000 + "\n")
    with pytest.raises(AlbertError) as e:
        from albert.tasks.own_data import check_labels

        check_labels(read_rows(path, Columns("text", label="label")), ["negative", "positive"], path)
    message = str(e.value)
    assert len(message) < 400 and "'" + "x" * 200 + "…'" in message and "\n" not in message


def test_json_positions_count_cr_line_ends(tmp_path):
    path = write(tmp_path / "a.jsonl", '{"text": "a", "label": 1}\r{"text": "b", "label": }\r')
    with pytest.raises(AlbertError) as e:
        read_rows(path, Columns("text", label="label"))
    assert str(e.value) == f"{path}:2: not JSON (Expecting value at column 24)"
    array = write(tmp_path / "a.json", '[\r {"text": "a", "label": 1},\r {"text": "b", "label": 2, "label": 3}\r]')
    with pytest.raises(AlbertError) as e:
        read_rows(array, Columns("text", label="label"))
    assert str(e.value) == f"{array}:3: the key 'label' appears twice in one object; keep one"
    good = write(tmp_path / "b.json", '[\r\n {"text": "a", "label": 1},\r\n\r\n {"text": "b", "label": 2}]')
    assert [(r.line, r.text_a, r.label) for r in read_rows(good, Columns("text", label="label"))] == [
        (2, "a", "1"), (4, "b", "2")]


def test_corpus_lines_end_at_cr_too_and_chunks_split_no_crlf(tmp_path):
    from albert.ground.userfiles import stream_lines
    import io

    data = "first\r\nsecond\rthird\n\nfourth\u2028still fourth".encode()
    for chunk in (1, 2, 3, 7, 1 << 20):
        assert list(stream_lines(io.BytesIO(b"\xef\xbb\xbf" + data), "c.txt", chunk)) == [
            (1, "first"), (2, "second"), (3, "third"), (4, ""), (5, "fourth\u2028still fourth")]


def test_a_refused_run_leaves_no_folder_it_made(tmp_path):
    """--output_dir=a/b/c where none exists: after a refusal neither c nor the a/b it made above it is left."""
    from albert.ground.rundir import exclusive

    with pytest.raises(AlbertError):
        with exclusive(str(tmp_path / "a" / "b" / "c")):
            raise AlbertError("refused")
    assert os.listdir(tmp_path) == []
    (tmp_path / "kept").mkdir()
    with exclusive(str(tmp_path / "kept" / "run")):
        pass
    assert os.listdir(tmp_path) == ["kept"] and os.listdir(tmp_path / "kept") == []
