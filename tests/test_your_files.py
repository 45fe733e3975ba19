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
from albert.tasks.ner.conll import read_sentences
from albert.tasks.classification.own_data import Columns, read_rows
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
    ("comma in a text", {"train.csv": "text,label\ngreat, really,good,positive\nbad,negative\n"}, [],
     "{d}/train.csv:2: 4 fields where the header has 2; put a field holding a comma in double quotes (\"a, b\")"),
    ("tab in a text", {"train.tsv": "text\tlabel\ngreat\treally\tpositive\nbad\tnegative\n"},
     ["--train_file={d}/train.tsv"],
     "{d}/train.tsv:2: 3 fields where the header has 2; a TSV cell cannot hold a tab: take the tab out of the text"),
    ("a cell missing", {"train.csv": "text,label\ngood,positive\nbad\n"}, [],
     "{d}/train.csv:3: 1 field where the header has 2; give the row a cell for every column (an empty cell is nothing "
     "between two commas)"),
    ("1 and 1.0", {"train.csv": "text,label\na,1\nb,0\nc,1.0\n"}, [],
     "{d}/train.csv:4: label '1.0' and label '1' (line 2) are one number written two ways; write each class's label "
     "one way (both '1', or both '1.0')"),
    ("01 for --labels' 1", {"train.csv": "text,label\na,01\nb,0\n"}, ["--labels=0,1"],
     "{d}/train.csv:2: label '01' is --labels' label '1' written another way; write it '1'"),
]


def _squad(qas, version="v2.0"):
    return json.dumps({"version": version, "data": [{"title": "t", "paragraphs": [{"context": "Red fox jumps.",
                                                                                  "qas": qas}]}]})


def _qa(qid="q1", **fields):
    return {"id": qid, "question": "Who jumps?", "answers": [{"text": "fox", "answer_start": 4}], **fields}


ARTICLE = {"id": "m1.txt", "article": "A cat sat.", "questions": ["Who sat?"], "options": [["a cat", "a dog", "a rat",
                                                                                           "a bat"]], "answers": ["A"]}
# (id, file, bytes, the command line that reads it, the one line, with {p} the file's path). Each is read in-process by
# the reader that command line calls; the command lines print the line after "<program>: error: " with exit status
# 2 (tests/test_bad_inputs.py runs one of each).
TASK_REFUSALS = [
    ("is_impossible a string", "train.json", _squad([_qa(is_impossible="false")]), "run_squad.py --train_file",
     "{p}: question 'q1': \"is_impossible\" is 'false' (a string); write true or false, without quotes"),
    ("impossible with an answer", "train.json", _squad([_qa(is_impossible=True)]), "run_squad.py --train_file",
     "{p}: question 'q1': \"is_impossible\" is true but it has 1 answer; keep them as \"plausible_answers\" "
     "(\"answers\": []), or set \"is_impossible\": false"),
    ("a SQuAD id twice", "dev.json", _squad([_qa(), _qa(question="What jumps?")]), "run_squad.py --predict_file",
     "{p}: question id 'q1' is given twice; give each question its own id (predictions are keyed by it)"),
    ("answer_start a string", "train.json", _squad([_qa(answers=[{"text": "fox", "answer_start": "4"}])]),
     "run_squad.py --train_file", "{p}: question 'q1': answer 1 has \"answer_start\" '4' (a string); write the "
     "character offset of the answer in its context as an integer"),
    ("answer_start past the context", "train.json", _squad([_qa(answers=[{"text": "fox", "answer_start": 40}])]),
     "run_squad.py --train_file", "{p}: question 'q1': answer_start 40 of answer 'fox' is outside its context (14 "
     "characters); give the offset of the answer's first character (0-based)"),
    ("1.1 answers []", "dev.json", _squad([_qa(answers=[])], "1.1"), "run_squad.py --predict_file (1.1)",
     "{p}: question 'q1' has no answer (\"answers\": []), which SQuAD 1.1 scoring cannot score; for a SQuAD 2.0 "
     "file pass --version_2_with_negative, else give the question its answers"),
    ("scoring 1.1 answers []", "dev.json", _squad([_qa(answers=[])], "1.1"), "squad_eval",
     "{p}: question 'q1' has no answer (\"answers\": []), which SQuAD 1.1 scoring cannot score; give its answers, "
     "or score the file as SQuAD 2.0 (\"version\": \"v2.0\")"),
    ("scoring a numeric text", "dev.json", _squad([_qa(answers=[{"text": 1889, "answer_start": 0}])], "1.1"),
     "squad_eval", "{p}: question 'q1': answer 1 has \"text\" 1889 (a number); write the answer's text as a string, "
     "in quotes"),
    ("scoring answers null", "dev.json", _squad([_qa(answers=None)]), "squad_eval",
     "{p}: question 'q1': \"answers\" is null; write a list of answer objects [{\"text\": ..., \"answer_start\": "
     "...}] ([] for none)"),
    ("a RACE id twice", "all.txt", json.dumps(ARTICLE) + "\n" + json.dumps(ARTICLE) + "\n", "run_race.py",
     "{p}:2: article id 'm1.txt' is given twice (first at {p}:1); give each article its own id (predictions are "
     "keyed by it)"),
    ("RACE options a string", "all.txt", json.dumps(dict(ARTICLE, options=["a cat, a dog, a rat, a bat"])) + "\n",
     "run_race.py", "{p}:1: question 'm1.txt-0' has options 'a cat, a dog, a rat, a bat' (a string); write a list "
     "of 4 option texts"),
    ("a control character in a tag", "train.txt", "EU B-ORG\nrejects B-P\x01ER\n", "run_ner.py",
     "{p}:2: tag 'B-P\\x01ER' holds a tab, a line break or another control character; a tag is one line of text"),
]


def _read_task_file(tmp_path, name, content, how):
    """What the command line `how` reads of a file `name` holding `content`; the file's path."""
    from albert.tasks.race import examples as race
    from albert.tasks.squad import examples as squad
    from albert.tasks.squad import evaluate as squad_eval

    directory = tmp_path / "RACE" / "train" / "middle" if how == "run_race.py" else tmp_path
    directory.mkdir(parents=True, exist_ok=True)
    path = write(directory / name, content)
    if how == "run_race.py":
        return lambda: race.read_examples(str(tmp_path), "train", middle_only=True), path
    if how == "run_ner.py":
        return lambda: read_sentences(path), path
    if how == "squad_eval":
        predictions = write(tmp_path / "predictions.json", '{"q1": "fox"}')
        return lambda: squad_eval.score_files(path, predictions), path
    version_2 = False if how.endswith("(1.1)") else None
    return lambda: squad.read_examples(path, how.endswith("--train_file"), version_2=version_2), path


@pytest.mark.parametrize("case", TASK_REFUSALS, ids=[case[0] for case in TASK_REFUSALS])
def test_each_task_file_refusal_is_its_one_line(tmp_path, case):
    _, name, content, how, expected = case
    read, path = _read_task_file(tmp_path, name, content, how)
    with pytest.raises(AlbertError) as e:
        read()
    assert str(e.value) == expected.replace("{p}", path)


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
    for name, file, _, how, expected in TASK_REFUSALS:
        assert f"| {how} | {expected.replace('{p}', file)} |" in section, name


def test_permission_refused_is_one_line_with_the_os_reason(tmp_path, monkeypatch):
    path = write(tmp_path / "train.csv", GOOD)
    real_open = os.open

    def refusing(file, *args, **kwargs):
        if str(file) == path:
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing)
    from albert.tasks.classification.own_data import own_task

    with pytest.raises(AlbertError) as e:
        own_task({"train": path}, Columns("text", label="label"))
    assert str(e.value) == f"{path}: cannot read the --train_file (Permission denied)"


def test_every_reader_opens_through_the_ground(tmp_path):
    """Whatever reader meets a directory, a FIFO or a device, it says what the path is (and reads nothing)."""
    from albert.ground.userfiles import read_text
    from albert.tasks.classification import glue
    from albert.tasks.squad import examples as squad

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
        from albert.tasks.classification.own_data import check_labels

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
