"""albert/tasks/ner/conll.py and albert/tasks/ner/windows.py: the real CoNLL-2003 files read with the counts their
README publishes; CoNLL / JSON Lines mistakes as one line; words to pieces and windows, each word scored once."""

import json
import os

import pytest

from albert.ground.errors import AlbertError
from albert.tasks.ner.conll import Sentence, check_tags, is_cased, read_sentences, tag_set
from albert.tasks.ner.windows import IGNORED, continuation_tag, padded, sentence_windows, spans, word_tags
from albert.text.tokenization import FullTokenizer
from tests.helpers import shared_directory

CONLL = os.path.join(shared_directory(), "conll2003")
SPM = os.path.join(shared_directory(), "albert_30k_clean", "30k-clean.model")


@pytest.mark.parametrize("name, documents, sentences, tokens", [("train.txt", 946, 14041, 203621),
                                                                ("valid.txt", 216, 3250, 51362),
                                                                ("test.txt", 231, 3453, 46435)])
def test_real_conll_2003_counts(name, documents, sentences, tokens):
    read = read_sentences(os.path.join(CONLL, name))
    assert (sum(s.document_start for s in read), len(read), sum(len(s.words) for s in read)) == (
        documents, sentences, tokens)
    assert read[0].document_start and read[0].words[:2] in (("EU", "rejects"), ("CRICKET", "-"), ("SOCCER", "-"))
    assert tag_set(read) == ["O", "B-LOC", "I-LOC", "B-MISC", "I-MISC", "B-ORG", "I-ORG", "B-PER", "I-PER"]
    assert is_cased(read)


def test_two_column_crlf_bom_and_json_lines_read_the_same(tmp_path):
    (tmp_path / "a.conll").write_bytes(b"\xef\xbb\xbf-DOCSTART- O\r\n\r\nEU B-ORG\r\nrejects O\r\n\r\n\r\n"
                                       b"Peter B-PER\r\nBlackburn I-PER\r\n")
    rows = [{"tokens": ["EU", "rejects"], "tags": ["B-ORG", "O"]}, {"tokens": ["Peter", "Blackburn"],
                                                                    "tags": ["B-PER", "I-PER"]}]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    conll, jsonl = read_sentences(str(tmp_path / "a.conll")), read_sentences(str(tmp_path / "a.jsonl"))
    assert [(s.words, s.tags) for s in conll] == [(s.words, s.tags) for s in jsonl]
    assert [(s.line, s.document_start) for s in conll] == [(3, True), (7, False)]
    (tmp_path / "test.conll").write_text("EU\nrejects\n\nPeter\n")
    assert [s.tags for s in read_sentences(str(tmp_path / "test.conll"), labelled=False)] == [None, None]


BAD = [
    ("a.conll", "EU B-ORG\nrejects\n", "a.conll:2: 1 column(s), but the file's lines have 2; a word holds no space"),
    ("a.conll", "EU\n", "a.conll:1: one column; a CoNLL line is `word ... tag` (the tag last)"),
    ("a.conll", "EU B-ORG\nrejects Q-X\n", "a.conll:2: tag 'Q-X' is not O or B-/I-/E-/S- followed by a type"),
    ("a.conll", "EU S-ORG\n", "a.conll:1: tag 'S-ORG' is not an IOB2 tag; pass --tag_scheme=IOBES"),
    ("a.jsonl", '{"tokens": ["a", "b"], "tags": ["O"]}\n', "a.jsonl:1: 2 tokens but 1 tags"),
    ("a.jsonl", '{"tokens": ["a"], "tags": [3]}\n', 'a.jsonl:1: "tags" must be a list of tag strings'),
    ("a.jsonl", '{"tokens": ["a b"], "tags": ["O"]}\n', 'a.jsonl:1: "tokens" must be a non-empty list of words'),
    ("a.jsonl", '\n{"tokens": ["a"]}\n', 'a.jsonl:2: no "tags"; train and dev rows need one tag per token'),
    ("a.jsonl", '{"tokens": ["a"], \n', "a.jsonl:1: not JSON"),
    ("a.conll", "\n\n", "a.conll: no sentences"),
]


@pytest.mark.parametrize("name, content, message", BAD)
def test_each_mistake_is_one_line_naming_file_and_line(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(AlbertError) as e:
        read_sentences(str(tmp_path / name))
    assert str(e.value).startswith(f"{tmp_path}/{message}")


def test_a_dev_tag_train_never_had_names_the_sentence(tmp_path):
    with pytest.raises(AlbertError) as e:
        check_tags([Sentence(("a", "b"), ("O", "B-LOC"), 7)], ["O", "B-PER"], "dev.txt")
    assert str(e.value) == ("dev.txt: the sentence at line 7 has tag 'B-LOC' (word 2), which the train file never has "
                            "(O, B-PER)")


def test_windows_score_every_word_once_where_it_has_most_context():
    assert spans(24, 8, 3) == [(0, 8), (3, 11), (6, 14), (9, 17), (12, 20), (15, 23), (18, 24)]
    assert spans(8, 8, 3) == [(0, 8)] and spans(9, 8, 8) == [(0, 8), (8, 9)]
    tokenizer = FullTokenizer(None, True, SPM)
    words = "The European Commission said on Thursday it disagreed with German advice to consumers".split()
    sentences = [Sentence(tuple(words), tuple(["O", "B-ORG", "I-ORG"] + ["O"] * 6 + ["B-MISC"] + ["O"] * 3), 1)]
    labels = ["O", "B-MISC", "I-MISC", "B-ORG", "I-ORG"]
    windows = sentence_windows(sentences, tokenizer, labels, 10, 3)
    assert len(windows) > 2 and all(len(w.input_ids) <= 10 for w in windows)
    scored = sorted(word for w in windows for word, _ in w.words)
    assert scored == list(range(len(words)))  # each word predicted once
    in_loss = [(w.sentence, t) for w in windows for t in w.tag_ids if t != IGNORED]
    assert len(in_loss) == len(words)  # each word in the loss once, on its first piece
    for window in windows:
        for word, position in window.words:
            assert window.tag_ids[position] == labels.index(sentences[0].tags[word])
    arrays = padded(windows, 10)
    predictions = arrays["tag_ids"].clip(0)  # a perfect model's ids
    assert word_tags(windows, predictions, sentences, labels) == [list(sentences[0].tags)]
    everything = sentence_windows(sentences, tokenizer, labels, 64, 3, label_all_tokens=True)
    assert len(everything) == 1 and sum(t != IGNORED for t in everything[0].tag_ids) == len(everything[0].input_ids) - 2
    assert continuation_tag("B-ORG", labels) == "I-ORG" and continuation_tag("B-X", labels) == "B-X"


def test_a_word_longer_than_a_window_is_kept_by_its_first_pieces():
    tokenizer = FullTokenizer(None, True, SPM)
    sentence = Sentence(("a", "Pneumonoultramicroscopicsilicovolcanoconiosis", "b", "c"), ("O",) * 4, 1)
    windows = sentence_windows([sentence], tokenizer, ["O"], 6, 2)
    assert sorted(word for w in windows for word, _ in w.words) == [0, 1, 2, 3]
    assert all(len(w.input_ids) <= 6 for w in windows)
