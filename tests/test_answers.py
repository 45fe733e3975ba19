"""Answers on raw strings (albert.tasks.squad.answering, albert.tasks.race.answering): `AlbertSquadV1.answer` / `AlbertSquadV2.answer` equal
run_squad.py's prediction path (its feature file, its batches, its decoding) on the same model and questions, for a
context of many windows; `AlbertMultipleChoice.choose` equals run_race.py's; bad input is one AlbertError line.

Tiny models with their initial weights over the released 30k-clean SentencePiece model: what is compared is the
path from text to answer, which is the same whatever the weights."""

import dataclasses
import inspect
import json
import os
import types

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert.config import AlbertConfig
from albert.data.features import step_boundaries
from albert.tasks.race.rows import default_max_qa_length
from albert.data.readers import prediction_batches, race_decoder, squad_decoder
from albert.tasks.squad.predictions import apply_null_threshold, decode, run_model
from albert.tasks.squad.windows import default_doc_stride, default_max_query_length
from albert.ground.errors import AlbertError
from albert.tasks.race.settings import RaceRun
from albert.tasks.squad.settings import SquadRun
from albert.tasks.race import answering as race_answering
from albert.tasks.squad import answering
from albert.model.preprocessor import AlbertPreprocessor
from albert.tasks.race.model import AlbertMultipleChoice
from albert.tasks.squad.model import AlbertSquadV1, AlbertSquadV2
from albert.tasks.race import examples as race
from albert.tasks.squad import examples as squad
from albert.tasks.squad import windows as squad_windows
from albert.tasks.classification.features import predict
from albert.text.tokenization import FullTokenizer, load_sentencepiece
from tests import squad_helpers
from tests.helpers import shared_directory

SPM = os.path.join(shared_directory(), "albert_30k_clean", "30k-clean.model")
CONFIG = squad_helpers.ANSWERING_CONFIG
LONG = squad_helpers.LONG_CONTEXT
QUESTIONS = [("Where does the Moselle rise?", LONG), ("Which wine is the valley famous for?", LONG),
             ("Where does it meet the Rhine?", "At Koblenz the Moselle meets the Rhine.")]
WINDOWS = dict(max_seq_length=40, doc_stride=12, max_query_length=10)


def tiny(model_class, **kwargs):
    keras.utils.set_random_seed(7)
    model = model_class(AlbertConfig(**CONFIG), **kwargs)
    model.preprocessor = AlbertPreprocessor(SPM, seq_length=40)
    return model


@pytest.fixture(scope="module")
def v1():
    return tiny(AlbertSquadV1)


@pytest.fixture(scope="module")
def v2():
    return tiny(AlbertSquadV2, start_n_top=3, end_n_top=3)


def runner_predictions(model, tmp_path, version_2: bool, batch_size=4):
    """run_squad.py's path: the predict file read, its features written, batched and decoded (albert.tasks.squad.job);
    and a decoder of the same outputs with other n_best_size and max_answer_length."""
    path = tmp_path / "dev.json"
    path.write_text(json.dumps({"version": "v2.0", "data": [{"title": "t", "paragraphs": [
        {"context": c, "qas": [{"id": str(i), "question": q}]} for i, (q, c) in enumerate(QUESTIONS)]}]}))
    examples = squad.read_examples(str(path), False)
    settings = squad_windows.Windows(WINDOWS["max_seq_length"], WINDOWS["doc_stride"], WINDOWS["max_query_length"], True)
    record = str(tmp_path / "predict.tf_record")
    metadata = squad.cached_features(examples, load_sentencepiece(SPM), settings, False, record, record + ".json",
                                     log=lambda _: None)
    batches = prediction_batches([record], squad_decoder(settings.max_seq_length, False), batch_size,
                                 step_boundaries(settings.max_seq_length))
    outputs = run_model(model, batches, version_2)
    again = lambda n_best_size, max_answer_length: decode(examples, metadata, outputs, n_best_size,  # noqa: E731
                                                          max_answer_length, version_2)
    return again(20, 30), metadata, again


def test_the_long_context_takes_several_windows(v1, tmp_path):
    _, metadata, _ = runner_predictions(v1, tmp_path, False)
    windows = [sum(f["example"] == i for f in metadata["features"]) for i in range(3)]
    assert windows[0] == windows[1] >= 6 and windows[2] == 1


def test_v1_answers_are_run_squads_predictions(v1, tmp_path):
    (predictions, nbest, _), _, again = runner_predictions(v1, tmp_path, False)
    answers = v1.answer([q for q, _ in QUESTIONS], [c for _, c in QUESTIONS], return_nbest=True, batch_size=4,
                        **WINDOWS)
    assert [a["answer"] for a in answers] == [predictions[str(i)] for i in range(3)]
    for i, ((_, context), answer) in enumerate(zip(QUESTIONS, answers)):
        assert answer["answer"] and context[answer["start"]:answer["end"]] == answer["answer"]
        best = nbest[str(i)][0]
        assert (answer["probability"], answer["score"]) == (best["probability"],
                                                            best["start_log_prob"] + best["end_log_prob"])
        assert [(e["answer"], e["probability"], e["score"], e["start_log_prob"], e["end_log_prob"])
                for e in answer["nbest"]] == [(e["text"], e["probability"], e["start_log_prob"] + e["end_log_prob"],
                                               e["start_log_prob"], e["end_log_prob"]) for e in nbest[str(i)]]
        assert all(context[e["start"]:e["end"]] == e["answer"] for e in answer["nbest"])
        assert set(answer) == {"answer", "start", "end", "score", "probability", "nbest"}
    # One pair of strings gives one dict; n_best_size and max_answer_length are the runner's.
    single = v1.answer(*QUESTIONS[0], n_best_size=6, max_answer_length=2, **WINDOWS)
    short, short_nbest, _ = again(6, 2)
    assert single["answer"] == short["0"] and 1 <= len(short["0"].split()) <= 2, short
    assert single["probability"] == short_nbest["0"][0]["probability"]
    # Where no span of the n-best is short enough, the runner predicts "" and so does answer: no offsets.
    none, _, _ = again(3, 2)
    assert none["0"] == "" and v1.answer(*QUESTIONS[0], n_best_size=3, max_answer_length=2, **WINDOWS) == \
        {"answer": "", "start": -1, "end": -1, "score": 0.0, "probability": 0.0}


def test_v2_answers_and_no_answers_are_run_squads(v2, tmp_path):
    (predictions, nbest, null_odds), _, _ = runner_predictions(v2, tmp_path, True)
    questions, contexts = [q for q, _ in QUESTIONS], [c for _, c in QUESTIONS]
    threshold = sorted(null_odds.values())[1]  # between the questions' no-answer scores: some of each
    expected = apply_null_threshold(predictions, null_odds, threshold)
    answers = v2.answer(questions, contexts, null_score_diff_threshold=threshold, batch_size=4, **WINDOWS)
    assert [a["answer"] for a in answers] == [expected[str(i)] for i in range(3)]
    assert [a["null_score"] for a in answers] == [null_odds[str(i)] for i in range(3)]
    assert sum(a["has_answer"] for a in answers) == 2
    for i, (context, answer) in enumerate(zip(contexts, answers)):
        if answer["has_answer"]:
            assert context[answer["start"]:answer["end"]] == answer["answer"] == predictions[str(i)]
            best = nbest[str(i)][0]
            assert (answer["probability"], answer["score"]) == (best["probability"],
                                                                best["start_log_prob"] + best["end_log_prob"])
        else:
            assert answer == {"answer": "", "start": -1, "end": -1, "score": 0.0, "probability": 0.0,
                              "has_answer": False, "null_score": null_odds[str(i)]}
    assert all(a["has_answer"] for a in v2.answer(questions, contexts, null_score_diff_threshold=1e9, **WINDOWS))
    assert not any(a["has_answer"] for a in v2.answer(questions, contexts, null_score_diff_threshold=-1e9, **WINDOWS))
    assert v2.answer([], []) == []


RACE_ITEMS = [("Tom went to the market to buy apples, but the stall had only pears and plums left.",
               "What did Tom want to buy?", ["apples", "pears", "plums", "bread"]),
              ("The museum opens at nine and closes at five, except on Mondays.",
               "The museum is closed on _ .", ["Sundays", "Mondays", "Fridays", "holidays"]),
              ("Rain fell all week, so the football match was moved indoors.",
               "Why was the match moved?", ["the rain", "the heat", "the crowd", "the referee"])]


@pytest.fixture(scope="module")
def chooser():
    return tiny(AlbertMultipleChoice)


def test_choose_is_run_races_prediction(chooser, tmp_path):
    examples = [race.RaceExample(str(i), "middle", a, q, tuple(o), 0) for i, (a, q, o) in enumerate(RACE_ITEMS)]
    record = str(tmp_path / "test.tf_record")
    race.write_features(examples, FullTokenizer(None, True, SPM), 48, 16, record)
    logits = predict(chooser, prediction_batches([record], race_decoder(48), 2, step_boundaries(48)))
    chosen = chooser.choose(*map(list, zip(*RACE_ITEMS)), max_seq_length=48, max_qa_length=16, batch_size=2)
    assert [c["index"] for c in chosen] == list(logits.argmax(-1))
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    np.testing.assert_allclose([c["probabilities"] for c in chosen], expected / expected.sum(-1, keepdims=True),
                               rtol=1e-6)
    assert [c["option"] for c in chosen] == [o[c["index"]] for (_, _, o), c in zip(RACE_ITEMS, chosen)]
    # One question alone: another batch shape, so equal up to float rounding (on some CPUs the last bit differs);
    # the choice is the same one unless the model scores two options within that rounding.
    one = chooser.choose(*RACE_ITEMS[1], max_seq_length=48, max_qa_length=16)
    np.testing.assert_allclose(one["probabilities"], chosen[1]["probabilities"], rtol=1e-5)
    best = np.flatnonzero(np.isclose(chosen[1]["probabilities"], max(chosen[1]["probabilities"]), rtol=1e-5))
    assert one["index"] in best and one["option"] == RACE_ITEMS[1][2][one["index"]]
    assert chooser.choose([], [], []) == []


def test_the_defaults_are_the_runners():
    fields = {f.name: f for f in dataclasses.fields(SquadRun)}
    answer = inspect.signature(AlbertSquadV1.answer).parameters
    for name in ("n_best_size", "max_answer_length"):
        assert answer[name].default == fields[name].default, name
    assert answering.SQUAD_MAX_SEQ_LENGTH == fields["max_seq_length"].default
    # the derived lengths have one definition (albert.tasks.squad.windows, albert.tasks.race.rows), which the runner's
    # settings and answer() / choose() both call: the original's numbers
    for length, stride, query in ((16, 5, 8), (127, 42, 63), (128, 42, 64), (384, 128, 64), (512, 170, 64)):
        assert (default_doc_stride(length), default_max_query_length(length)) == (stride, query), length
        assert (fields["doc_stride"].metadata["derived"](types.SimpleNamespace(max_seq_length=length)),
                fields["max_query_length"].metadata["derived"](types.SimpleNamespace(max_seq_length=length))) == \
            (stride, query)
    race_fields = {f.name: f for f in dataclasses.fields(RaceRun)}
    assert race_answering.RACE_MAX_SEQ_LENGTH == race_fields["max_seq_length"].default
    for length, qa in ((16, 8), (255, 127), (256, 128), (512, 128)):
        assert default_max_qa_length(length) == qa == \
            race_fields["max_qa_length"].metadata["derived"](types.SimpleNamespace(max_seq_length=length))


@pytest.mark.parametrize("call, message", [
    (lambda m: m.answer("Where?"), "AlbertSquadV1.answer: 1 question(s) without a context: pass answer(questions, "
                                   "contexts), one context string per question"),
    (lambda m: m.answer(["Where?", "Who?"], ["At Koblenz."]),
     "AlbertSquadV1.answer: 2 questions and 1 contexts; pass one context per question"),
    (lambda m: m.answer(["Where?", "Who?"], ["At Koblenz.", "  "]),
     "AlbertSquadV1.answer: context 1 is empty; pass the text the answer is to be found in"),
    (lambda m: m.answer(3, "At Koblenz."),
     "AlbertSquadV1.answer: questions is 3, not a string or a list of strings"),
    (lambda m: m.answer("Where?", "At Koblenz.", max_seq_length=100),
     "AlbertSquadV1.answer: max_seq_length 100 exceeds the model's max_position_embeddings 64; pass max_seq_length=64 "
     "or less"),
    # issue 71: each argument checked at the entry (albert.ground.arguments), one line, never another exception
    (lambda m: m.answer("Where?", "At Koblenz.", batch_size=0),  # was TensorFlow's InvalidArgumentError
     "AlbertSquadV1.answer: batch_size must be a whole number of at least 1, got 0"),
    (lambda m: m.answer("Where?", "At Koblenz.", doc_stride=0),  # was the default stride, silently
     "AlbertSquadV1.answer: doc_stride must be a whole number of at least 1 (or None: the default), got 0"),
    (lambda m: m.answer("Where?", "At Koblenz.", n_best_size=0),  # was "no answer"
     "AlbertSquadV1.answer: n_best_size must be a whole number of at least 1, got 0"),
    (lambda m: m.answer("Where?", "At Koblenz.", max_answer_length=-1),
     "AlbertSquadV1.answer: max_answer_length must be a whole number of at least 1, got -1"),
    (lambda m: m.answer("Where?", "At Koblenz.", null_score_diff_threshold=float("nan")),  # was accepted
     "AlbertSquadV1.answer: null_score_diff_threshold must be a finite number, got nan"),
    (lambda m: m.answer("Where?", "At Koblenz.", return_nbest="yes"),
     "AlbertSquadV1.answer: return_nbest must be True or False, got 'yes'"),
    (lambda m: m.answer("Where?", "At Koblenz.", max_seq_length=2.5),
     "AlbertSquadV1.answer: max_seq_length must be a whole number of at least 5 (or None: the default), got 2.5"),
    (lambda m: m.answer("Where?", "At Koblenz.", max_seq_length=16, max_query_length=13),
     "AlbertSquadV1.answer: max_query_length 13 leaves no room in max_seq_length 16 for [CLS], two [SEP] and the "
     "context; pass max_query_length=12 or less, or a longer max_seq_length"),
    (lambda m: m.answer(None, None), "AlbertSquadV1.answer: questions is None, not a string or a list of strings"),
    (lambda m: m.answer(["Where?", None], ["At Koblenz.", "Here."]),
     "AlbertSquadV1.answer: questions[1] is None, not a string"),
    (lambda m: m.answer(["Where?"], [b"At Koblenz."]),
     "AlbertSquadV1.answer: contexts[0] is b'At Koblenz.', not a string"),
    (lambda m: m.answer("Where?", ["At Koblenz."]),
     "AlbertSquadV1.answer: contexts is a value of type list, not a string"),
    (lambda m: m.answer(["Where?"], "At Koblenz."),
     "AlbertSquadV1.answer: contexts is one string, 'At Koblenz.'; pass a list of strings"),
    (lambda m: m.answer("Where\udce9?", "At Koblenz."),
     "AlbertSquadV1.answer: questions holds a lone surrogate (U+DCE9 at character 5), which is not text; decode its "
     "bytes strictly (errors='strict')"),
])
def test_bad_questions_are_one_line(v1, call, message):
    with pytest.raises(AlbertError) as caught:
        call(v1)
    assert str(caught.value) == message


@pytest.mark.parametrize("args, message", [
    ((["An article.", "Another."], ["Q1?", "Q2?"], [["a", "b", "c", "d"], ["a", "b", "c"]]),
     "AlbertMultipleChoice.choose: question 1 has 3 options and question 0 has 4; every question needs the same "
     "number (4)"),
    (("An article.", "Q?", ["a", "b", "c"]),
     "AlbertMultipleChoice.choose: 3 options per question; this model chooses among num_choices=4"),
    (("", "Q?", ["a", "b", "c", "d"]),
     "AlbertMultipleChoice.choose: article 0 is empty; pass the text the question is about"),
    ((["An article."], ["Q1?", "Q2?"], [["a", "b", "c", "d"], ["a", "b", "c", "d"]]),
     "AlbertMultipleChoice.choose: 1 articles, 2 questions and 2 option lists; pass one article and one options "
     "list per question"),
    (("An article.", "Q?", "abcd"),
     "AlbertMultipleChoice.choose: options is one string, 'abcd'; pass a list of strings"),
    # issue 71: each argument checked at the entry (albert.ground.arguments)
    ((None, None, None), "AlbertMultipleChoice.choose: questions is None, not a string or a list of strings"),
    ((["An article."], ["Q1?"], [["a", "b", None, "d"]]),
     "AlbertMultipleChoice.choose: options[0][2] is None, not a string"),
    ((["An article."], ["Q1?"], ["abcd"]), "AlbertMultipleChoice.choose: options[0] is 'abcd', not a list of strings"),
    ((None, "Q?", ["a", "b", "c", "d"]), "AlbertMultipleChoice.choose: articles is None, not a string"),
    (("An article.", "Q?", ["a", "b", "c", "d"], {"batch_size": 0}),  # was TensorFlow's InvalidArgumentError
     "AlbertMultipleChoice.choose: batch_size must be a whole number of at least 1, got 0"),
    (("An article.", "Q?", ["a", "b", "c", "d"], {"max_qa_length": 0}),  # was the default, silently
     "AlbertMultipleChoice.choose: max_qa_length must be a whole number of at least 1 (or None: the default), got 0"),
    (("An article.", "Q?", ["a", "b", "c", "d"], {"max_seq_length": 4}),  # rows longer than 4: a ValueError of NumPy
     "AlbertMultipleChoice.choose: max_qa_length 2 leaves no room in max_seq_length 4 for [CLS] and two [SEP]; pass "
     "max_qa_length=1 or less, or a longer max_seq_length"),
    # issue 72: the serving model's own refusal (albert.tasks.race.choosing), one line here too
    ((["An article.", "Another."], ["Q1?", "Q2?"], [["a", "b", "c", "d"], ["a", " \u0301", "c", "d"]]),
     "AlbertMultipleChoice.choose: options: row 1 has an empty option; every question takes as many options as the "
     "model chooses among, none empty"),
])
def test_bad_choices_are_one_line(chooser, args, message):
    keywords = args[3] if len(args) == 4 else {}
    with pytest.raises(AlbertError) as caught:
        chooser.choose(*args[:3], **keywords)
    assert str(caught.value) == message


def test_no_questions_are_no_answers(v1, chooser):
    """An empty list is an empty list (its arguments still checked), as fill_mask's and predict's."""
    assert v1.answer([], []) == [] and v1.answer((), ()) == []
    assert chooser.choose([], [], []) == []
    with pytest.raises(AlbertError, match="^AlbertSquadV1.answer: batch_size must be a whole number of at least 1, "
                                          "got 0$"):
        v1.answer([], [], batch_size=0)


def long_dev_file(path, rng, version_2: bool):
    """Questions on contexts of ~40 words (several windows at max_seq_length 20): the answer follows `code`."""
    from tests.squad_helpers import ANSWERS, FILLER

    data, gold = [], {}
    for p in range(12):
        words = [rng.choice(FILLER) for _ in range(40)]
        answer = "" if version_2 and p % 3 == 0 else rng.choice(ANSWERS)
        qa = {"id": f"q{p}", "question": "what is the code?", "answers": [], "is_impossible": not answer}
        if answer:
            at = rng.randrange(len(words) + 1)
            words[at:at] = ["code", answer]
            qa["answers"] = [{"text": answer, "answer_start": len(" ".join(words[:at + 1])) + 1}]
        data.append({"title": f"t{p}", "paragraphs": [{"context": " ".join(words).capitalize() + ".", "qas": [qa]}]})
        gold[f"q{p}"] = answer
    path.write_text(json.dumps({"version": "v2.0" if version_2 else "1.1", "data": data}))
    return data, gold


@pytest.mark.slow
@pytest.mark.parametrize("version_2", [False, True])
def test_a_trained_model_answers_long_contexts_as_run_squad_predicts(tmp_path, version_2):
    """run_squad.py trains a tiny model and predicts long contexts; answer() in this process gives the same texts."""
    import random

    from albert.weights.loader import init_from_checkpoint
    from tests.squad_helpers import make_sentencepiece, make_squad, run_squad, tiny_config

    rng = random.Random(3)
    spm = make_sentencepiece(tmp_path, rng)
    make_squad(tmp_path / "train.json", rng, 300, version_2)
    data, gold = long_dev_file(tmp_path / "dev.json", rng, version_2)
    out = tmp_path / "out"
    windows = ["--max_seq_length=20", "--max_query_length=8", "--doc_stride=6", "--predict_batch_size=16"]
    result = run_squad(f"--albert_config_file={tiny_config(tmp_path)}", f"--spm_model_file={spm}", *windows,
                       f"--output_dir={out}", f"--train_file={tmp_path / 'train.json'}",
                       f"--predict_file={tmp_path / 'dev.json'}", "--do_train", "--do_predict",
                       "--train_batch_size=16", "--num_train_epochs=10", "--learning_rate=1e-3",
                       "--save_checkpoints_steps=100", "--iterations_per_loop=100", "--random_seed=1",
                       *(["--version_2_with_negative", "--null_score_diff_threshold=0.0"] if version_2 else []))
    assert result.returncode == 0, result.stderr[-3000:]
    predictions = json.loads((out / "predictions.json").read_text())
    config = AlbertConfig.from_json_file(str(out / "albert_config.json"))
    model = AlbertSquadV2(config) if version_2 else AlbertSquadV1(config)
    init_from_checkpoint(model, str(out / "model.ckpt-best"))  # the checkpoint run_squad.py predicted with
    model.preprocessor = AlbertPreprocessor(spm, seq_length=20)
    contexts = [article["paragraphs"][0]["context"] for article in data]
    answers = model.answer(["what is the code?"] * len(contexts), contexts, max_seq_length=20, max_query_length=8,
                           doc_stride=6, batch_size=16, null_score_diff_threshold=0.0)
    assert [a["answer"] for a in answers] == [predictions[f"q{p}"] for p in range(len(contexts))]
    assert all(c[a["start"]:a["end"]] == a["answer"] for c, a in zip(contexts, answers) if a["answer"])
    assert sum(a["answer"].lower() == gold[f"q{p}"] for p, a in enumerate(answers)) >= 9
    if version_2:
        assert any(not a["has_answer"] for a in answers) and any(a["has_answer"] for a in answers)
