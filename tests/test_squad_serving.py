"""run_squad.py's serving model on raw text (albert.tasks.squad.serving): its in-graph alignment (the tokenizer's
offsets) equals albert.tasks.squad.windows.align, its windows, packing and max-context flags equal convert_examples';
tiny 1.1 and 2.0 models exported once, loaded in a process that imports only tensorflow and tensorflow_text, answer as
`AlbertSquadV1/V2.answer` (run_squad.py's post-processing) on long, accented, spaced, non-Latin contexts; bad requests
are one-line errors; tools/answer.py answers from the export. Slow: after a short run_squad.py, its `text/` export
answers the predict file as predictions.json. (Every script, generated: tests/test_squad_alignment.py.)

Tiny models with their initial weights over the released 30k-clean SentencePiece model (as tests/test_answers.py):
what is compared is the path from text to answer, which is the same whatever the weights."""

import json
import os
import random

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert.config import AlbertConfig
from albert.tasks.squad.windows import Question, Windows, align, convert_examples
from albert.tasks.squad.serving import export_squad_text, most_context, pack, window_layout
from albert.model.preprocessor import AlbertPreprocessor
from albert.tasks.squad.model import AlbertSquadV1, AlbertSquadV2
from albert.text.graph_tokenizer import InGraphTokenizer
from albert.text.offsets import vanishing, vanishing_characters
from albert.text.tokenization import load_sentencepiece
from tests import squad_helpers
from tests.export_helpers import SPM, fresh, random_strings
from tests.helpers import ROOT
from tests.squad_helpers import make_sentencepiece, make_squad, run_squad, tiny_config

SEQ, STRIDE, QUERY = 48, 12, 10
CONFIG = squad_helpers.ANSWERING_CONFIG
LONG = squad_helpers.LONG_CONTEXT
BREAKS = "ΟΔΟΣ ΣΤΑΔΙΟΥ is a street in Athens."  # lower-cased whole, Σ ends a word as ς; alone it is σ
ASKED = [
    ("Where does the Moselle rise?", LONG),
    ("Which wine is the valley famous for?", LONG),
    ("When did the café open?",
     "Café\tMüller   opened\n\nin 1921 in Zürich, the “Crème Brûlée” house of Señor Núñez."),
    ("What is the code?", "The code\x08 word is plum; the\x08 backspace\tvanishes from the pieces."),
    ("Which city?",
     "東京は日本の首都です。 Moscow is Москва, Athens is Αθήνα, and Zoë’s naïve résumé costs $2,500.00."),
    ("Where?",
     "a\u200bzero width space, a soft\u00adhyphen, NBSP\u00a0here, ﬁne ligatures, ½ and ① and \u00a8."),
    ("What street?", BREAKS),
    ("Anything?", "\x08"),  # no piece: no window
    ("Where does it meet the Rhine?", "At Koblenz the Moselle meets the Rhine."),
    ("Who wrote it?", "\n\t " + " \t".join(["Lines of text, tabbed\tand\n\nbroken."] * 12) + "  \n"),
]
# what the 30k-clean model's normaliser deletes (the first group) or turns into spaces: no piece holds them
VANISHING = ({chr(c) for c in [*range(0x1, 0x9), *range(0xE, 0x1C), 0x7F, 0x8F, 0x9F]}
             | {chr(c) for c in [*range(0x200B, 0x2010), 0x2581, 0xFEFF, 0xFFFD]})


@pytest.fixture(scope="module")
def sp_model():
    return load_sentencepiece(SPM)


@pytest.fixture(scope="module")
def graph_tokenizers():
    with open(SPM, "rb") as f:
        proto = f.read()
    return proto, {lower: InGraphTokenizer(proto, lower) for lower in (True, False)}


def test_the_released_models_vanishing_characters(sp_model):
    """The characters no piece holds are those SentencePiece deletes: a backspace is passed over."""
    assert {c for c in vanishing_characters(sp_model) if not c.isspace()} == VANISHING
    assert vanishing(sp_model, "a\x08\x00\x80b") == {"\x08"}  # NUL and most C1 controls stay, as pieces
    text = "This girl will put \x08a picture on the desk."  # a CoLA sentence's backspace
    alignment = align(sp_model, text, True)
    assert alignment.text(alignment.pieces.index("▁picture"), alignment.pieces.index("▁picture"), text) == "picture"
    assert alignment.span(4, 4, text) == ("a", 20, 21) and alignment.pieces[4] == "▁a"  # after the backspace


def test_alignment_in_the_graph_equals_align(sp_model, graph_tokenizers):
    _, tokenizers = graph_tokenizers
    rng = random.Random(11)
    texts = [t for t in random_strings(rng, 160) if t.strip()] + [c for _, c in ASKED]
    texts += ["\x08".join(rng.sample(texts, 3)), "x\ufeffy \u200b z", "a\u2581b", "a\x00b ΑΣ\x00Σ"]
    for lower in (True, False):
        pieces, starts, ends = tf.function(tokenizers[lower].piece_characters, autograph=False)(tf.constant(texts))
        for text, p, s, e in zip(texts, pieces.to_list(), starts.to_list(), ends.to_list()):
            alignment = align(sp_model, text, lower)
            assert ([x.decode() for x in p], s, e) == (alignment.pieces, alignment.tok_start_to_orig,
                                                       alignment.tok_end_to_orig), (lower, text)


def test_windows_in_the_graph_equal_convert_examples(sp_model, graph_tokenizers):
    _, tokenizers = graph_tokenizers
    tokenizer = tokenizers[True]
    asked = ASKED + [("A question much longer than the ten pieces kept of it, all of them words?", LONG)]
    for seq, stride in ((SEQ, STRIDE), (SEQ, 100), (24, 3)):  # a stride longer than a window's room; a short one
        rows, metadata, _ = convert_examples([Question(str(i), q, c) for i, (q, c) in enumerate(asked)], sp_model,
                                             Windows(seq, stride, QUERY, True), False)
        question = tokenizer.tokenize(tf.constant([q for q, _ in asked]))[:, :QUERY]
        doc = tokenizer.tokenize(tf.constant([c for _, c in asked]))
        layout = window_layout(question.row_lengths(), doc.row_lengths(), seq, stride)
        features = pack(tokenizer, question, doc, layout, seq, True)
        for key in ("input_ids", "input_mask", "segment_ids", "p_mask"):
            np.testing.assert_array_equal(features[key].numpy(), np.array(rows[key]), err_msg=f"{seq} {stride} {key}")
        windows = layout["row"].shape[0]
        assert windows == len(metadata["features"]) > len(asked) + 6
        positions = tf.ragged.range(layout["start"], layout["start"] + layout["length"])
        window = tf.cast(positions.value_rowids(), tf.int64)
        flags = positions.with_values(most_context(layout, window, positions.values)).to_list()
        assert ["".join("1" if f else "0" for f in row) for row in flags] == \
            [f["max_context"] for f in metadata["features"]]
        assert [f["span_start"] for f in metadata["features"]] == layout["start"].numpy().tolist()
        assert [f["doc_offset"] for f in metadata["features"]] == layout["offset"].numpy().tolist()


def tiny(model_class, **kwargs):
    keras.utils.set_random_seed(7)
    model = model_class(AlbertConfig(**CONFIG), **kwargs)
    model.preprocessor = AlbertPreprocessor(SPM, seq_length=SEQ)
    return model


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The tiny 1.1 and 2.0 models' answers in Python (AlbertSquadV1/V2.answer) and exported, and what the exports
    answer in a fresh process (with the bad requests' errors and tools/answer.py's lines)."""
    tmp = tmp_path_factory.mktemp("squad_text")
    questions, contexts = [q for q, _ in ASKED], [c for _, c in ASKED]
    settings = dict(max_seq_length=SEQ, doc_stride=STRIDE, max_query_length=QUERY)
    expected = {}
    for name, model in (("v1", tiny(AlbertSquadV1)), ("v2", tiny(AlbertSquadV2))):
        threshold = 0.0
        if name == "v2":  # between the questions' no-answer scores: some of each
            threshold = float(np.median([a["null_score"] for a in model.answer(questions, contexts, **settings)]))
        expected[name] = (model.answer(questions, contexts, null_score_diff_threshold=threshold, return_nbest=True,
                                       **settings), threshold)
        export_squad_text(model, SPM, True, SEQ, STRIDE, QUERY, 20, 30, str(tmp / name), threshold)
    (tmp / "request.json").write_text(json.dumps({"question": questions, "context": contexts}))
    fresh(f"""
        import contextlib, io, json, sys
        import tensorflow as tf, tensorflow_text
        request = json.load(open("request.json"))
        report = {{}}
        for name in ("v1", "v2"):
            serve = tf.saved_model.load(name).signatures["serving_default"]
            out = serve(**{{k: tf.constant(v) for k, v in request.items()}})
            report[name] = {{k: [x.decode() if isinstance(x, bytes) else x.item() for x in v.numpy()]
                            for k, v in out.items()}}
        errors = []
        for bad in ({{"question": ["one?"]}}, {{"context": ["Text.", "  \\t\\n"]}}, {{"question": ["Which?", " "]}},
                    {{"context": ["", "Text."]}}):
            two = dict({{"question": ["Which?", "Who?"], "context": ["Text.", "More text."]}}, **bad)
            try:
                serve(**{{k: tf.constant(v) for k, v in two.items()}})
                errors.append(None)
            except tf.errors.InvalidArgumentError as error:
                errors.append([line for line in error.message.splitlines() if "assertion failed" in line])
        report["again"] = serve(question=tf.constant(request["question"][:2]),
                                context=tf.constant(request["context"][:2]))["answer"].numpy()
        report["again"] = [x.decode() for x in report["again"]]
        report["errors"] = errors
        sys.path.insert(0, {os.path.join(ROOT, "tools")!r})
        import answer
        report["tool"] = []
        for args in (["v1", "Where does it meet the Rhine?", "At Koblenz the Moselle meets the Rhine."],
                     ["v2", "Where does it meet the Rhine?", "At Koblenz the Moselle meets the Rhine."],
                     ["v1", "Where?", " "], [".", "Where?", "Text."]):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    status = answer.main(args)
                except SystemExit as stop:
                    status = stop.code
            report["tool"].append([status, out.getvalue(), err.getvalue()])
        import classify  # on a SQuAD export (a TypeError before issue 71): what it is, and the tool to use
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                status = classify.main(["v1", "A sentence."])
            except SystemExit as stop:
                status = stop.code
        report["classify"] = [status, err.getvalue()]
        report["albert"] = sorted(m for m in sys.modules if m.split(".")[0] == "albert")
        json.dump(report, open("served.json", "w"))
    """, tmp)
    return expected, json.loads((tmp / "served.json").read_text())


@pytest.mark.slow  # the exports of `served`; test_squad_alignment.py's fast test holds the served answers to answer()
@pytest.mark.parametrize("name", ["v1", "v2"])
def test_served_answers_are_the_python_apis(served, sp_model, name):
    expected, report = served
    answers, threshold = expected[name]
    out = report[name]
    assert sorted(out) == sorted(["answer", "start", "end", "score"] + (["null_score", "has_answer"] if name == "v2"
                                                                        else []))
    for i, ((_, context), answer) in enumerate(zip(ASKED, answers)):
        if out["answer"][i]:
            assert context[out["start"][i]:out["end"][i]] == out["answer"][i]
        else:
            assert (out["start"][i], out["end"][i], out["score"][i]) == (-1, -1, 0.0)
        assert (out["answer"][i], out["start"][i], out["end"][i]) == (answer["answer"], answer["start"],
                                                                      answer["end"]), i
        if answer["answer"]:
            best = answer["nbest"][0]
            assert abs(out["score"][i] - (best["start_log_prob"] + best["end_log_prob"])) < 1e-5
        assert abs(out["score"][i] - answer["score"]) < 1e-5  # one meaning of score: the API's is the served one
        if name == "v2":
            assert abs(out["null_score"][i] - answer["null_score"]) < 1e-5 * max(1.0, abs(answer["null_score"]))
            assert out["has_answer"][i] == answer["has_answer"] == (answer["answer"] != "")
    if name == "v2":
        assert 2 <= sum(out["has_answer"]) <= len(ASKED) - 2  # the threshold splits them
        assert out["null_score"][ASKED.index(("Anything?", "\x08"))] == 1e6  # no window
        assert all(h == (n <= threshold) for h, n, a in zip(out["has_answer"], out["null_score"], answers)
                   if a["nbest"])
    else:
        assert all(out["answer"][i] for i in range(len(ASKED)) if ASKED[i][1] != "\x08")
    answered = [ASKED[i][1][out["start"][i]:out["end"][i]] for i in range(len(ASKED)) if out["answer"][i]]
    assert any(not a.isascii() for a in answered) or name == "v2"


@pytest.mark.slow  # the exports of `served`; test_squad_alignment.py's fast test holds the served answers to answer()
def test_bad_requests_are_one_line_and_the_process_serves_on(served):
    _, report = served
    assert report["albert"] == []
    assert report["errors"] == [
        ["assertion failed: [question: 1 questions for 2 contexts; send one question and one context per row]"],
        ["assertion failed: [context: row 1 is empty; send the text the answer is to be found in]"],
        ["assertion failed: [question: row 1 is empty; send the question to answer]"],
        ["assertion failed: [context: row 0 is empty; send the text the answer is to be found in]"]]
    assert report["again"] == report["v2"]["answer"][:2]


@pytest.mark.slow  # the exports of `served`; test_squad_alignment.py's fast test holds the served answers to answer()
def test_the_answer_tool(served):
    expected, report = served
    (v1_status, v1_line, _), (v2_status, v2_line, _), empty, not_squad = report["tool"]
    i = ASKED.index(("Where does it meet the Rhine?", "At Koblenz the Moselle meets the Rhine."))
    v1 = expected["v1"][0][i]
    assert v1_status == 0 and v1_line == (f"answer: {v1['answer']}  (characters {v1['start']}-{v1['end']}, score "
                                          f"{report['v1']['score'][i]:.3f})\n")
    v2 = {k: v[i] for k, v in report["v2"].items()}
    assert v2_status == 0 and v2_line == (
        f"answer: {v2['answer']}  (characters {v2['start']}-{v2['end']}, score {v2['score']:.3f}, no-answer score "
        f"{v2['null_score']:.3f})\n" if v2["has_answer"] else f"no answer (no-answer score {v2['null_score']:.3f})\n")
    assert empty == [2, "", "answer.py: error: context: row 0 is empty; send the text the answer is to be found in\n"]
    assert not_squad == [2, "", "answer.py: error: .: not a SavedModel directory (no saved_model.pb); pass "
                                "run_squad.py's EXPORT_DIR/text\n"]
    assert report["classify"] == [2, "classify.py: error: v1 is a raw-text SQuAD model (run_squad.py --export_dir's "
                                     "text/), not a classifier; answer with tools/answer.py v1 QUESTION CONTEXT\n"]


@pytest.mark.slow
def test_run_squads_text_export_answers_as_predictions_json(tmp_path):
    """A short SQuAD 2.0 run_squad.py with --export_dir: `text/` beside the packed model, its threshold the one the
    run tuned, and in a fresh process it answers the predict file as predictions.json and null_odds.json."""
    rng = random.Random(4)
    spm = make_sentencepiece(tmp_path, rng)
    make_squad(tmp_path / "train.json", rng, 160, True)
    make_squad(tmp_path / "dev.json", rng, 30, True)
    out, export = tmp_path / "out", tmp_path / "serving"
    result = run_squad(f"--albert_config_file={tiny_config(tmp_path)}", f"--spm_model_file={spm}",
                       "--max_seq_length=20", "--max_query_length=8", "--doc_stride=6", f"--output_dir={out}",
                       f"--train_file={tmp_path / 'train.json'}", f"--predict_file={tmp_path / 'dev.json'}",
                       "--do_train", "--do_predict", "--train_batch_size=16", "--num_train_epochs=3",
                       "--learning_rate=1e-3", "--version_2_with_negative", f"--export_dir={export}")
    assert result.returncode == 0, result.stderr[-3000:]
    threshold = float(dict(line.split(" = ") for line in (out / "predict_results.txt").read_text().splitlines())[
        "null_score_diff_threshold"])
    assert (f"exported the raw-text serving model to {export / 'text'} (inputs: question, context; outputs: answer, "
            "start, end, score, null_score, has_answer; no-answer threshold "
            f"{threshold:g}, tuned on {tmp_path / 'dev.json'})") in result.stdout
    assert (export / "saved_model.pb").exists() and (export / "model.tflite").exists()  # the packed one, kept
    data = json.loads((tmp_path / "dev.json").read_text())["data"]
    asked = [(qa["id"], qa["question"], p["context"]) for a in data for p in a["paragraphs"] for qa in p["qas"]]
    (tmp_path / "request.json").write_text(json.dumps({"question": [q for _, q, _ in asked],
                                                      "context": [c for _, _, c in asked]}))
    fresh(f"""
        import json
        import tensorflow as tf, tensorflow_text
        serve = tf.saved_model.load("{export / 'text'}").signatures["serving_default"]
        out = serve(**{{k: tf.constant(v) for k, v in json.load(open("request.json")).items()}})
        json.dump({{k: [x.decode() if isinstance(x, bytes) else x.item() for x in v.numpy()] for k, v in out.items()}},
                  open("served.json", "w"))
    """, tmp_path)
    served = json.loads((tmp_path / "served.json").read_text())
    predictions = json.loads((out / "predictions.json").read_text())
    null_odds = json.loads((out / "null_odds.json").read_text())
    np.testing.assert_allclose(served["null_score"], [null_odds[qid] for qid, _, _ in asked], atol=1e-5)
    # the tuned threshold is one question's own no-answer score: there, 1e-7 of round-off decides either way
    clear = [i for i, (qid, _, _) in enumerate(asked) if abs(null_odds[qid] - threshold) > 1e-5]
    assert len(clear) >= len(asked) - 1
    assert [served["answer"][i] for i in clear] == [predictions[asked[i][0]] for i in clear]
    assert [served["has_answer"][i] for i in clear] == [predictions[asked[i][0]] != "" for i in clear]
    assert 0 < sum(served["has_answer"]) < len(asked)
