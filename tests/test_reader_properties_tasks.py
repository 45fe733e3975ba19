"""Property tests of the task readers: CoNLL and NER JSON Lines, the GLUE layouts, SQuAD and RACE JSON and the
pretraining corpus, written by their standard writers and read back exactly, or refused in one line naming the file
and line. Seeded Hypothesis, a fixed number of examples (tests/reader_properties.py)."""

import gzip
import json

import pytest
from hypothesis import assume, given, strategies as st

from albert.data.corpus import read_lines
from albert.tasks.classification import glue
from albert.tasks.race import examples as race
from albert.tasks.squad import examples as squad
from albert.tasks.ner.conll import Sentence, read_sentences
from albert.tasks.classification.glue import InputExample
from albert.tasks.race.examples import RaceExample
from albert.tasks.squad.examples import SquadExample
from tests.reader_properties import examples, texts, LINE_ENDS, LINE_END, refused_in_one_line, WORD, TAG, RACE_ARTICLE


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


# ------------------------------------------------------------------------------- what does not fit, refused
@examples(60)
@given(data=st.data(), name=st.sampled_from(["sst-2", "cola", "mrpc", "qnli", "rte", "sts-b", "mnli", "qqp", "wnli"]),
       split=st.sampled_from(["train", "dev", "test"]), ending=LINE_ENDS)
def test_glue_row_with_a_tab_in_a_text_is_refused_naming_its_line(tmp_path_factory, data, name, split, ending):
    """A GLUE file of one task's layout where one row's text holds a tab (the format has no quoting: one field more
    than the header, or than the first row of CoLA's train and dev files): refused in one line naming that row."""
    task = glue.get_task(name)
    layout = task.splits[split]
    rows = _glue_rows(data.draw, task, layout, data.draw(st.integers(2, 4)))
    at = data.draw(st.integers(0 if layout.header else 1, len(rows) - 1))
    text = rows[at][layout.text_a]
    cut = data.draw(st.integers(0, len(text)))
    rows[at][layout.text_a] = text[:cut] + "\t" + text[cut:]
    width = len(rows[0]) if at else len(rows[1])
    lines = (["\t".join(f"h{i}" for i in range(width))] if layout.header else []) + ["\t".join(r) for r in rows]
    directory = tmp_path_factory.mktemp("glue")
    path = directory / task.directory / layout.file
    path.parent.mkdir()
    path.write_bytes(ending.join(lines).encode("utf-8") + ending.encode())
    message = refused_in_one_line(lambda: glue.read_examples(task, str(directory), split), path)
    line = at + 1 + layout.header
    first = "the header" if layout.header else "the first row"
    assert message == (f"{path}:{line}: {width + 1} fields where {first} has {width}; a TSV cell cannot hold a tab: "
                       "take the tab out of the text")


def _squad_questions(paragraphs):
    """A SQuAD 2.0 file's "data" and its question objects, every one valid for training."""
    data, qas = [], []
    for context, questions in paragraphs:
        paragraph = []
        for impossible, start, length in questions:
            start = min(start, len(context))
            qa = {"id": f"q{len(qas)}", "question": "what?", "is_impossible": impossible,
                  "answers": [] if impossible else [{"text": context[start:start + length], "answer_start": start}]}
            paragraph.append(qa)
            qas.append(qa)
        data.append({"context": context, "qas": paragraph})
    return {"version": "v2.0", "data": [{"title": "t", "paragraphs": data}]}, qas


MISTAKES = {  # what is wrong with one question -> how to make it so
    "is_impossible not a boolean": st.sampled_from(["false", "true", 0, 1, None, [], {}]).map(
        lambda v: lambda qa, qas: qa.update(is_impossible=v)),
    "answers not a list": st.sampled_from([None, "x", 1, {}, {"text": "a", "answer_start": 0}]).map(
        lambda v: lambda qa, qas: qa.update(answers=v)),
    "an answer not an object": st.sampled_from(["x", 1, None, [], True]).map(
        lambda v: lambda qa, qas: qa.update(answers=[v])),
    "text not a string": st.sampled_from([1, None, 1.5, [], True, "missing"]).map(
        lambda v: lambda qa, qas: qa.update(answers=[{"answer_start": 0} if v == "missing" else
                                                     {"text": v, "answer_start": 0}])),
    "answer_start not an integer": st.sampled_from(["4", 1.0, True, None, [], 1e30]).map(
        lambda v: lambda qa, qas: qa.update(answers=[{"text": "", "answer_start": v}])),
    "impossible with an answer": st.just(lambda qa, qas: qa.update(is_impossible=True, answers=[
        {"text": "", "answer_start": 0}])),
    "an id twice": st.just(lambda qa, qas: qa.update(id=qas[0]["id"])),
}


@examples(80)
@given(paragraphs=st.lists(st.tuples(texts(max_pieces=4), st.lists(st.tuples(st.booleans(), st.integers(0, 50),
                                                                           st.integers(0, 10)),
                                                                 min_size=1, max_size=3)), min_size=1, max_size=3),
       mistake=st.sampled_from(sorted(MISTAKES)), data=st.data(), training=st.booleans())
def test_squad_field_of_the_wrong_type_is_refused_naming_its_question(tmp_path_factory, paragraphs, mistake, data,
                                                                      training):
    """A SQuAD file written by json.dumps, every question valid but one, whose field has the wrong type (or which
    is impossible with an answer, or repeats an earlier question's id): refused in one line naming that question,
    whether the file is read to train or to predict."""
    squad_json, qas = _squad_questions(paragraphs)
    twice = mistake == "an id twice"
    assume(len(qas) > 1 or not twice)  # a repeated id needs an earlier question
    at = data.draw(st.integers(1 if twice else 0, len(qas) - 1))
    data.draw(MISTAKES[mistake])(qas[at], qas)
    path = tmp_path_factory.mktemp("squad") / "train.json"
    path.write_text(json.dumps(squad_json), encoding="utf-8")
    message = refused_in_one_line(lambda: squad.read_examples(str(path), training), path)
    expected = f"{path}: question id 'q0' is given twice; " if twice else f"{path}: question 'q{at}': "
    assert message.startswith(expected), message


@examples(40)
@given(count=st.integers(2, 4), data=st.data(), layout=st.sampled_from(["all.txt", "articles"]),
       as_number=st.booleans())
def test_race_article_id_given_twice_is_refused_naming_both_places(tmp_path_factory, count, data, layout, as_number):
    """RACE articles (either layout) where one repeats an earlier one's id (or writes it as a number where the
    other wrote the same as a string: the questions' ids would be the same): refused in one line naming both."""
    directory = tmp_path_factory.mktemp("race")
    level = directory / "RACE" / "dev" / "high"
    level.mkdir(parents=True)
    objects = [dict(RACE_ARTICLE, id=str(number)) for number in range(count)]
    at = data.draw(st.integers(1, count - 1))
    earlier = data.draw(st.integers(0, at - 1))
    objects[at]["id"] = earlier if as_number else str(earlier)
    if layout == "all.txt":
        (level / "all.txt").write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
        places = [f"{level / 'all.txt'}:{n + 1}" for n in range(count)]
    else:
        for number, o in enumerate(objects):
            (level / f"{number:03d}.txt").write_text(json.dumps(o, indent=1), encoding="utf-8")
        places = [f"{level / f'{n:03d}.txt'}:1" for n in range(count)]
    message = refused_in_one_line(lambda: race.read_examples(str(directory), "dev", high_only=True), level)
    assert message == (f"{places[at]}: article id {objects[at]['id']!r} is given twice (first at {places[earlier]}); "
                       "give each article its own id (predictions are keyed by it)")
