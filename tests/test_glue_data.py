"""Every GLUE task's real file layout (made here) parses to the right examples; the quirks and the bad inputs."""

import os

import pytest

from albert import AlbertError
from albert.tasks.classification.glue import TASKS, get_task, read_examples

T = "\t"


def write(root, task_dir, name, rows):
    os.makedirs(os.path.join(root, task_dir), exist_ok=True)
    with open(os.path.join(root, task_dir, name), "w", encoding="utf-8") as f:
        f.write("".join(T.join(row) + "\n" for row in rows))


MNLI_HEADER = ["index", "promptID", "pairID", "genre", "s1_bp", "s2_bp", "s1_p", "s2_p", "sentence1", "sentence2"]


def make_glue(root):
    mnli_row = lambda i, a, b, labels: [str(i), "p", "q", "fiction", "(", "(", "(", "(", a, b, *labels]  # noqa
    write(root, "MNLI", "train.tsv", [MNLI_HEADER + ["label1", "gold_label"],
                                      mnli_row(0, "A man eats.", "Someone eats.", ["entailment", "entailment"])])
    write(root, "MNLI", "dev_matched.tsv", [MNLI_HEADER + [f"label{i}" for i in range(1, 6)] + ["gold_label"],
                                            mnli_row(7, "It rains.", "It is dry.", ["contradiction"] * 6)])
    write(root, "MNLI", "dev_mismatched.tsv", [MNLI_HEADER + ["label1", "gold_label"],
                                               mnli_row(8, "Cats sleep.", "Dogs bark.", ["neutral", "neutral"])])
    write(root, "MNLI", "test_matched.tsv", [MNLI_HEADER, mnli_row(55, "Sun.", "Moon.", [])])
    write(root, "MNLI", "test_mismatched.tsv", [MNLI_HEADER, mnli_row(66, "Up.", "Down.", [])])
    write(root, "MRPC", "train.tsv", [["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                                      ["1", "11", "12", "He said hi.", "He greeted."]])
    write(root, "MRPC", "dev.tsv", [["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                                    ["0", "13", "14", "Red.", "Blue."]])
    write(root, "MRPC", "test.tsv", [["index", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                                     ["3", "15", "16", "Yes.", "No."]])
    write(root, "CoLA", "train.tsv", [["gj04", "1", "", "Our friends won't buy this analysis."],
                                      ["gj04", "0", "*", "They drank the pub."]])  # no header
    write(root, "CoLA", "dev.tsv", [["cj99", "1", "", "The sailors rode the breeze."]])
    write(root, "CoLA", "test.tsv", [["index", "sentence"], ["0", "Bill whistled past the house."]])
    write(root, "SST-2", "train.tsv", [["sentence", "label"], ["a gripping film ", "1"]])
    write(root, "SST-2", "dev.tsv", [["sentence", "label"], ["dull", "0"]])
    write(root, "SST-2", "test.tsv", [["index", "sentence"], ["0", "fine"]])
    sts_header = ["index", "genre", "filename", "year", "old_index", "source1", "source2", "sentence1", "sentence2"]
    write(root, "STS-B", "train.tsv", [sts_header + ["score"],
                                       ["0", "main", "f", "2012", "1", "none", "none", "A plane.", "An airplane.",
                                        "5.000"]])
    write(root, "STS-B", "dev.tsv", [sts_header + ["score"],
                                     ["0", "main", "f", "2012", "1", "none", "none", "A man.", "A dog.", "0.75"]])
    write(root, "STS-B", "test.tsv", [sts_header, ["4", "main", "f", "2012", "1", "none", "none", "X.", "Y."]])
    qqp_header = ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"]
    write(root, "QQP", "train.tsv", [qqp_header, ["0", "1", "2", "How old?", "What age?", "1"],
                                     ["1", "3", "4", "Broken row without label"],  # the released file has these
                                     ["2", "5", "6", "Why?", "How?", "0"]])
    write(root, "QQP", "dev.tsv", [qqp_header, ["9", "7", "8", "Where?", "When?", "0"]])
    write(root, "QQP", "test.tsv", [["id", "question1", "question2"], ["42", "Who?", "Whom?"]])
    for task_dir, test_label in (("QNLI", None), ("RTE", None)):
        head = ["index", "question" if task_dir == "QNLI" else "sentence1", "sentence", "label"]
        write(root, task_dir, "train.tsv", [head, ["0", "What?", "This.", "entailment"]])
        write(root, task_dir, "dev.tsv", [head, ["1", "Which?", "That.", "not_entailment"]])
        write(root, task_dir, "test.tsv", [head[:3], ["2", "Who?", "Them."]])
    write(root, "WNLI", "train.tsv", [["index", "sentence1", "sentence2", "label"], ["0", "I saw it.", "It saw.", "1"]])
    write(root, "WNLI", "dev.tsv", [["index", "sentence1", "sentence2", "label"], ["0", "A.", "B.", "0"]])
    write(root, "WNLI", "test.tsv", [["index", "sentence1", "sentence2"], ["0", "C.", "D."]])
    write(root, "diagnostic", "diagnostic.tsv", [["index", "sentence1", "sentence2"], ["0", "E.", "F."]])


EXPECTED = {  # task -> split -> [(guid, text_a, text_b, label)]
    "mnli": {"train": [("train-1", "A man eats.", "Someone eats.", "entailment")],
             "dev": [("dev-1", "It rains.", "It is dry.", "contradiction")],
             "test": [("55", "Sun.", "Moon.", "contradiction")]},
    "mismnli": {"dev": [("dev-1", "Cats sleep.", "Dogs bark.", "neutral")],
                "test": [("66", "Up.", "Down.", "contradiction")]},
    "mrpc": {"train": [("train-1", "He said hi.", "He greeted.", "1")], "dev": [("dev-1", "Red.", "Blue.", "0")],
             "test": [("3", "Yes.", "No.", "0")]},
    "cola": {"train": [("train-0", "Our friends won't buy this analysis.", None, "1"),
                       ("train-1", "They drank the pub.", None, "0")],
             "dev": [("dev-0", "The sailors rode the breeze.", None, "1")],
             "test": [("0", "Bill whistled past the house.", None, "0")]},
    "sst-2": {"train": [("train-1", "a gripping film ", None, "1")], "test": [("0", "fine", None, "0")]},
    "sts-b": {"train": [("train-1", "A plane.", "An airplane.", 5.0)], "dev": [("dev-1", "A man.", "A dog.", 0.75)],
              "test": [("4", "X.", "Y.", 0.0)]},
    "qqp": {"train": [("train-1", "How old?", "What age?", "1"), ("train-3", "Why?", "How?", "0")],
            "test": [("42", "Who?", "Whom?", "0")]},
    "qnli": {"dev": [("dev-1", "Which?", "That.", "not_entailment")], "test": [("2", "Who?", "Them.", "entailment")]},
    "rte": {"train": [("train-1", "What?", "This.", "entailment")]},
    "wnli": {"train": [("train-1", "I saw it.", "It saw.", "1")], "test": [("0", "C.", "D.", "0")]},
    "ax": {"test": [("0", "E.", "F.", "contradiction")]},
}


@pytest.mark.parametrize("task_name", sorted(EXPECTED))
def test_each_task_parses_its_real_layout(tmp_path, task_name):
    make_glue(str(tmp_path))
    task = get_task(task_name.upper())
    for split, expected in EXPECTED[task_name].items():
        got = [(e.guid, e.text_a, e.text_b, e.label) for e in read_examples(task, str(tmp_path), split)]
        assert got == expected, (task_name, split)
    assert task.is_regression == (task_name == "sts-b")


def test_all_tasks_are_covered():
    assert sorted(TASKS) == sorted(EXPECTED)


def test_bad_inputs_name_the_file_and_line(tmp_path):
    make_glue(str(tmp_path))
    with pytest.raises(AlbertError, match=r"unknown --task_name 'glu'; use one of mnli, mismnli, mrpc, cola"):
        get_task("glu")
    with pytest.raises(AlbertError, match=r"RTE/train.tsv: file not found; --data_dir must hold RTE/train.tsv"):
        read_examples(get_task("rte"), str(tmp_path / "nowhere"), "train")
    write(str(tmp_path), "MRPC", "train.tsv", [["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                                               ["1", "11", "12", "ok.", "ok."], ["1", "11", "only three"]])
    with pytest.raises(AlbertError, match=r"MRPC/train.tsv:3: 3 tab-separated column\(s\), mrpc needs at least 5; "
                                          r"fix or remove the row"):
        read_examples(get_task("mrpc"), str(tmp_path), "train")
    write(str(tmp_path), "RTE", "dev.tsv", [["index", "sentence1", "sentence2", "label"],
                                            ["1", "a", "b", "maybe"]])
    with pytest.raises(AlbertError, match=r"RTE/dev.tsv:2: unknown label 'maybe' for rte; expected one of "
                                          r"entailment, not_entailment"):
        read_examples(get_task("rte"), str(tmp_path), "dev")
    with pytest.raises(AlbertError, match="task ax has no train split"):
        read_examples(get_task("ax"), str(tmp_path), "train")


class _Tokenizer:
    """Whitespace tokens; ids are positions in a growing vocabulary (specials first)."""

    def __init__(self):
        self.vocab = {"<pad>": 0, "<unk>": 1, "[CLS]": 2, "[SEP]": 3}

    def tokenize(self, text):
        return text.split()

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab.setdefault(t, len(self.vocab)) for t in tokens]


def test_feature_conversion_layout_truncation_and_labels():
    from albert.tasks.classification.glue import InputExample, convert_example, truncate_pair

    tok = _Tokenizer()
    pair = convert_example(InputExample("x", "a b c d e", "f g", "not_entailment"), get_task("rte"), 8, tok)
    ids = {v: k for k, v in tok.vocab.items()}
    assert [ids[i] for i in pair.input_ids] == ["[CLS]", "a", "b", "c", "[SEP]", "f", "g", "[SEP]"]
    assert pair.segment_ids == [0, 0, 0, 0, 0, 1, 1, 1]
    assert pair.input_mask == [1] * 8
    assert pair.label_id == 1
    single = convert_example(InputExample("y", "one two three four five six seven", None, "1"), get_task("cola"),
                             6, tok)
    ids = {v: k for k, v in tok.vocab.items()}
    assert [ids[i] for i in single.input_ids] == ["[CLS]", "one", "two", "three", "four", "[SEP]"]
    short = convert_example(InputExample("z", "hi", "there", 3.5), get_task("sts-b"), 7, tok)
    assert short.input_mask == [1, 1, 1, 1, 1, 0, 0]
    assert short.input_ids[5:] == [0, 0]
    assert short.segment_ids == [0, 0, 0, 1, 1, 0, 0]
    assert short.label_id == 3.5
    a, b = list("abcd"), list("xyzw")
    truncate_pair(a, b, 5)  # ties pop from B, then the longer one
    assert (a, b) == (list("abc"), list("xy"))


def test_a_short_row_in_a_test_split_is_an_error_even_where_training_rows_are_skipped(tmp_path):
    """QQP skips short train/dev rows as the original did, but a test row must give a submission line."""
    directory = tmp_path / "QQP"
    directory.mkdir()
    (directory / "test.tsv").write_text("id\tquestion1\tquestion2\n0\tWhat is it?\tWhat is that?\n1\tcut short\n")
    with pytest.raises(AlbertError) as error:
        read_examples(get_task("qqp"), str(tmp_path), "test")
    assert str(error.value) == (f"{directory / 'test.tsv'}:3: 2 tab-separated column(s), qqp needs at least 3; fix "
                                "or remove the row")


def test_a_row_of_another_width_than_the_files_first_line_is_refused(tmp_path):
    """A tab inside a text (GLUE's TSVs have no quoting) shifts the columns after it: the original read the text's
    first half and lost the rest (RTE's sentence2 'b' without its 'c', CoLA's sentence 'Bad'), or took the second
    half for the next column; now one line naming the row. CoLA's train file has no header: its first row says how
    wide a row is."""
    write(str(tmp_path), "RTE", "dev.tsv", [["index", "sentence1", "sentence2", "label"], ["0", "a", "b", "entailment"],
                                            ["1", "a", "b\tc", "entailment"]])
    with pytest.raises(AlbertError) as error:
        read_examples(get_task("rte"), str(tmp_path), "dev")
    assert str(error.value) == (f"{tmp_path}/RTE/dev.tsv:3: 5 fields where the header has 4; a TSV cell cannot hold a "
                                "tab: take the tab out of the text")
    write(str(tmp_path), "CoLA", "train.tsv", [["gj04", "1", "", "Fine."], ["gj04", "0", "*", "Bad", "ly."]])
    with pytest.raises(AlbertError) as error:
        read_examples(get_task("cola"), str(tmp_path), "train")
    assert str(error.value) == (f"{tmp_path}/CoLA/train.tsv:2: 5 fields where the first row has 4; a TSV cell cannot "
                                "hold a tab: take the tab out of the text")
    write(str(tmp_path), "SST-2", "train.tsv", [["sentence", "label"], ["fine", "1"], ["a film", "", "0"]])
    with pytest.raises(AlbertError) as error:
        read_examples(get_task("sst-2"), str(tmp_path), "train")
    assert str(error.value) == (f"{tmp_path}/SST-2/train.tsv:3: 3 fields where the header has 2; a TSV cell cannot "
                                "hold a tab: take the tab out of the text")


REAL_ROWS = {("sst-2", "train"): 67349, ("sst-2", "dev"): 872, ("cola", "train"): 8551, ("cola", "dev"): 1043,
             ("rte", "train"): 2490, ("rte", "dev"): 277, ("qnli", "dev"): 5463}  # ../shared/glue_real/README.md


@pytest.mark.parametrize("task_name,split", REAL_ROWS)
def test_the_real_glue_files_read_whole(task_name, split):
    """Every row of the real GLUE files here is as wide as its file's first line: each reads whole, as the GLUE
    release counts its rows."""
    from tests.helpers import shared_directory

    directory = os.path.join(shared_directory(), "glue_real")
    task = get_task(task_name)
    path = os.path.join(directory, task.directory, task.splits[split].file)
    assert os.path.isfile(path), f"{path}: the real GLUE files are read in place (../shared or ALBERT_SHARED)"
    assert len(read_examples(task, directory, split)) == REAL_ROWS[task_name, split]
