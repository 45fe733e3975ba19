"""albert/tasks/classification/own_data.py: a user's own files, on real SST-2 and RTE rows (../shared/glue_real) written as users
write them, and on the files users actually have: quoted commas and newlines, CRLF, a byte order mark, latin-1,
spilled columns, blank trailing lines."""

import csv
import io
import json
import os

import pytest

from albert.ground.errors import AlbertError
from albert.tasks.classification.own_data import Columns, Row, check_labels, file_format, label_set, read_rows
from tests.helpers import shared_directory

GLUE = os.path.join(shared_directory(), "glue_real")


def sst2(count=40):
    with open(os.path.join(GLUE, "SST-2", "train.tsv"), encoding="utf-8") as f:
        rows = [line.split("\t") for line in f.read().splitlines()[1:count + 1]]
    return [(sentence, label) for sentence, label in rows]


def test_csv_tsv_and_json_lines_of_real_rows_read_the_same(tmp_path):
    rows = sst2() + [('he said, "a gripping film", and left', "1"), ("two\nlines, one review", "0")]
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(["sentence", "label", ""])  # an extra unnamed column
    writer.writerows([(s, label, "x") for s, label in rows])
    (tmp_path / "reviews.csv").write_bytes(b"\xef\xbb\xbf" + out.getvalue().encode("utf-8") + b"\r\n\r\n")
    (tmp_path / "reviews.jsonl").write_text("".join(json.dumps({"sentence": s, "label": int(label)}) + "\n"
                                                    for s, label in rows) + "\n", encoding="utf-8")
    (tmp_path / "reviews.json").write_text(json.dumps([{"sentence": s, "label": label} for s, label in rows]),
                                           encoding="utf-8")
    columns = Columns("sentence", label="label")
    expected = [(s, None, label) for s, label in rows]
    for name in ("reviews.csv", "reviews.jsonl", "reviews.json"):
        read = read_rows(str(tmp_path / name), columns)
        assert [(r.text_a, r.text_b, r.label) for r in read] == expected, name
    csv_rows = read_rows(str(tmp_path / "reviews.csv"), columns)
    assert csv_rows[0].line == 2 and csv_rows[-1].line == len(rows) + 1  # each row's first line
    assert label_set(csv_rows) == ["0", "1"]


def test_tsv_is_plain_a_quote_is_text_and_a_pair_reads_by_index(tmp_path):
    with open(os.path.join(GLUE, "RTE", "train.tsv"), encoding="utf-8") as f:
        lines = f.read().splitlines()[1:21]
    quoted = '99\t"Quoted start, no end\tplain second\tentailment'
    (tmp_path / "pairs.tsv").write_text("\r\n".join(lines + [quoted]) + "\r\n", encoding="utf-8")
    rows = read_rows(str(tmp_path / "pairs.tsv"), Columns(1, 2, 3), header=False)
    assert len(rows) == 21 and rows[-1] == Row(21, '"Quoted start, no end', "plain second", "entailment")
    assert [(r.text_a, r.text_b) for r in rows[:20]] == [tuple(line.split("\t")[1:3]) for line in lines]
    assert label_set(rows) == ["entailment", "not_entailment"]


def test_labels_sort_as_numbers_when_all_are_numbers_else_as_strings():
    def rows(*labels):
        return [Row(i, "t", None, label) for i, label in enumerate(labels)]

    assert label_set(rows("10", "2", "1", "2")) == ["1", "2", "10"]
    assert label_set(rows("neg", "pos", "neutral")) == ["neg", "neutral", "pos"]
    assert label_set(rows("10", "2", "x")) == ["10", "2", "x"]
    with pytest.raises(AlbertError, match=r"^dev.csv:7: label 'maybe' is not one of the train file's labels "
                                          r"\(neg, pos\); pass --labels with every label$"):
        check_labels([Row(7, "t", None, "maybe")], ["neg", "pos"], "dev.csv")


@pytest.mark.parametrize("name,content,columns,message", [
    ("a.csv", "sentence,label\nfine,1\n,0\n", Columns("sentence", label="label"),
     "a.csv:3: no text in column 'sentence' (--text_a_column)"),
    ("a.csv", "sentence,label\nfine,1\nno label,\n", Columns("sentence", label="label"),
     "a.csv:3: no label in column 'label' (--label_column)"),
    ("a.csv", "text,label\nfine,1\n", Columns("sentence", label="label"),
     "a.csv: no column 'sentence' (--text_a_column); its columns are 'text', 'label'"),
    ("a.csv", 'sentence,label\n"open quote,1\n', Columns("sentence", label="label"), "a.csv:"),
    ("a.tsv", "sentence\tlabel\nfine\t1\nshort\n", Columns("sentence", label="label"),
     "a.tsv:3: 1 field where the header has 2; give the row a cell for every column (an empty cell is nothing between "
     "two tabs)"),
    ("a.jsonl", '{"sentence": "ok", "label": 1}\n[1, 2]\n', Columns("sentence", label="label"),
     "a.jsonl:2: a JSON Lines row must be an object"),
    ("a.json", '{"sentence": "ok"}', Columns("sentence", label="label"), "a.json: a .json file must hold one array"),
    ("a.txt", "x", Columns("sentence"), "a.txt: cannot tell the format from the extension '.txt'"),
    ("a.csv", "sentence,label\n", Columns("sentence", label="label"), "a.csv: no rows"),
])
def test_each_mistake_is_one_line_naming_file_and_line(tmp_path, name, content, columns, message):
    (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(AlbertError) as raised:
        read_rows(str(tmp_path / name), columns)
    assert str(raised.value).startswith(str(tmp_path / message) if message.startswith(name) else message)
    assert "\n" not in str(raised.value)


def test_latin1_needs_its_encoding_and_a_test_file_may_have_no_label(tmp_path):
    path = tmp_path / "reviews.csv"
    path.write_bytes("sentence,label\nfine,1\nun film tr\xe8s \xe9mouvant,0\n".encode("latin-1"))
    with pytest.raises(AlbertError) as raised:
        read_rows(str(path), Columns("sentence", label="label"))
    assert str(raised.value) == (f"{path}:3: byte 0xe8 is not UTF-8 text; pass the file's encoding with --encoding "
                                 "(e.g. --encoding=latin-1)")
    assert read_rows(str(path), Columns("sentence", label="label"), encoding="latin-1")[1].text_a == \
        "un film très émouvant"
    test = tmp_path / "test.csv"
    test.write_text("id,sentence\n0,one\n1,two\n", encoding="utf-8")
    assert [r.label for r in read_rows(str(test), Columns("sentence", label="label"), labelled=False)] == [None] * 2
    assert file_format("x.CSV") == "csv" and file_format("x.data", "tsv") == "tsv"


def write_csv(path, header, rows):
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")
    return str(path)


def test_own_task_labels_from_train_then_the_run_directory_then_refused_when_they_differ(tmp_path):
    from albert.tasks.classification.own_data import own_task, recorded_labels
    from albert.weights.run_record import RECORD, RunRecord, write_record

    rows = [(s, "positive" if label == "1" else "negative") for s, label in sst2()]
    train = write_csv(tmp_path / "train.csv", ["sentence", "label"], rows)
    dev = write_csv(tmp_path / "dev.csv", ["sentence", "label"], rows[:5])
    test = write_csv(tmp_path / "test.csv", ["sentence"], [(s,) for s, _ in rows[:3]])
    columns = Columns("sentence", label="label")
    task = own_task({"train": train, "dev": dev, "test": test}, columns)
    assert (task.name, task.labels, task.pair, task.directory) == ("own", ("negative", "positive"), False, "train.csv")
    assert [(e.guid, e.text_a, e.label) for e in task.examples("dev")] == [(str(i), s, l) for i, (s, l)
                                                                           in enumerate(rows[:5])]
    assert [e.guid for e in task.examples("test")] == ["0", "1", "2"]
    run = tmp_path / "run"
    run.mkdir()
    write_record(str(run), RunRecord("AlbertClassifier", "own", task.labels, pair=task.pair,
                                     preprocessing={"max_seq_length": 64}))
    assert json.loads((run / RECORD).read_text()) == {
        "model_class": "AlbertClassifier", "task": "own", "labels": ["negative", "positive"], "regression": False,
        "pair": False, "preprocessing": {"max_seq_length": 64}}
    recorded = recorded_labels(str(run))
    assert recorded == {"labels": ["negative", "positive"], "regression": False, "pair": False}
    assert own_task({"test": test}, columns, recorded=recorded).labels == ("negative", "positive")  # predict-only
    assert own_task({}, columns, recorded=recorded).labels == ("negative", "positive")  # export-only
    with pytest.raises(AlbertError) as e:
        own_task({"dev": dev}, columns, labels=("bad", "good"), recorded=recorded)
    assert str(e.value) == ("--labels bad,good: the run's albert_run.json has negative,positive; a run's labels stay as "
                            "it was trained (another --output_dir for other labels)")
    with pytest.raises(AlbertError) as e:
        own_task({"dev": dev}, columns, regression=True, recorded=recorded)
    assert str(e.value) == "the run's albert_run.json says it is a classification run; leave out --regression"
    with pytest.raises(AlbertError) as e:
        own_task({"dev": dev}, Columns("sentence", "sentence", "label"), recorded=recorded)
    assert str(e.value) == "the run's albert_run.json says it was trained on single texts: leave out --text_b_column"
    with pytest.raises(AlbertError) as e:
        own_task({"test": test}, columns)
    assert str(e.value).startswith("which labels? pass --labels, or --train_file")
    (run / RECORD).write_text('{"labels": []}')
    with pytest.raises(AlbertError, match=r"albert_run.json: not the record a training run writes in its "
                                          r"directory \(its task, labels and preprocessing\); remove it"):
        recorded_labels(str(run))
    (run / RECORD).unlink()  # a run made before albert_run.json: its labels.json
    (run / "labels.json").write_text('{"labels": ["negative", "positive"], "regression": false, "pair": false}')
    assert recorded_labels(str(run)) == {"labels": ["negative", "positive"], "regression": False, "pair": False}
    write_record(str(run), RunRecord("AlbertClassifier", "rte", ("entailment", "not_entailment"), pair=True))
    assert recorded_labels(str(run)) is None  # a GLUE task's run: not a run on your own files


def test_own_task_json_numbers_regression_and_given_labels(tmp_path):
    from albert.tasks.classification.own_data import own_task

    lines = [{"text": "one", "score": 1}, {"text": "two", "score": "1"}, {"text": "three", "score": 10},
             {"text": "four", "score": 2.5}]
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    columns = Columns("text", label="score")
    assert own_task({"train": str(path)}, columns).labels == ("1", "2.5", "10")  # JSON 1 and "1": one label
    regression = own_task({"train": str(path)}, columns, regression=True)
    assert regression.name == "own-regression" and regression.labels is None
    assert [e.label for e in regression.examples("train")] == [1.0, 1.0, 10.0, 2.5]
    given = own_task({"train": str(path)}, columns, labels=("10", "2.5", "1"))
    assert given.labels == ("10", "2.5", "1")  # the user's order: their label ids
    with pytest.raises(AlbertError) as e:
        own_task({"train": str(path)}, columns, labels=("1", "10"))
    assert str(e.value) == (f"{path}:4: label '2.5' is not one of --labels' labels (1, 10); pass --labels with every "
                            "label")


def test_own_metrics_equal_scikit_learns_report():
    from sklearn.metrics import classification_report

    from albert.tasks.classification.metrics import own_metrics

    names = ("cat", "dog", "eel")
    gold = [0, 0, 1, 1, 1, 2, 2, 0, 1, 0]
    predicted = [0, 1, 1, 1, 0, 1, 1, 0, 1, 0]  # no eel predicted: its precision is 0, not NaN
    ours = own_metrics(predicted, gold, names)
    report = classification_report(gold, predicted, labels=[0, 1, 2], target_names=names, output_dict=True,
                                   zero_division=0)
    assert ours["eval_accuracy"] == pytest.approx(report["accuracy"])
    assert ours["macro_f1"] == pytest.approx(report["macro avg"]["f1-score"])
    for name in names:
        assert ours[f"precision[{name}]"] == pytest.approx(report[name]["precision"])
        assert ours[f"recall[{name}]"] == pytest.approx(report[name]["recall"])
        assert ours[f"support[{name}]"] == report[name]["support"]
    assert ours["support[eel]"] == 2 and ours["precision[eel]"] == 0.0
