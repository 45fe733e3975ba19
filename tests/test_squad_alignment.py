"""Every script aligns: SQuAD answers map characters to pieces through the tokenizer's offsets (albert.text.offsets in
Python, InGraphTokenizer.piece_characters in the graph), so run_squad.py's prediction, `AlbertSquadV1.answer` and the
raw-text serving SavedModel give the same answer, text and character offsets, on Hangul, CJK, Thai, Arabic,
combining accents, emoji and NUL mixed with Latin (tests/squad_helpers.multi_script_case; a few batches here, more in
the slow tier, ALBERT_PROPERTY_SCALE times more in a campaign); every training answer is placed in the pieces or
named in one line; a Korean SQuAD file, where the walk and its difflib fallback placed no answer, now places all.

Tiny models with their initial weights over the released 30k-clean SentencePiece model (as tests/test_answers.py):
what is compared is the path from text to answer, which is the same whatever the weights."""

import json
import os
import random
import tempfile

import keras
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings, strategies as st

from albert.config import AlbertConfig
from albert.data.features import step_boundaries
from albert.data.readers import prediction_batches, squad_decoder
from albert.tasks.squad.predictions import model_step, nbest_answers, run_model
from albert.tasks.squad.serving import export_squad_text
from albert.ground.errors import AlbertError
from albert.tasks.squad import job as squad_job
from albert.model.preprocessor import AlbertPreprocessor
from albert.tasks.squad.model import AlbertSquadV1, AlbertSquadV2
from albert.tasks.squad import examples as squad
from albert.tasks.squad import windows as squad_windows
from albert.text.graph_tokenizer import InGraphTokenizer
from albert.text.offsets import decomposed, piece_characters, preprocess_with_origin, vanishing
from albert.text.tokenization import load_sentencepiece, preprocess_text
from albert.train.settings import Runtime
from albert.weights.tf_checkpoints import save_original_checkpoint
from tests import squad_helpers
from tests.export_helpers import SPM, random_strings
from tests.helpers import ROOT
from tests.squad_helpers import KOREAN, make_korean_squad, multi_script_case

SEQ, STRIDE, QUERY = 48, 12, 10
SCALE = int(os.environ.get("ALBERT_PROPERTY_SCALE", "1"))


def examples(count: int):
    return settings(max_examples=count * SCALE, derandomize=SCALE == 1, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large])


RNG = st.randoms(use_true_random=False)


@pytest.fixture(scope="module")
def sp_model():
    return load_sentencepiece(SPM)


@pytest.fixture(scope="module")
def graph_tokenizers():
    with open(SPM, "rb") as f:
        proto = f.read()
    return {lower: InGraphTokenizer(proto, lower) for lower in (True, False)}


# ------------------------------------------------------------------------------------------ the characters
ANY_TEXT = st.lists(st.one_of(st.characters(blacklist_categories=("Cs",)),
                              st.sampled_from(squad_helpers.SPECIALS + squad_helpers.SEPARATORS + ["Σ", "ΑΣ", "İ"])),
                    max_size=40).map("".join)


@examples(25)
@given(st.lists(ANY_TEXT, min_size=1, max_size=8), st.booleans())
def test_preprocessing_keeps_each_characters_origin(graph_tokenizers, texts, lower):
    """preprocess_with_origin is preprocess_text, each character from the one it says; the graph's the same."""
    normalized, origins = graph_tokenizers[lower].normalize_with_origin(tf.constant(texts))
    for text, graph_text, graph_origin in zip(texts, normalized.numpy(), origins.to_list()):
        result, origin = preprocess_with_origin(text, lower)
        assert result == preprocess_text(text, lower=lower)
        assert (graph_text.decode(), graph_origin) == (result, origin)
        own = (lambda c: decomposed(c).lower()) if lower else decomposed
        assert all(c == " " or c in own(text[i]) or (c, text[i]) == ("ς", "Σ") for c, i in zip(result, origin))


def python_pieces(sp_model, text, lower):
    found = piece_characters(sp_model, text, lower)
    return found.pieces, found.starts, found.ends


@examples(12)
@given(RNG, st.booleans())
def test_the_graph_places_the_pieces_as_python_does(sp_model, graph_tokenizers, rng, lower):
    """InGraphTokenizer.piece_characters (tensorflow-text's offsets) == albert.text.offsets.piece_characters (the
    sentencepiece package's) on multi-script contexts and on any text, in one batch."""
    texts = [multi_script_case(rng)[1] for _ in range(6)] + random_strings(rng, 4) + [
        "".join(rng.choice(squad_helpers.SPECIALS + ["a", " ", "Σ"]) for _ in range(rng.randint(0, 12)))]
    pieces, starts, ends = graph_tokenizers[lower].piece_characters(tf.constant(texts))
    for text, p, s, e in zip(texts, pieces.to_list(), starts.to_list(), ends.to_list()):
        assert ([x.decode() for x in p], s, e) == python_pieces(sp_model, text, lower), ascii(text)


# ------------------------------------------------------------------------------------------ training answers
def holds_a_character(sp_model, text: str) -> bool:
    """Whether some character of `text` is in a piece: not whitespace, not dropped by preprocessing, not deleted by
    SentencePiece."""
    kept = [d for c in text if not c.isspace() for d in decomposed(c).lower() if not d.isspace()]
    return bool(set(kept) - vanishing(sp_model, kept))


@examples(30)
@given(RNG)
def test_every_training_answer_is_placed_or_named(sp_model, rng):
    """A training answer with a character in a piece is placed, on pieces that hold all of it; the others (only
    whitespace, combining marks or characters SentencePiece deletes) are named, and make no feature."""
    cases = [multi_script_case(rng) for _ in range(8)]
    examples_ = [squad.SquadExample(f"g{i}", q, c, text, start) for i, (q, c, text, start) in enumerate(cases)]
    _, metadata, counts = squad_windows.convert_examples(examples_, sp_model, squad_windows.Windows(SEQ, STRIDE, QUERY, True), True)
    assert counts["answers"] == len(cases)
    assert counts["unplaced"] == [e.qas_id for e in examples_ if not holds_a_character(sp_model, e.orig_answer_text)]
    for example in examples_:
        if example.qas_id in counts["unplaced"]:
            continue
        alignment = squad_windows.align(sp_model, example.paragraph_text, True)
        first, last = squad_windows.answer_pieces(alignment, example.start_position, example.orig_answer_text)
        held = [i for i in range(example.start_position, example.start_position + len(example.orig_answer_text))
                if alignment.orig_to_tok[i] is not None]
        assert alignment.tok_start_to_orig[first] <= held[0] and alignment.tok_end_to_orig[last] >= held[-1]


# ------------------------------------------------------------------------------------------ three paths, one answer
def tiny(model_class):
    keras.utils.set_random_seed(7)
    model = model_class(AlbertConfig(**squad_helpers.ANSWERING_CONFIG))
    model.preprocessor = AlbertPreprocessor(SPM, seq_length=SEQ)
    return model


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """{"v1": (model, serving signature)}: the tiny 1.1 model and its raw-text SavedModel, loaded back."""
    tmp = tmp_path_factory.mktemp("squad_alignment")
    model = tiny(AlbertSquadV1)
    export_squad_text(model, SPM, True, SEQ, STRIDE, QUERY, 20, 30, str(tmp / "v1"))
    return {"v1": (model, tf.saved_model.load(str(tmp / "v1")).signatures["serving_default"])}


STEPS = {}


def runner_answers(model, cases, version_2=False) -> list:
    """run_squad.py --do_predict's answers (albert.tasks.squad.job: the predict file read, its features cached, batched by
    length, the model run, decoded), with their character offsets: (text, start, end) per question."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dev.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"version": "1.1", "data": [{"title": "t", "paragraphs": [
                {"context": c, "qas": [{"id": str(i), "question": q}]} for i, (q, c) in enumerate(cases)]}]}, f)
        examples_ = squad.read_examples(path, False)
        record = os.path.join(tmp, "predict.tf_record")
        metadata = squad.cached_features(examples_, load_sentencepiece(SPM), squad_windows.Windows(SEQ, STRIDE, QUERY, True),
                                         False, record, record + ".json", log=lambda _: None)
        batches = prediction_batches([record], squad_decoder(SEQ, False), 4, step_boundaries(SEQ))
        step = STEPS.setdefault(id(model), model_step(model, version_2))  # traced once per model
        found = nbest_answers(examples_, metadata, run_model(model, batches, version_2, step), 20, 30, version_2)
    return [(entries[0]["text"], entries[0]["start"], entries[0]["end"]) for entries, _ in found]


def three_paths(exported, cases) -> tuple:
    model, serve = exported["v1"]
    runner = runner_answers(model, cases)
    api = [(a["answer"], a["start"], a["end"]) for a in model.answer([q for q, _ in cases], [c for _, c in cases],
                                                                     max_seq_length=SEQ, doc_stride=STRIDE,
                                                                     max_query_length=QUERY, batch_size=4)]
    out = serve(question=tf.constant([q for q, _ in cases]), context=tf.constant([c for _, c in cases]))
    served = [(a.decode(), int(s), int(e)) for a, s, e in zip(out["answer"].numpy(), out["start"].numpy(),
                                                               out["end"].numpy())]
    return runner, api, served


def check_answers(cases, answers):
    for (_, context), (text, start, end) in zip(cases, answers):
        assert (text, start, end) == ("", -1, -1) or (text and context[start:end] == text == text.strip()), text


def alike(exported, rng):
    cases = [multi_script_case(rng)[:2] for _ in range(6)]
    runner, api, served = three_paths(exported, cases)
    assert runner == api == served, [ascii(c) for _, c in cases]
    check_answers(cases, runner)


@examples(3)
@given(RNG)
def test_runner_answer_and_serving_answer_alike_in_every_script(exported, rng):
    alike(exported, rng)


@pytest.mark.slow
@examples(40)
@given(RNG)
def test_runner_answer_and_serving_answer_alike_in_every_script_many(exported, rng):
    alike(exported, rng)


V2 = {}  # the tiny 2.0 model, made once


@pytest.mark.slow
@examples(15)
@given(RNG)
def test_squad_v2_runner_and_answer_alike_in_every_script(rng):
    """2.0's head, the runner's prediction against answer() (the serving of 2.0: tests/test_squad_serving.py)."""
    model = V2.setdefault("model", tiny(AlbertSquadV2))
    cases = [multi_script_case(rng)[:2] for _ in range(6)]
    runner = runner_answers(model, cases, version_2=True)
    api = [(a["nbest"][0]["answer"], a["nbest"][0]["start"], a["nbest"][0]["end"]) if a["nbest"] else ("", -1, -1)
           for a in model.answer([q for q, _ in cases], [c for _, c in cases], max_seq_length=SEQ,
                                 doc_stride=STRIDE, max_query_length=QUERY, batch_size=4, return_nbest=True)]
    assert runner == api
    check_answers(cases, runner)


# ------------------------------------------------------------------------------------------ a Korean SQuAD file
def test_a_korean_squad_file_is_answered_alike_and_every_answer_placed(exported, sp_model, tmp_path):
    """The hand-written Korean file (tests/squad_helpers.KOREAN): the walk placed none of its 25 answers (Hangul
    decomposes into jamo under NFKD, SentencePiece composes them back) and predicted "" for all; now every answer
    is placed, and run_squad.py's job (in this process, --do_predict on the tiny model), answer() and the serving
    model give the same non-empty answers."""
    import sys

    sys.path.insert(0, os.path.join(ROOT, "tools"))
    try:
        import squad_alignment
    finally:
        sys.path.pop(0)
    path = tmp_path / "korean.json"
    assert make_korean_squad(path) == 25
    assert squad_alignment.placement(sp_model, squad_alignment.answers(str(path))) == (25, 25, 3)
    model, _ = exported["v1"]
    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps(squad_helpers.ANSWERING_CONFIG))
    checkpoint = save_original_checkpoint(model, str(tmp_path / "tiny" / "model.ckpt-0"))
    out = tmp_path / "out"
    squad_job.run(squad_job.SquadRun(albert_config_file=str(config), spm_model_file=SPM, init_checkpoint=checkpoint,
                                     output_dir=str(out), predict_file=str(path), do_predict=True,
                                     max_seq_length=SEQ, doc_stride=STRIDE, max_query_length=QUERY,
                                     predict_batch_size=8), Runtime())
    predictions = json.loads((out / "predictions.json").read_text(encoding="utf-8"))
    cases = [(q, context) for context, questions in KOREAN for q, _ in questions]
    runner, api, served = three_paths(exported, cases)
    assert runner == api == served
    assert [text for text, _, _ in runner] == [predictions[f"ko{p}-{q}"] for p, (_, questions) in enumerate(KOREAN)
                                               for q in range(len(questions))]
    assert all(text for text, _, _ in runner)
    check_answers(cases, runner)


def korean_training_file(path, unplaceable: int, placeable: bool = True):
    """KOREAN (when `placeable`) and `unplaceable` questions whose answer no piece holds, as a training file."""
    make_korean_squad(path, KOREAN if placeable else [])
    data = json.loads(path.read_text(encoding="utf-8"))
    for k, answer in enumerate(["\x08", "\u200b", "\u0301", "\t"][:unplaceable]):
        context = f"표{k} 백{answer}스페이스"
        data["data"].append({"title": f"x{k}", "paragraphs": [{"context": context, "qas": [
            {"id": f"x{k}", "question": "무엇?", "answers": [{"text": answer, "answer_start": context.index(answer)}]}]}]})
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return squad.read_examples(str(path), True)


def test_unplaced_training_answers_are_one_line_and_none_placed_is_refused(sp_model, tmp_path):
    path = tmp_path / "train.json"
    examples_ = korean_training_file(path, 2)
    record = tmp_path / "train.tf_record"
    lines = []
    metadata = squad.cached_features(examples_, sp_model, squad_windows.Windows(SEQ, STRIDE, QUERY, True), True, str(record),
                                     str(record) + ".json", log=lines.append, source=str(path))
    line = f"{path}: 2 of 27 answers could not be placed in the tokens: ids 'x0', 'x1'"
    assert lines[-1] == line and sum(line in x for x in lines) == 1
    assert {metadata["examples"][f["example"]]["qas_id"] for f in metadata["features"]} == \
        {e.qas_id for e in examples_} - {"x0", "x1"}
    again = []  # reused from the cache: the same line, once
    squad.cached_features(examples_, sp_model, squad_windows.Windows(SEQ, STRIDE, QUERY, True), True, str(record),
                          str(record) + ".json", log=again.append, source=str(path))
    assert again == [line]
    none = tmp_path / "none.json"
    examples_ = korean_training_file(none, 4, placeable=False)
    with pytest.raises(AlbertError) as caught:
        squad.cached_features(examples_, sp_model, squad_windows.Windows(SEQ, STRIDE, QUERY, True), True,
                              str(tmp_path / "none.tf_record"), str(tmp_path / "none.tf_record.json"),
                              log=lines.append, source=str(none))
    assert str(caught.value) == (f"{none}: 4 of 4 answers could not be placed in the tokens: ids 'x0', 'x1', 'x2', "
                                 "'x3'")
    assert sorted(os.listdir(tmp_path)) == ["none.json", "train.json", "train.tf_record", "train.tf_record.json"]


def test_the_korean_file_is_placed_exactly_where_pieces_allow(sp_model):
    """What `exact` counts: an answer given back as written where its pieces are its own (Latin), else the pieces'
    wider text (a run of Hangul, unknown to the released model, is one piece: `년에`, `수원시에`)."""
    context = KOREAN[6][0]
    alignment = squad_windows.align(sp_model, context, True)
    for answer, expected in (("1969년", "1969년에"), ("Galaxy", "Galaxy"), ("경기도 수원시", "경기도 수원시에")):
        first, last = squad_windows.answer_pieces(alignment, context.index(answer), answer)
        assert alignment.text(first, last, context) == expected
