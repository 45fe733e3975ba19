"""run_race.py's serving model on raw text (albert.tasks.race.serving): its in-graph packing (albert.tasks.race.choosing) equals
albert.tasks.race.examples.convert_example's ids; after a short run, the SavedModel in its export's `text/`, loaded in a process
that imports only tensorflow and tensorflow_text, chooses as run_race.py --do_predict did, with the Keras model's
probabilities on the run's own feature record (1e-5) and AlbertMultipleChoice.choose's on the same strings; bad requests
are one-line errors and the process serves on."""

import json
import random

import numpy as np
import pytest

from tests.export_helpers import FRAGMENTS, SPM, TINY, WORDS, fresh, random_strings, run_script

SEQ, QA = 32, 10
BLANKS = ["", "", " _", " _ and _", "\uff3f", "_"]  # none, a blank, two blanks, a full-width blank (NFKD `_`)


def texts(rng, count):
    return " ".join(rng.choice(WORDS + FRAGMENTS) for _ in range(count))


def write_race(root, rng, articles):
    """RACE/<split>/<level>/all.txt of `articles` articles each: short and long articles (past SEQ pieces), questions
    with and without blanks, cased and accented text; the answer is the option that starts with `friend`."""
    for split in ("train", "test"):
        for level in ("middle", "high"):
            directory = root / "RACE" / split / level
            directory.mkdir(parents=True)
            lines = []
            for a in range(articles):
                questions, options, answers = [], [], []
                for q in range(3):
                    right = rng.randrange(4)
                    options.append([("friend " if i == right else "") + texts(rng, rng.randrange(1, 4))
                                    for i in range(4)])
                    questions.append(texts(rng, rng.randrange(0, 5)) + BLANKS[(a + q) % len(BLANKS)]
                                     + " " + texts(rng, rng.randrange(0, 3)))
                    answers.append("ABCD"[right])
                lines.append(json.dumps({"id": f"{level}{a}.txt", "article": texts(rng, rng.choice([6, 12, 40, 80])),
                                         "questions": questions, "options": options, "answers": answers}))
            (directory / "all.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_packing_in_the_graph_equals_convert_example():
    import tensorflow as tf

    from albert.tasks.race.choosing import race_features
    from albert.tasks.race.examples import RaceExample, convert_example
    from albert.text.graph_tokenizer import InGraphTokenizer
    from albert.text.tokenization import FullTokenizer

    rng = random.Random(5)
    strings = [s for s in random_strings(rng, 150) if s.strip()]
    rows = 48
    articles = [" ".join(rng.choice(strings) for _ in range(rng.randrange(1, 12))) for _ in range(rows)]
    questions = [rng.choice(["", *strings]) + BLANKS[i % len(BLANKS)] + rng.choice(["", *strings])
                 for i in range(rows)]
    options = [[rng.choice(strings) for _ in range(4)] for _ in range(rows)]
    options[0] = ["a  b", "\u00e9t\u00e9", "12,345", "_"]  # spaces collapsed, accents, the digit-comma rule, a `_`
    for lower in (True, False):
        python = FullTokenizer(None, lower, SPM)
        with open(SPM, "rb") as f:
            graph = InGraphTokenizer(f.read(), lower)
        served = race_features(graph, tf.constant(articles), tf.constant(questions), tf.constant(options), SEQ, QA)
        cut = blanks = 0
        for i in range(rows):
            expected = convert_example(RaceExample("x", "high", articles[i], questions[i], tuple(options[i]), 0),
                                       python, SEQ, QA)
            for key in ("input_ids", "input_mask", "segment_ids"):
                np.testing.assert_array_equal(served[key][i].numpy(), np.array(expected[key]), err_msg=f"{i} {key}")
            cut += len(python.tokenize(articles[i])) > SEQ
            blanks += "_" in questions[i] or "\uff3f" in questions[i]
        assert cut > 10 and blanks > 20  # long articles and blanks were packed


@pytest.fixture(scope="module")
def race_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("race")
    write_race(tmp, random.Random(2), 6)
    config = tmp / "albert_config.json"
    config.write_text(json.dumps(TINY))
    out, export = tmp / "out", tmp / "serving"
    result = run_script("run_race.py", f"--data_dir={tmp}", f"--output_dir={out}", f"--albert_config_file={config}",
                        f"--spm_model_file={SPM}", f"--max_seq_length={SEQ}", f"--max_qa_length={QA}", "--do_train",
                        "--nodo_eval", "--do_predict", "--train_batch_size=8", "--train_step=30", "--warmup_step=3",
                        "--learning_rate=2e-3", "--save_checkpoints_steps=30", "--predict_batch_size=5",
                        f"--export_dir={export}")
    assert result.returncode == 0, result.stderr[-3000:]
    return tmp, out, export, result.stdout


@pytest.mark.slow
def test_raw_text_serving_chooses_as_run_race_did(race_run, tmp_path):
    import tensorflow as tf

    import albert
    from albert.data.readers import race_dataset
    from albert.tasks.race.examples import read_examples
    from albert.text.tokenization import FullTokenizer
    from albert.weights.run_checkpoints import prediction_checkpoint

    tmp, out, export, stdout = race_run
    assert f"exported the raw-text serving model to {export}/text (inputs: article, question, options" in stdout
    assert (export / "saved_model.pb").exists() and (export / "model.tflite").exists()  # the packed one, kept
    examples = read_examples(str(tmp), "test")
    tokenizer = FullTokenizer(None, True, SPM)
    assert sum(len(tokenizer.tokenize(e.context)) > SEQ for e in examples) >= 10
    assert sum("_" in e.question or "\uff3f" in e.question for e in examples) >= 10
    (tmp_path / "request.json").write_text(json.dumps({
        "article": [e.context for e in examples], "question": [e.question for e in examples],
        "options": [list(e.options) for e in examples]}))
    fresh(f"""
        import json, sys
        import tensorflow as tf, tensorflow_text
        serve = tf.saved_model.load("{export}/text").signatures["serving_default"]
        request = json.load(open("request.json"))
        out = serve(**{{k: tf.constant(v) for k, v in request.items()}})
        errors = []
        for bad in ({{"options": [["a", "b", "c", "d"], ["a", "b", "c", ""]]}},
                    {{"article": ["Text.", "  \\t"]}},
                    {{"options": [["a", "b", "c"], ["a", "b", "c"]]}},
                    {{"question": ["one?"]}}):
            two = dict({{"article": ["Text.", "More text."], "question": ["Which?", "Pick _."],
                         "options": [["a", "b", "c", "d"], ["e", "f", "g", "h"]]}}, **bad)
            try:
                serve(**{{k: tf.constant(v) for k, v in two.items()}})
                errors.append(None)
            except tf.errors.InvalidArgumentError as error:
                errors.append([line for line in error.message.splitlines() if "assertion failed" in line])
        again = serve(**{{k: tf.constant(v[:3]) for k, v in request.items()}})  # the process serves on
        json.dump({{"probabilities": out["probabilities"].numpy().tolist(), "choice": out["choice"].numpy().tolist(),
                   "logits": out["logits"].numpy().tolist(), "again": again["choice"].numpy().tolist(),
                   "errors": errors, "albert": [m for m in sys.modules if m.split(".")[0] == "albert"]}},
                  open("served.json", "w"))
    """, tmp_path)
    served = json.loads((tmp_path / "served.json").read_text())
    assert served["albert"] == []
    predictions = json.loads((out / "predictions.json").read_text())
    letters = ["ABCD"[c] for c in served["choice"]]
    assert letters == [predictions[e.example_id] for e in examples]
    assert len(set(letters)) > 1
    assert served["again"] == served["choice"][:3]
    # the probabilities: the Keras model of the run's checkpoint on the run's own features (convert_example's ids)
    model = albert.AlbertMultipleChoice(albert.AlbertConfig.from_json_file(str(out / "albert_config.json")))
    albert.load_weights(model, prediction_checkpoint(str(out), None))  # the one run_race.py predicted with
    batch = next(iter(race_dataset([str(out / "predict.tf_record")], SEQ, len(examples), False)))
    logits = np.asarray(model({k: batch[k] for k in ("input_ids", "input_mask", "segment_ids")}))
    np.testing.assert_allclose(served["logits"], logits, atol=1e-5)
    np.testing.assert_allclose(served["probabilities"], tf.nn.softmax(logits, -1).numpy(), atol=1e-5)
    # and the Python API on the same strings (AlbertMultipleChoice.choose): the same choices and probabilities
    model.preprocessor = albert.AlbertPreprocessor(SPM, seq_length=SEQ)
    chosen = model.choose([e.context for e in examples], [e.question for e in examples],
                          [list(e.options) for e in examples], max_seq_length=SEQ, max_qa_length=QA)
    assert [c["index"] for c in chosen] == served["choice"]
    np.testing.assert_allclose([c["probabilities"] for c in chosen], served["probabilities"], atol=1e-5)
    assert served["errors"] == [
        ["assertion failed: [options: row 1 has an empty option; every question takes as many options as the model "
         "chooses among, none empty]"],
        ["assertion failed: [article: row 1 is empty; send the text the question is about]"],
        ["assertion failed: [options: 3 options per question; this model chooses among 4 (options is [batch, 4])]"],
        ["assertion failed: [question: 1 questions for 2 articles; send one article and one question per row]"]]
