"""SQuAD features: alignment back to the exact original text, doc spans, p_mask, max-context flags."""

import json

import pytest

from albert.ground.errors import AlbertError
from albert.tasks.squad import examples as squad
from albert.tasks.squad import windows as squad_windows
from albert.text.tokenization import load_sentencepiece

PARAGRAPHS = [
    ("In  1889,   the Café   Müller of São Paulo sold   “Crème Brûlée” for $1,234,567.89 (a record). "
     "Its owner, José Ñúñez, said: ‘Naïve ideas WIN.’ The NASA-funded   study of 2,500 résumés followed.",
     ["1889", "Café   Müller", "São Paulo", "“Crème Brûlée”", "$1,234,567.89", "José Ñúñez", "Naïve ideas WIN",
      "NASA", "2,500 résumés", "a record"]),
    ("\tTabs\tand\nnewlines  ÉTÉ àçcents; Zoë’s piano cost 12,000 euros in Zürich.",
     ["ÉTÉ", "Zoë", "12,000 euros", "Zürich"]),
]


def write_training_file(path):
    data = []
    for p, (context, answers) in enumerate(PARAGRAPHS):
        qas = [{"id": f"p{p}a{k}", "question": f"What is item {k}?",
                "answers": [{"text": a, "answer_start": context.index(a)}]} for k, a in enumerate(answers)]
        data.append({"title": f"t{p}", "paragraphs": [{"context": context, "qas": qas}]})
    path.write_text(json.dumps({"version": "1.1", "data": data}, ensure_ascii=False), encoding="utf-8")


@pytest.fixture(scope="module")
def sp_model(corpus_dir):
    return load_sentencepiece(str(corpus_dir / "sp.model"))


@pytest.mark.parametrize("max_seq_length,doc_stride", [(40, 5), (64, 16), (200, 64)])
def test_gold_spans_give_back_the_exact_answer_text(tmp_path, sp_model, max_seq_length, doc_stride):
    write_training_file(tmp_path / "train.json")
    examples = squad.read_examples(str(tmp_path / "train.json"), is_training=True)
    settings = squad_windows.Windows(max_seq_length, doc_stride, 8, True)
    rows, metadata, counts = squad_windows.convert_examples(examples, sp_model, settings, True)
    assert (counts["answers"], counts["unplaced"]) == (14, [])
    alignments = {i: squad_windows.align(sp_model, PARAGRAPHS[i][0], True) for i in range(len(PARAGRAPHS))}
    recovered = {}
    for f, feature in enumerate(metadata["features"]):
        if rows["is_impossible"][f][0]:
            assert rows["start_positions"][f] == [0]
            assert rows["end_positions"][f] == [0]
            continue
        example = examples[feature["example"]]
        start = feature["span_start"] + rows["start_positions"][f][0] - feature["doc_offset"]
        end = feature["span_start"] + rows["end_positions"][f][0] - feature["doc_offset"]
        paragraph = metadata["examples"][feature["example"]]["paragraph"]
        text = alignments[paragraph].text(start, end, example.paragraph_text)
        assert text == example.orig_answer_text
        recovered[example.qas_id] = text
    # Every answer (at most 15 pieces) fits in some span: the shortest window holds 29 pieces.
    assert sorted(recovered) == sorted(e.qas_id for e in examples)


def test_every_piece_maps_back_to_its_original_characters(sp_model):
    text = PARAGRAPHS[0][0]
    alignment = squad_windows.align(sp_model, text, lower=True)
    rebuilt = "".join(alignment.text(k, k, text) for k in range(len(alignment.pieces)))
    assert rebuilt == "".join(text.split())  # all characters but whitespace, in order, originals included
    assert alignment.text(0, len(alignment.pieces) - 1, text) == text.strip()


def test_doc_spans_and_max_context_flags():
    spans = squad_windows.doc_spans(10, 4, 2)
    assert spans == [(0, 4), (2, 4), (4, 4), (6, 4)]
    assert ["".join(map(str, squad_windows.max_context_flags(spans, i))) for i in range(4)] == \
        ["1110", "0110", "0110", "0111"]
    assert squad_windows.doc_spans(10, 4, 6) == [(0, 4), (4, 4), (8, 2)]  # stride longer than a span: no overlap
    assert squad_windows.doc_spans(3, 4, 2) == [(0, 3)]


def test_feature_layout_on_a_long_paragraph(sp_model):
    context = " ".join(f"Word{i % 7} is number {i}." for i in range(12))
    example = squad.SquadExample("q", "Which number?", context)
    settings = squad_windows.Windows(32, 8, 6, True)
    rows, metadata, counts = squad_windows.convert_examples([example], sp_model, settings, False)
    query = sp_model.EncodeAsIds("which number?")[:6]
    assert len(sp_model.EncodeAsIds("which number?")) > 6
    pieces = squad_windows.align(sp_model, context, True).pieces
    doc = 32 - len(query) - 3
    spans = squad_windows.doc_spans(len(pieces), doc, 8)
    assert len(spans) > 3
    assert counts["features"] == len(spans) == len(rows["input_ids"])
    cls, sep = sp_model.PieceToId("[CLS]"), sp_model.PieceToId("[SEP]")
    for f, (start, length) in enumerate(spans):
        ids = [cls, *query, sep, *[sp_model.PieceToId(p) for p in pieces[start:start + length]], sep]
        pad = 32 - len(ids)
        assert rows["input_ids"][f] == ids + [0] * pad
        assert rows["input_mask"][f] == [1] * len(ids) + [0] * pad
        assert rows["segment_ids"][f] == [0] * (len(query) + 2) + [1] * (length + 1) + [0] * pad
        assert rows["p_mask"][f] == [0] + [1] * (len(query) + 1) + [0] * length + [1] * (1 + pad)
        assert rows["unique_ids"][f] == [1000000000 + f]
        assert metadata["features"][f]["max_context"] == "".join(map(str, squad_windows.max_context_flags(spans, f)))
        assert metadata["features"][f]["doc_offset"] == len(query) + 2


def test_query_is_truncated_to_max_query_length(sp_model):
    example = squad.SquadExample("q", "one two three four five six seven eight nine ten", "A short context.")
    rows, metadata, _ = squad_windows.convert_examples([example], sp_model, squad_windows.Windows(32, 8, 4, True), False)
    assert metadata["features"][0]["doc_offset"] == 4 + 2


def test_answers_no_piece_holds_are_named_in_one_line_and_left_out(sp_model):
    """Whitespace, a backspace (SentencePiece deletes it) and a lone combining accent (preprocessing drops it) are in
    no piece: those answers are counted and named, and make no feature; an answer with one character in a piece is
    placed. Every paragraph aligns."""
    context = "Tabs\there, a back\x08space, an accent\u0301 and Zoë."
    asked = [("t1", "\t"), ("t2", "\x08"), ("t3", "\u0301"), ("t4", "Zoë"), ("t5", "\x08space")]
    examples = [squad.SquadExample(qid, "What?", context, text, context.index(text)) for qid, text in asked]
    rows, metadata, counts = squad_windows.convert_examples(examples, sp_model, squad_windows.Windows(40, 8, 6, True), True)
    assert (counts["answers"], counts["unplaced"]) == (5, ["t1", "t2", "t3"])
    assert squad_windows.unplaced_line(counts["answers"], counts["unplaced"]) == \
        "3 of 5 answers could not be placed in the tokens: ids 't1', 't2', 't3'"
    assert sorted({metadata["examples"][f["example"]]["qas_id"] for f in metadata["features"]}) == ["t4", "t5"]
    alignment = squad_windows.align(sp_model, context, True)
    placed = squad_windows.answer_pieces(alignment, context.index("\x08space"), "\x08space")
    assert alignment.text(*placed, context) == "space"
    many = [f"q{i}" for i in range(23)]
    assert squad_windows.unplaced_line(40, many) == ("23 of 40 answers could not be placed in the tokens: ids "
                                             + ", ".join(f"'q{i}'" for i in range(20)) + " and 3 more")


def test_reading_checks_training_answers(tmp_path):
    path = tmp_path / "train.json"
    path.write_text(json.dumps({"data": [{"paragraphs": [{"context": "Red fox.", "qas": [
        {"id": "x1", "question": "What?", "answers": [{"text": "fox", "answer_start": 3}]}]}]}]}))
    with pytest.raises(AlbertError) as e:
        squad.read_examples(str(path), is_training=True)
    assert str(e.value) == (f"{path}: question 'x1': answer 'fox' does not occur at answer_start 3 of its context "
                            "(found ' fo'); give the offset of the answer's first character (0-based)")
    assert squad.read_examples(str(path), is_training=False)[0].question_text == "What?"
    path.write_text('{"data": [\n {"paragraphs": [}\n]}')
    with pytest.raises(AlbertError) as e:
        squad.read_examples(str(path), is_training=False)
    assert str(e.value) == f"{path}:2: not JSON (Expecting value at column 18)"


def test_the_feature_cache_is_rebuilt_when_answers_tokenizer_or_size_change(tmp_path, sp_model, corpus_dir):
    """The cache is keyed by the examples as read (a moved answer is seen), the SentencePiece model, the settings
    and the record's size (a truncated record is seen); reused otherwise."""
    write_training_file(tmp_path / "train.json")
    settings = squad_windows.Windows(64, 16, 8, True)
    record, metadata = str(tmp_path / "train.tf_record"), str(tmp_path / "train.tf_record.json")
    messages = []

    def build(path=tmp_path / "train.json", model=sp_model):
        examples = squad.read_examples(str(path), is_training=True)
        return squad.cached_features(examples, model, settings, True, record, metadata, log=messages.append)

    def starts():
        import tensorflow as tf

        return [tf.train.Example.FromString(r.numpy()).features.feature["start_positions"].int64_list.value[0]
                for r in tf.data.TFRecordDataset(record)]

    build()
    before, stamp = starts(), (tmp_path / "train.tf_record").stat().st_mtime_ns
    build()
    assert (tmp_path / "train.tf_record").stat().st_mtime_ns == stamp  # the same inputs: reused
    data = json.loads((tmp_path / "train.json").read_text(encoding="utf-8"))
    qa = data["data"][0]["paragraphs"][0]["qas"][0]  # "1889" -> "Café   Müller": same question ids
    context = data["data"][0]["paragraphs"][0]["context"]
    qa["answers"] = [{"text": "Café   Müller", "answer_start": context.index("Café   Müller")}]
    (tmp_path / "moved.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    build(tmp_path / "moved.json")
    assert starts() != before
    assert f"rebuilding {record}: built from other examples" in messages
    whole = (tmp_path / "train.tf_record").read_bytes()
    (tmp_path / "train.tf_record").write_bytes(whole[:len(whole) // 2])
    build(tmp_path / "moved.json")
    assert (tmp_path / "train.tf_record").read_bytes() == whole
    assert f"rebuilding {record}: the record is not the one its key describes (truncated or replaced)" in messages
