"""A run directory is a complete model: its albert_run.json (albert.weights.run_record) says its task, its label
or tag names and its preprocessing, so `from_pretrained(RUN)` gives back the task model as trained, and every runner
evaluates, predicts or exports RUN with no model flags; a run of another task is refused in one line naming it."""

import json
import os
import shutil

import numpy as np
import pytest

from albert.ground.errors import AlbertError
from albert.weights.run_record import RECORD, RunRecord, read_record, write_record
from tests.export_helpers import SPM, TINY
from tests.helpers import run_command, WEIGHT_FIXTURES

LABELS = ("negative", "neutral", "positive")
TAGS = ("O", "B-PER", "I-PER", "B-LOC")


def make_run(directory, model, record: RunRecord | None):
    """What a fine-tuning run leaves in its directory: model.ckpt-best (original names), albert_config.json, the
    SentencePiece model, and its record."""
    from albert.weights.tf_checkpoints import save_original_checkpoint

    os.makedirs(directory, exist_ok=True)
    model.config.to_json_file(os.path.join(directory, "albert_config.json"))
    shutil.copyfile(SPM, os.path.join(directory, os.path.basename(SPM)))
    save_original_checkpoint(model, os.path.join(directory, "model.ckpt-best"), global_step=7)
    if record is not None:
        write_record(str(directory), record)
    return str(directory)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from albert import AlbertClassifier, AlbertConfig, AlbertTokenClassifier

    root = tmp_path_factory.mktemp("runs")
    config = AlbertConfig(**TINY)
    classifier = AlbertClassifier(config, num_labels=3)
    tagger = AlbertTokenClassifier(config, num_labels=4)
    preprocessing = {"do_lower_case": True, "max_seq_length": 24, "spm_model_file": os.path.basename(SPM),
                     "vocab_file": None}
    found = {
        "classifier": make_run(root / "classifier", classifier, RunRecord("AlbertClassifier", "own", LABELS,
                                                                          preprocessing=preprocessing)),
        "tagger": make_run(root / "tagger", tagger, RunRecord("AlbertTokenClassifier", "ner", TAGS, scheme="IOB2",
                                                              preprocessing=dict(preprocessing, doc_stride=5))),
        "legacy": make_run(root / "legacy", classifier, None),
    }
    with open(os.path.join(found["legacy"], "labels.json"), "w") as f:  # a run made before albert_run.json
        json.dump({"labels": list(LABELS), "regression": False, "pair": False}, f)
    return found


def test_a_classifier_run_comes_back_with_its_labels_and_preprocessing(runs):
    from albert import AlbertClassifier

    model = AlbertClassifier.from_pretrained(runs["classifier"])  # no num_labels: the run's
    assert (model.num_labels, model.labels, model.preprocessor.seq_length) == (3, LABELS, 24)
    assert not model.load_report.missing
    results = model.classify(["a fine film", "dull"])
    logits = np.asarray(model.predict(["a fine film", "dull"], verbose=0), dtype=np.float64)
    exp = np.exp(logits - logits.max(-1, keepdims=True))
    expected = exp / exp.sum(-1, keepdims=True)
    for result, row in zip(results, expected):
        assert result["label"] == LABELS[int(row.argmax())]
        assert list(result["probabilities"]) == list(LABELS)
        np.testing.assert_allclose(list(result["probabilities"].values()), row, rtol=1e-6)
        assert result["score"] == max(result["probabilities"].values())
    one = model.classify("a fine film")  # one string, one dict (another batch shape: equal up to rounding)
    assert one["label"] == results[0]["label"]
    np.testing.assert_allclose(list(one["probabilities"].values()), list(results[0]["probabilities"].values()),
                               rtol=1e-5)
    assert model.classify([]) == []
    with pytest.raises(AlbertError, match=r"^AlbertClassifier.classify: 2 texts and 1 text_pairs; pass one second "
                                          r"text per text$"):
        model.classify(["a", "b"], ["c"])
    legacy = AlbertClassifier.from_pretrained(runs["legacy"])  # its labels.json
    assert (legacy.num_labels, legacy.labels) == (3, LABELS)


def test_a_token_classifier_run_names_its_tags(runs):
    from albert import AlbertTokenClassifier

    model = AlbertTokenClassifier.from_pretrained(runs["tagger"])
    assert (model.num_labels, model.labels, model.doc_stride, model.preprocessor.seq_length) == (4, TAGS, 5, 24)
    tags = model.predict([["Peter", "lives", "in", "Paris"], ["EU"]], verbose=0)
    assert [len(t) for t in tags] == [4, 1] and all(tag in TAGS for sentence in tags for tag in sentence)


def test_the_weights_fix_num_labels_where_there_is_no_run_record():
    from albert import AlbertClassifier

    directory = os.path.join(WEIGHT_FIXTURES, "hf_classifier")
    with open(os.path.join(directory, "config.json")) as f:
        expected = len(json.load(f).get("id2label") or {0: 0, 1: 1})
    model = AlbertClassifier.from_pretrained(directory)
    assert model.num_labels == expected and model.labels is None
    assert model.classify("a text")["label"] in {str(i) for i in range(expected)}


def test_another_task_class_starts_its_head_fresh_from_a_run(runs):
    from albert import AlbertSquadV1

    model = AlbertSquadV1.from_pretrained(runs["classifier"])  # the run's encoder, a fresh SQuAD head
    assert model.load_report.missing and all("squad" in name or "cls" in name for name in model.load_report.missing)


def test_another_tasks_run_without_num_labels_is_one_line(runs):
    from albert import AlbertClassifier

    with pytest.raises(AlbertError) as e:
        AlbertClassifier.from_pretrained(runs["tagger"])
    assert str(e.value) == (f"AlbertClassifier.from_pretrained: {runs['tagger']} is a run_ner.py run (token "
                            "classification (NER), task ner); pass num_labels= to start a fresh head on its encoder")
    assert AlbertClassifier.from_pretrained(runs["tagger"], num_labels=2).labels is None


def test_a_conversion_keeps_the_runs_labels(runs, tmp_path):
    from albert import AlbertClassifier
    from albert.tasks.conversion import convert

    convert(runs["classifier"], str(tmp_path / "hf"), "huggingface")
    with open(tmp_path / "hf" / "config.json") as f:
        config = json.load(f)
    assert config["id2label"] == {"0": "negative", "1": "neutral", "2": "positive"}
    assert config["label2id"] == {"negative": 0, "neutral": 1, "positive": 2}
    assert AlbertClassifier.from_pretrained(str(tmp_path / "hf")).labels == LABELS  # and back, from id2label
    convert(runs["classifier"], str(tmp_path / "release"), "release")
    record = read_record(str(tmp_path / "release"))
    assert (record.labels, record.preprocessing["spm_model_file"]) == (LABELS, "30k-clean.model")


def test_a_record_not_written_by_a_run_is_one_line(tmp_path):
    (tmp_path / RECORD).write_text('{"model_class": "AlbertClassifier", "task": "own", "labels": [1, 2]}')
    with pytest.raises(AlbertError) as e:
        read_record(str(tmp_path))
    assert str(e.value) == (f"{tmp_path}/{RECORD}: not the record a training run writes in its directory (its task, "
                            "labels and preprocessing); remove it, or use another --output_dir")


run = run_command


@pytest.mark.slow  # an export and a tool process; the other run-directory checks stay fast
def test_exporting_a_run_needs_only_its_directory(runs, tmp_path):
    export = tmp_path / "export"
    result = run("run_classifier.py", f"--output_dir={runs['classifier']}", f"--export_dir={export}")
    assert result.returncode == 0, result.stderr[-2000:]
    assert {"saved_model.pb", "model.tflite", ".albert-output.json"} <= set(os.listdir(export))
    served = run("tools/classify.py", str(export), "a fine film")
    assert served.returncode == 0, served.stderr[-2000:]
    words = served.stdout.split()
    assert words[0] == "prediction:" and words[1] in LABELS and words[2] == "probabilities:"
    # each probability named by its label, in the run's (logits) order, summing to one
    assert [w.split("=")[0] for w in words[3:]] == list(LABELS)
    assert abs(sum(float(w.split("=")[1]) for w in words[3:]) - 1) < 0.003
    with open(export / "assets" / "labels.json", encoding="utf-8") as f:
        assert json.load(f) == list(LABELS)


def test_predicting_with_a_run_needs_no_model_flags(runs, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(runs["classifier"], run_dir)
    (tmp_path / "test.csv").write_text("text\na fine film\ndull\n")
    result = run("run_classifier.py", f"--output_dir={run_dir}", "--do_predict", f"--test_file={tmp_path}/test.csv",
                 "--text_a_column=text")
    assert result.returncode == 0, result.stderr[-2000:]
    rows = (run_dir / "test_results.tsv").read_text().splitlines()
    assert rows[0] == "index\tprediction\tnegative\tneutral\tpositive" and len(rows) == 3  # the run's label names


@pytest.mark.parametrize("script, head", [("run_squad.py", "SQuAD answer span"),
                                          ("run_race.py", "multiple choice (RACE)"),
                                          ("run_ner.py", "token classification (NER)")])
def test_a_run_of_another_task_is_refused_in_one_line(runs, tmp_path, script, head):
    run_dir = runs["classifier"]
    extra = {"run_squad.py": ["--do_predict", f"--predict_file={tmp_path}/dev.json"],
             "run_race.py": ["--do_train=false", f"--export_dir={tmp_path}/e"],
             "run_ner.py": [f"--export_dir={tmp_path}/e"]}[script]
    before = sorted(os.listdir(run_dir))
    result = run(script, f"--output_dir={run_dir}", *extra)
    assert (result.returncode, result.stderr.splitlines()) == (2, [
        f"{script}: error: {run_dir}: --output_dir is a run_classifier.py run (classification, task own); it holds no "
        f"{head} head for {script} to use: pass the --output_dir of a {script} run, or train one from its encoder "
        f"(--do_train --init_checkpoint={run_dir}, in another --output_dir)"])
    assert sorted(os.listdir(run_dir)) == before and not os.path.exists(tmp_path / "e")
    given = run(script, f"--output_dir={tmp_path}/new", f"--init_checkpoint={run_dir}", *extra)  # as a warm start
    assert given.returncode == 2 and f"--init_checkpoint is a run_classifier.py run" in given.stderr
    assert not os.path.exists(tmp_path / "new")
