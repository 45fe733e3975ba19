"""RACE: both layouts give the same examples; blank substitution and truncation token by token; bad inputs."""

import json

import pytest

from albert import AlbertError
from albert.tasks.race.examples import convert_example, read_examples
from albert.tasks.race.rows import option_text

ARTICLES = {
    "middle": [{"id": "middle1.txt", "article": "Tom has a red ball . He plays every day .",
                "questions": ["Tom has a _ ball .", "When does he play ?"],
                "options": [["red", "blue", "green", "black"], ["never", "every day", "at night", "on Sunday"]],
                "answers": ["A", "B"]}],
    "high": [{"id": "high7.txt", "article": "The sea is deep .", "questions": ["What is deep ?"],
              "options": [["the sky", "the sea", "the hill", "the road"]], "answers": ["B"]},
             {"id": "high9.txt", "article": "Snow is cold .", "questions": ["Snow is _ ."],
              "options": [["hot", "warm", "cold", "dry"]], "answers": ["C"]}],
}


def official_layout(root, split="train"):
    for level, articles in ARTICLES.items():
        directory = root / "RACE" / split / level
        directory.mkdir(parents=True)
        for article in articles:
            (directory / article["id"]).write_text(json.dumps(article))


def all_txt_layout(root, split="train"):
    for level, articles in ARTICLES.items():
        directory = root / "RACE" / split / level
        directory.mkdir(parents=True)
        (directory / "all.txt").write_text("".join(json.dumps(a) + "\n" for a in articles))


def test_both_layouts_parse_to_the_same_examples(tmp_path):
    official_layout(tmp_path / "a")
    all_txt_layout(tmp_path / "b")
    a, b = read_examples(str(tmp_path / "a"), "train"), read_examples(str(tmp_path / "b"), "train")
    assert a == b
    assert len(a) == 4
    assert [(e.example_id, e.level, e.label) for e in a] == [
        ("middle1.txt-0", "middle", 0), ("middle1.txt-1", "middle", 1), ("high7.txt-0", "high", 1),
        ("high9.txt-0", "high", 2)]
    assert [e.example_id for e in read_examples(str(tmp_path / "a"), "train", high_only=True)] == [
        "high7.txt-0", "high9.txt-0"]
    assert len(read_examples(str(tmp_path / "b"), "train", middle_only=True)) == 2


class Words:
    def tokenize(self, text):
        return text.lower().split()

    def convert_tokens_to_ids(self, tokens):
        return [{"[CLS]": 2, "[SEP]": 3}.get(t, 10 + len(t)) for t in tokens]


def test_blank_substitution_and_truncation_token_by_token(tmp_path):
    official_layout(tmp_path)
    example = read_examples(str(tmp_path), "train", middle_only=True)[0]
    assert option_text(example.question, "red") == "Tom has a red ball ."
    assert option_text("When does he play ?", "never") == "When does he play ? never"
    words = Words()
    tokens = {}

    def capture(text):
        tokens.setdefault("calls", []).append(text)
        return text.lower().split()

    words.tokenize = capture
    features = convert_example(example, words, max_seq_length=12, max_qa_length=4)
    # question+option "tom has a blue ball ." keeps its LAST 4 tokens; the context is cut to 12 - 3 - 4 = 5.
    assert tokens["calls"][2] == "Tom has a blue ball ."
    row = features["input_ids"][1]
    expected = ["[CLS]", "tom", "has", "a", "red", "ball", "[SEP]", "a", "blue", "ball", ".", "[SEP]"]
    assert row == words.convert_tokens_to_ids(expected)
    assert features["segment_ids"][1] == [0] * 7 + [1] * 5
    assert features["input_mask"][1] == [1] * 12
    assert features["label"] == 0
    assert len(features["input_ids"]) == 4
    short = convert_example(example, words, max_seq_length=40, max_qa_length=128)
    assert short["input_mask"][0].count(1) == 2 + 11 + 1 + 6
    assert short["input_ids"][0][-1] == 0


@pytest.mark.parametrize("article, message", [
    ({"id": "x.txt", "article": "a", "questions": ["q"], "options": [["a", "b", "c"]], "answers": ["A"]},
     "question 'x.txt-0' has 3 options; RACE needs 4"),
    ({"id": "x.txt", "article": "a", "questions": ["q"], "options": [["a", "b", "c", "d"]], "answers": ["E"]},
     "question 'x.txt-0' has answer 'E'; use A, B, C or D"),
    ({"id": "x.txt", "article": "a"}, "an article is an object with id, article, questions, options and answers "
                                      r"\(questions, options, answers missing\)"),
])
def test_bad_articles(tmp_path, article, message):
    directory = tmp_path / "RACE" / "dev" / "high"
    directory.mkdir(parents=True)
    (directory / "all.txt").write_text(json.dumps(article) + "\n")
    with pytest.raises(AlbertError, match=f"all.txt:1: {message}"):
        read_examples(str(tmp_path), "dev", high_only=True)


def test_malformed_json_and_empty_split(tmp_path):
    directory = tmp_path / "RACE" / "test" / "middle"
    directory.mkdir(parents=True)
    good = json.dumps(ARTICLES["middle"][0])
    (directory / "all.txt").write_text(good + "\n" + good[:-5] + "\n")
    with pytest.raises(AlbertError, match=r"middle/all.txt:2: not JSON \("):
        read_examples(str(tmp_path), "test", middle_only=True)
    (directory / "all.txt").write_text("")
    with pytest.raises(AlbertError, match=r"RACE/test: no questions in the test split"):
        read_examples(str(tmp_path), "test", middle_only=True)
    with pytest.raises(AlbertError, match=r"RACE/test/high: not found; --data_dir must hold RACE/test/high/"):
        read_examples(str(tmp_path), "test")


@pytest.mark.parametrize("blank", ["_", "\uff3f", "\ufe4d", "\ufe4e", "\ufe4f", "\ufe33", "\ufe34"])
def test_full_width_and_vertical_low_lines_are_blanks_as_in_the_original(blank):

    assert option_text(f"Tom went to the {blank} yesterday.", "park") == "Tom went to the park yesterday."
    assert option_text("Where did Tom go?", "park") == "Where did Tom go? park"
