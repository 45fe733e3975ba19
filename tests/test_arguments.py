"""Arguments (issue 71): the checks of albert.ground.arguments, one line each; every public entry point on raw text
(`fill_mask`, `answer`, `choose`, the raw-text `predict`) given a wrong type or a value out of range raises
AlbertError with one line starting with its name, never another exception (a property: Hypothesis, a few seeded
examples here, more from `tools/fuzz_readers.py --arguments SCALE`); the three tools read their arguments and stdin
as UTF-8 and refuse other bytes in one line (run with bytes argv), and classify.py names another task's export and
the tool that serves it.

The exact lines of each entry point's mistakes are in tests/test_answers.py, tests/test_fill_mask.py,
tests/test_keras_api.py and tests/test_token_classifier.py. Tiny models over the released 30k-clean SentencePiece
model (tests/squad_helpers.py ANSWERING_CONFIG); the tools' exports here are stand-ins with the real exports'
signatures (the real SQuAD export: tests/test_squad_serving.py)."""

import contextlib
import io
import math
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
from hypothesis import given, strategies as st

from albert.config import AlbertConfig
from albert.ground import arguments
from albert.ground.errors import AlbertError
from albert.model.preprocessor import AlbertPreprocessor
from albert.tasks.classification.model import AlbertClassifier
from albert.tasks.pretraining.model import AlbertPretrainer
from albert.tasks.race.model import AlbertMultipleChoice
from albert.tasks.ner.model import AlbertTokenClassifier
from albert.tasks.squad.model import AlbertSquadV1, AlbertSquadV2
from tests.helpers import ROOT
from tests.reader_properties import examples
from tests.squad_helpers import ANSWERING_CONFIG
from tests.export_helpers import SPM

TOOLS = os.path.join(ROOT, "tools")


# ----------------------------------------------------------------------------------------------- the checks
@pytest.mark.parametrize("call, message", [
    (lambda: arguments.texts("f", "texts", None), "f: texts is None, not a string or a list of strings"),
    (lambda: arguments.texts("f", "texts", 2.5), "f: texts is 2.5, not a string or a list of strings"),
    (lambda: arguments.texts("f", "texts", {"a"}),
     "f: texts is a value of type set, not a string or a list of strings"),
    (lambda: arguments.texts("f", "texts", np.array([["a"]])),
     "f: texts is a value of type ndarray, not a string or a list of strings"),
    (lambda: arguments.texts("f", "texts", ["a", "b", b"c"]), "f: texts[2] is b'c', not a string"),
    (lambda: arguments.texts("f", "texts", ["a", object()]), "f: texts[1] is a value of type object, not a string"),
    (lambda: arguments.texts("f", "texts", "a", single=False), "f: texts is one string, 'a'; pass a list of strings"),
    (lambda: arguments.texts("f", "texts", ["a\ud800b"]),
     "f: texts[0] holds a lone surrogate (U+D800 at character 1), which is not text; decode its bytes strictly "
     "(errors='strict')"),
    (lambda: arguments.texts("f", "texts", ["x" * 300, None]), "f: texts[1] is None, not a string"),
    (lambda: arguments.text("f", "article", ["a"]), "f: article is a value of type list, not a string"),
    (lambda: arguments.text_lists("f", "options", [["a"], ("b", 3)]), "f: options[1][1] is 3, not a string"),
    (lambda: arguments.text_lists("f", "options", [["a"], "b"]), "f: options[1] is 'b', not a list of strings"),
    (lambda: arguments.text_lists("f", "options", "ab"), "f: options is 'ab', not a list of lists of strings"),
    (lambda: arguments.text_batch("f", "x", [["a"], [None]]), "f: x[1][0] is None, not a string"),
    (lambda: arguments.text_batch("f", "x", [["a"], []]),
     "f: x[1] is an empty list; every row needs at least one string"),
    (lambda: arguments.text_batch("f", "x", [b"\xc3("]),
     "f: x[0] is b'\\xc3(', not UTF-8 (byte 0xc3 at 0); pass a str"),
    (lambda: arguments.whole("f", "batch_size", 0, 1), "f: batch_size must be a whole number of at least 1, got 0"),
    (lambda: arguments.whole("f", "batch_size", 2.0, 1), "f: batch_size must be a whole number of at least 1, got 2.0"),
    (lambda: arguments.whole("f", "batch_size", False, 0),
     "f: batch_size must be a whole number of at least 0, got False"),
    (lambda: arguments.whole("f", "batch_size", None, 1),
     "f: batch_size must be a whole number of at least 1, got None"),
    (lambda: arguments.whole("f", "doc_stride", "3", 1, optional=True),
     "f: doc_stride must be a whole number of at least 1 (or None: the default), got '3'"),
    (lambda: arguments.finite("f", "threshold", float("-inf")), "f: threshold must be a finite number, got -inf"),
    (lambda: arguments.finite("f", "threshold", True), "f: threshold must be a finite number, got True"),
    (lambda: arguments.finite("f", "threshold", "0.5"), "f: threshold must be a finite number, got '0.5'"),
    (lambda: arguments.flag("f", "return_nbest", 1), "f: return_nbest must be True or False, got 1"),
    (lambda: arguments.flag("f", "return_nbest", None), "f: return_nbest must be True or False, got None"),
])
def test_each_check_is_one_line_naming_the_argument(call, message):
    with pytest.raises(AlbertError) as caught:
        call()
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)  # the CLIs and library callers catch it as a ValueError


def test_what_the_checks_take():
    assert arguments.texts("f", "t", "a") == (["a"], True)
    assert arguments.texts("f", "t", ("a", np.str_("b"))) == (["a", "b"], False)
    assert arguments.texts("f", "t", np.array(["a", "b"])) == (["a", "b"], False)
    assert arguments.texts("f", "t", []) == ([], False)
    assert arguments.text_lists("f", "o", (("a", "b"), ["c", "d"])) == [["a", "b"], ["c", "d"]]
    assert arguments.text_batch("f", "x", []) == [0]
    assert arguments.text_batch("f", "x", ["a", b"b"]) == [2]
    assert arguments.text_batch("f", "x", [["a", "b"], ("c", "d"), np.array(["e", "f"], object)]) == [3, 2]
    assert arguments.whole("f", "n", np.int64(3), 1) == 3 and type(arguments.whole("f", "n", np.int64(3), 1)) is int
    assert arguments.whole("f", "n", None, 1, optional=True) is None
    assert arguments.finite("f", "x", np.float32(-2.5)) == -2.5 and arguments.finite("f", "x", 3) == 3.0
    assert arguments.flag("f", "b", np.bool_(True)) is True
    assert arguments.described(["a"] * 1000) == "a value of type list" and arguments.described(None) == "None"
    assert len(arguments.described("é" * 1000)) < 210  # what a message quotes is cut


# ------------------------------------------------------------------------------- every entry point, a property
def tiny(model_class, **kwargs):
    model = model_class(AlbertConfig(**ANSWERING_CONFIG), **kwargs)
    model.preprocessor = AlbertPreprocessor(SPM, seq_length=40)
    return model


@pytest.fixture(scope="module")
def models():
    # Seeded once, before the preprocessors are made: tf.random.set_seed clears TensorFlow's kernel cache, and with
    # it the SentencePiece resources of the preprocessors made before (a string predict then fails: NotFoundError).
    keras.utils.set_random_seed(7)
    return {"v1": tiny(AlbertSquadV1), "v2": tiny(AlbertSquadV2, start_n_top=2, end_n_top=2),
            "chooser": tiny(AlbertMultipleChoice), "pretrainer": tiny(AlbertPretrainer),
            "classifier": tiny(AlbertClassifier, num_labels=2), "tagger": tiny(AlbertTokenClassifier, num_labels=3)}


GOOD_TEXT = st.sampled_from(["Where?", "At Koblenz the Moselle meets the Rhine.", "café", " x "])
ODD = st.one_of(st.none(), st.integers(), st.floats(allow_nan=True), st.booleans(), st.complex_numbers(),
                st.binary(max_size=6), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
                st.sets(st.integers(), max_size=2), st.builds(object), st.just(np.zeros(2)))  # no string among them
SURROGATE = st.tuples(GOOD_TEXT, st.integers(0xD800, 0xDFFF)).map(lambda t: t[0] + chr(t[1]))


def one_wrong_in(good, wrong):
    """A list of good items with one wrong item at any place."""
    return st.tuples(st.lists(good, max_size=3), wrong, st.integers(0, 3)).map(
        lambda t: t[0][:t[2]] + [t[1]] + t[0][t[2]:])


NOT_TEXTS = st.one_of(ODD, SURROGATE, one_wrong_in(GOOD_TEXT, st.one_of(ODD, SURROGATE, st.lists(GOOD_TEXT))),
                      st.lists(st.lists(GOOD_TEXT, max_size=2), min_size=1, max_size=2))
NOT_OPTIONS = st.one_of(ODD, GOOD_TEXT, one_wrong_in(st.lists(GOOD_TEXT, min_size=4, max_size=4),
                                                     st.one_of(ODD, GOOD_TEXT, one_wrong_in(GOOD_TEXT, ODD))))
NOT_TEXT_IN_A_BATCH = st.one_of(  # bytes are texts of a batch when they hold UTF-8; these do not
    ODD.filter(lambda v: not isinstance(v, (bytes, np.ndarray))), SURROGATE, st.sampled_from([b"\xff", b"caf\xe9"]))
NOT_A_FLAT_BATCH = st.one_of(  # predict's x: nothing Keras takes (a number, one string), or a list holding a non-text
    st.none(), st.integers(), st.floats(allow_nan=True), st.booleans(), GOOD_TEXT, st.binary(max_size=4),
    one_wrong_in(GOOD_TEXT, NOT_TEXT_IN_A_BATCH))
NOT_A_BATCH = st.one_of(
    NOT_A_FLAT_BATCH,
    st.tuples(st.lists(st.lists(GOOD_TEXT, min_size=2, max_size=2), min_size=1, max_size=2),  # rows of texts with
              st.one_of(NOT_TEXT_IN_A_BATCH, GOOD_TEXT, st.lists(GOOD_TEXT, max_size=1),  # a bad row at any place
                        one_wrong_in(GOOD_TEXT, NOT_TEXT_IN_A_BATCH).filter(lambda row: len(row) == 2)),
              st.integers(0, 2)).map(lambda t: t[0][:t[2]] + [t[1]] + t[0][t[2]:]),
    st.tuples(st.lists(GOOD_TEXT, min_size=1, max_size=2), st.lists(GOOD_TEXT, min_size=3, max_size=4)))  # a pair
NOT_SENTENCES = st.one_of(  # the tagger's x: as predict's, or sentences of words holding a non-string
    NOT_A_FLAT_BATCH, one_wrong_in(st.lists(GOOD_TEXT, max_size=2), one_wrong_in(GOOD_TEXT, ODD)))
NOT_A_FLAG = st.one_of(st.none(), st.integers(), st.floats(allow_nan=True), st.text(max_size=3),
                       st.lists(st.booleans(), max_size=2))
NOT_FINITE = st.one_of(st.sampled_from([math.nan, math.inf, -math.inf]), st.none(), st.booleans(), st.text(max_size=3),
                       st.complex_numbers(), st.lists(st.floats(), max_size=2))


def not_whole(minimum: int, optional: bool = False, above: int | None = None):
    """Below `minimum`, not a whole number (a float, a bool, a string, a list), None unless optional, or over
    `above` where a larger value is out of range too."""
    wrong = [st.integers(max_value=minimum - 1), st.floats(allow_nan=True), st.booleans(), st.text(max_size=3),
             st.lists(st.integers(), max_size=2), st.just(np.float64(minimum))]
    if not optional:
        wrong.append(st.none())
    if above is not None:
        wrong.append(st.integers(min_value=above + 1, max_value=10 ** 12))
    return st.one_of(wrong)


POSITIONS = ANSWERING_CONFIG["max_position_embeddings"]
ANSWER = ({"questions": ["Where?"], "contexts": ["At Koblenz the Moselle meets the Rhine."]},
          {"questions": NOT_TEXTS, "contexts": NOT_TEXTS, "doc_stride": not_whole(1, True),
           "max_seq_length": not_whole(5, True, POSITIONS), "max_query_length": not_whole(1, True, POSITIONS - 4),
           "n_best_size": not_whole(1), "max_answer_length": not_whole(1), "null_score_diff_threshold": NOT_FINITE,
           "return_nbest": NOT_A_FLAG, "batch_size": not_whole(1)})
ENTRY_POINTS = {  # name -> (model, method, where, good arguments, a strategy of wrong values per argument)
    "answer": ("v1", "answer", "AlbertSquadV1.answer") + ANSWER,
    "answer 2.0": ("v2", "answer", "AlbertSquadV2.answer") + ANSWER,
    "choose": ("chooser", "choose", "AlbertMultipleChoice.choose",
               {"articles": ["An article."], "questions": ["Why?"], "options": [["a", "b", "c", "d"]]},
               {"articles": NOT_TEXTS, "questions": NOT_TEXTS, "options": NOT_OPTIONS,
                "max_seq_length": not_whole(4, True, POSITIONS), "max_qa_length": not_whole(1, True, POSITIONS - 3),
                "batch_size": not_whole(1)}),
    "fill_mask": ("pretrainer", "fill_mask", "AlbertPretrainer.fill_mask", {"texts": ["The [MASK] sat."]},
                  {"texts": NOT_TEXTS, "top_k": not_whole(1, above=30000), "batch_size": not_whole(1)}),
    "predict": ("classifier", "predict", "AlbertClassifier.predict", {"x": ["A cat sat."]},
                {"x": NOT_A_BATCH, "batch_size": not_whole(1, True)}),
    "predict words": ("tagger", "predict", "AlbertTokenClassifier.predict", {"x": [["A", "cat"]]},
                      {"x": NOT_SENTENCES, "batch_size": not_whole(1, True)}),
}


@pytest.mark.parametrize("name", ENTRY_POINTS)
@examples(25)
@given(data=st.data())
def test_any_wrong_argument_is_one_albert_error_line(models, name, data):
    """One argument of good ones replaced by a wrong type or a value out of range: an AlbertError (a ValueError)
    with one bounded line starting with the entry point's name, before any text is tokenized."""
    model, method, where, good, wrong = ENTRY_POINTS[name]
    argument = data.draw(st.sampled_from(sorted(wrong)), label="argument")
    value = data.draw(wrong[argument], label=argument)
    call = dict(good, **{argument: value})
    with pytest.raises(AlbertError) as caught:
        getattr(models[model], method)(*[call.pop(k) for k in list(good)], **call, **(
            {"verbose": 0} if method == "predict" else {}))
    message = str(caught.value)
    assert len(message.splitlines()) == 1 and "\r" not in message and len(message) < 1000, message
    assert message.startswith((where + ": ", f"{where.split('.')[0]}: ")), message


def test_the_good_arguments_are_taken(models):
    """The property's starting point is a call that works: each entry point on its good arguments."""
    for name, (model, method, _, good, _) in ENTRY_POINTS.items():
        result = getattr(models[model], method)(*good.values(), **({"verbose": 0} if method == "predict" else {}))
        assert len(result) == 1, name


# ----------------------------------------------------------------------------------------------------- tools
def stand_in(path, inputs: dict, outputs: dict, **others):
    """A SavedModel with the signature of one of the project's exports: serving_default taking `inputs` {name:
    (shape, dtype)} and giving `outputs` {name: a function of the batch size}; `others` more signatures alike."""
    import tensorflow as tf

    def endpoint(ins: dict, outs: dict):
        def serve(features):
            batch = tf.shape(next(iter(features.values())))[0]
            return {name: make(batch) for name, make in outs.items()}

        spec = {name: tf.TensorSpec(shape, dtype, name=name) for name, (shape, dtype) in ins.items()}
        return tf.function(serve, input_signature=[spec])

    root = tf.Module()
    signatures = {}
    for key, (ins, outs) in {"serving_default": (inputs, outputs), **others}.items():
        signatures[key] = endpoint(ins, outs)
        setattr(root, key, signatures[key])
    tf.saved_model.save(root, str(path), signatures=signatures)
    return str(path)


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """Stand-ins of every export this project writes, by the inputs and outputs of their serving_default."""
    import tensorflow as tf

    tmp = tmp_path_factory.mktemp("exports")
    s, i = tf.string, tf.int32
    packed = {k: ([None, None], i) for k in ("input_ids", "input_mask", "segment_ids")}
    hub = {k: ([None, None], i) for k in ("input_word_ids", "input_mask", "input_type_ids")}
    logits = {"logits": lambda b: tf.zeros([b, 2])}
    fill = ({"text": ([None], s)}, {"scores": lambda b: tf.zeros([b, 1, 1]), "errors": lambda b: tf.fill([b], "")})
    kinds = {
        "classifier": ({"text_a": ([None], s)}, {"predictions": lambda b: tf.fill([b], "good"),
                                                 "probabilities": lambda b: tf.fill([b, 2], 0.5)}),
        "squad_text": ({"question": ([None], s), "context": ([None], s)}, {"answer": lambda b: tf.fill([b], "")}),
        "squad_1.1": (packed, {"start_logits": lambda b: tf.zeros([b, 3]), "end_logits": lambda b: tf.zeros([b, 3])}),
        "squad_2.0": (dict(packed, p_mask=([None, None], i)), {"cls_logits": lambda b: tf.zeros([b])}),
        "race": ({k: ([None, 4, None], i) for k in packed}, logits),
        "race_text": ({"article": ([None], s), "question": ([None], s), "options": ([None, None], s)}, logits),
        "ner": ({"text": ([None], s)}, {"tags": lambda b: tf.fill([b, 1], "O")}),
        "encoder": (hub, {"pooled_output": lambda b: tf.zeros([b, 2])}),
        "mlm": (dict(hub, masked_lm_positions=([None, None], i)), {"mlm_logits": lambda b: tf.zeros([b, 1, 2])}),
        "preprocessor": ({"strings": ([None], s)}, {"input_word_ids": lambda b: tf.zeros([b, 2], i)}),
        "keras_export": (packed, logits),
    }
    made = {name: stand_in(tmp / name, *signature) for name, signature in kinds.items()}
    made["fill_mask"] = stand_in(tmp / "fill_mask", *fill, top_k=({"text": ([None], s), "top_k": ([], i)}, fill[1]))
    return made


def run_tool(tool: str, *args: bytes, stdin: bytes = b"") -> tuple:
    """The tool run as a user runs it, its arguments as bytes (as a shell passes them): (status, stdout, stderr)."""
    result = subprocess.run([sys.executable, os.path.join(TOOLS, f"{tool}.py").encode(), *args], input=stdin,
                            capture_output=True, timeout=300)
    return result.returncode, result.stdout, result.stderr


LATIN1 = "café".encode("latin-1")  # b"caf\xe9": not UTF-8


@pytest.mark.parametrize("tool, args, stdin, line", [
    ("answer", ["squad_text", b"Where is the " + LATIN1 + b"?", b"text"], b"",
     "answer.py: error: question: byte 0xe9 at byte 16 of the argument is not UTF-8; pass the text encoded as UTF-8"),
    ("answer", ["squad_text", b"Where?", b"-"], b"The " + LATIN1 + b" opened in 1921.\n",
     "answer.py: error: context from stdin: byte 0xe9 at byte 7 is not UTF-8; save the text as UTF-8 (iconv -t UTF-8)"),
    ("classify", ["classifier", LATIN1], b"",
     "classify.py: error: text_a: byte 0xe9 at byte 3 of the argument is not UTF-8; pass the text encoded as UTF-8"),
    ("classify", ["classifier", b"-"], b"\xff\xfeA\x00",  # UTF-16, as some editors save
     "classify.py: error: text_a from stdin: byte 0xff at byte 0 is not UTF-8; save the text as UTF-8 "
     "(iconv -t UTF-8)"),
    ("fill_mask", ["fill_mask", b"a [MASK]", LATIN1 + b" [MASK]"], b"",
     "fill_mask.py: error: text 2: byte 0xe9 at byte 3 of the argument is not UTF-8; pass the text encoded as UTF-8"),
    ("fill_mask", ["fill_mask", b"-"], b"one [MASK]\n\xed\xa0\x80 [MASK]\n",  # an encoded surrogate is no UTF-8
     "fill_mask.py: error: text 1 from stdin: byte 0xed at byte 11 is not UTF-8; save the text as UTF-8 "
     "(iconv -t UTF-8)"),
])
def test_a_tool_refuses_bytes_that_are_not_utf8_in_one_line(exports, tool, args, stdin, line):
    """Python keeps argv bytes it cannot decode as lone surrogates, which TensorFlow could not encode (a traceback
    before issue 71); read as UTF-8, they are one line, exit 2, before TensorFlow loads."""
    status, out, err = run_tool(tool, exports[args[0]].encode(), *args[1:], stdin=stdin)
    assert (status, out, err.decode()) == (2, b"", line + "\n")


@pytest.mark.slow  # three tool processes; the refusals of other bytes stay fast
def test_utf8_arguments_and_stdin_are_read_as_text(exports):
    """The same tool on UTF-8, as an argument and from stdin (a byte-order mark and the line end dropped): the text
    reaches the model (a stand-in classifier) and it answers."""
    for args, stdin in (("café".encode(), b""), (b"-", "\ufeffcafé\r\n".encode())):
        status, out, err = run_tool("classify", exports["classifier"].encode(), args, stdin=stdin)
        assert (status, out) == (0, b"prediction: good  probabilities: 0.500 0.500\n"), err[-2000:]


def call_tool(tool: str, args: list) -> tuple:
    """The tool's main in this process: (status, stdout, stderr)."""
    sys.path.insert(0, TOOLS)
    try:
        module = __import__(tool)
    finally:
        sys.path.remove(TOOLS)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = module.main(args)
        except SystemExit as stop:
            status = stop.code
    return status, out.getvalue(), err.getvalue()


OTHER_EXPORTS = {  # export -> what classify.py says after "classify.py: error: DIR is "
    "squad_text": "a raw-text SQuAD model (run_squad.py --export_dir's text/), not a classifier; answer with "
                  "tools/answer.py DIR QUESTION CONTEXT",
    "squad_1.1": "a SQuAD 1.1 model over packed ids (run_squad.py --export_dir), not a classifier; answer on raw text "
                 "with tools/answer.py DIR/text QUESTION CONTEXT",
    "squad_2.0": "a SQuAD 2.0 model over packed ids (run_squad.py --export_dir), not a classifier; answer on raw text "
                 "with tools/answer.py DIR/text QUESTION CONTEXT",
    "race": "a RACE model over packed ids (run_race.py --export_dir), not a classifier; no tool here serves it: call "
            "the serving_default(article, question, options) of DIR/text (docs/export.md)",
    "race_text": "a raw-text RACE model (run_race.py --export_dir's text/), not a classifier; no tool here serves it: "
                 "call its serving_default(article, question, options) (docs/export.md)",
    "ner": "a tagger (run_ner.py --export_dir), not a classifier; no tool here serves it: call its "
           "serving_default(text) for one tag per word (docs/export.md)",
    "fill_mask": "a fill-mask model (export_to_tfhub.py's OUT/fill_mask), not a classifier; fill masks with "
                 "tools/fill_mask.py DIR TEXT",
    "encoder": "a TF Hub encoder (export_to_tfhub.py's OUT/encoder), not a classifier; it gives hidden states: "
               "fine-tune a classifier on them with run_classifier.py --export_dir",
    "mlm": "a TF Hub masked-LM encoder (export_to_tfhub.py's OUT/mlm), not a classifier; fill masks on raw text with "
           "tools/fill_mask.py on OUT/fill_mask",
    "preprocessor": "a TF Hub preprocessor (export_to_tfhub.py's OUT/preprocessor), not a classifier; it gives token "
                    "ids: fine-tune a classifier with run_classifier.py --export_dir",
    "keras_export": "not a classifier (its serving_default takes input_ids, input_mask, segment_ids); pass "
                    "run_classifier.py --export_dir",
}


def test_classify_names_another_tasks_export_and_its_tool(exports):
    """classify.py on each other export (a TypeError from the signature call before issue 71): one line saying
    what the export is and which tool serves it; answer.py and fill_mask.py say the same of what is not theirs."""
    for name, said in OTHER_EXPORTS.items():
        line = f"classify.py: error: {exports[name]} is {said.replace('DIR', exports[name])}\n"
        assert call_tool("classify", [exports[name], "A sentence."]) == (2, "", line), name
    assert call_tool("answer", [exports["classifier"], "Where?", "Text."]) == (
        2, "", f"answer.py: error: {exports['classifier']} is a classifier (run_classifier.py --export_dir), not a "
               f"raw-text SQuAD model; classify with tools/classify.py {exports['classifier']} TEXT\n")
    assert call_tool("answer", [exports["squad_2.0"], "Where?", "Text."]) == (
        2, "", f"answer.py: error: {exports['squad_2.0']} is a SQuAD 2.0 model over packed ids (run_squad.py "
               f"--export_dir), not a raw-text SQuAD model; answer on raw text with tools/answer.py "
               f"{exports['squad_2.0']}/text QUESTION CONTEXT\n")
    assert call_tool("fill_mask", [exports["ner"], "a [MASK]"]) == (
        2, "", f"fill_mask.py: error: {exports['ner']} is a tagger (run_ner.py --export_dir), not a fill-mask model; "
               "no tool here serves it: call its serving_default(text) for one tag per word (docs/export.md)\n")
    assert call_tool("classify", [exports["classifier"], "One.", "Two."]) == (
        2, "", f"classify.py: error: {exports['classifier']} classifies single sentences: give one sentence\n")


@examples(30)
@given(argument=st.binary(max_size=12), tool=st.sampled_from(["answer", "classify", "fill_mask"]))
def test_any_argument_bytes_are_read_or_refused_in_one_line(argument, tool):
    """Any bytes as a tool's text (as Python hands them over: decoded with surrogateescape), with no export: exit 2
    and one line, the UTF-8 refusal exactly when the bytes are not UTF-8."""
    argument = argument.replace(b"\x00", b"")  # no argument holds a NUL byte
    text = os.fsdecode(argument)
    args = {"answer": ["/nowhere", text, "Text."], "classify": ["/nowhere", text],
            "fill_mask": ["/nowhere", "a [MASK]", text]}[tool]
    if text == "-":
        return  # stdin: the cases above
    status, out, err = call_tool(tool, args)
    assert status == 2 and out == "" and err.count("\n") == 1 and err.startswith(f"{tool}.py: error: "), err
    if text.startswith("-"):
        return  # taken for a flag: argparse's line
    try:
        argument.decode("utf-8")
    except UnicodeDecodeError:
        assert err.endswith(" of the argument is not UTF-8; pass the text encoded as UTF-8\n"), err
    else:  # read, then the missing export
        assert "not a SavedModel directory" in err, err
