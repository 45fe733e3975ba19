"""Property tests of the text ground under every reader: Unicode spaces inside words, bytes that are not UTF-8
named by their line, other encodings given with --encoding, any column flag, lone surrogates from any encoding.
Seeded Hypothesis, a fixed number of examples (tests/reader_properties.py)."""

import pytest
from hypothesis import given, strategies as st

from albert.data.corpus import read_lines
from albert.ground.errors import AlbertError
from albert.tasks.classification import glue
from albert.tasks.ner.conll import Sentence, read_sentences
from albert.tasks.classification.own_data import Columns, read_rows
from tests.reader_properties import examples, texts, LINE_ENDS, refused_in_one_line, expect_rows, WORD, TAG
from tests.reader_targets import message_fault


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
