"""albert/tasks/ner/examples.py: run_ner.py's files checked before TensorFlow starts, the tags recorded in the run
directory and read back, and the prediction files in the CoNLL form conlleval reads."""

import json

import pytest

from albert.ground.errors import AlbertError
from albert.tasks.ner.conll import Sentence
from albert.tasks.ner.examples import ner_task, prediction_lines, recorded
from albert.weights.run_record import RunRecord, write_record

TRAIN = "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\nPeter NNP B-NP B-PER\nBlackburn NNP I-NP I-PER\n"


def test_tags_from_train_then_from_the_run_directory(tmp_path):
    (tmp_path / "train.txt").write_text(TRAIN)
    (tmp_path / "dev.txt").write_text("Peter NNP B-NP B-PER\n")
    (tmp_path / "test.txt").write_text("Blackburn\n\nEU\n")
    task = ner_task({"train": str(tmp_path / "train.txt"), "dev": str(tmp_path / "dev.txt"),
                     "test": str(tmp_path / "test.txt")})
    assert task.labels == ("O", "B-ORG", "B-PER", "I-PER") and task.scheme == "IOB2"
    run = tmp_path / "run"
    run.mkdir()
    write_record(str(run), RunRecord("AlbertTokenClassifier", "ner", task.labels, scheme=task.scheme))
    assert recorded(str(run)) == {"labels": ["O", "B-ORG", "B-PER", "I-PER"], "scheme": "IOB2"}
    legacy = tmp_path / "legacy_run"  # a run made before albert_run.json: its labels.json
    legacy.mkdir()
    (legacy / "labels.json").write_text(json.dumps({"labels": ["O", "B-ORG", "B-PER", "I-PER"], "scheme": "IOB2"}))
    assert recorded(str(legacy)) == recorded(str(run))
    again = ner_task({"test": str(tmp_path / "test.txt")}, recorded_labels=recorded(str(run)))
    assert again.labels == task.labels and [s.words for s in again.split("test")] == [("Blackburn",), ("EU",)]
    with pytest.raises(AlbertError) as e:
        ner_task({"test": str(tmp_path / "test.txt")}, "IOBES", recorded_labels=recorded(str(run)))
    assert str(e.value) == "the run's albert_run.json says its tags are IOB2; pass --tag_scheme=IOB2"
    (tmp_path / "dev_loc.txt").write_text("Paris NNP B-NP B-LOC\n")
    with pytest.raises(AlbertError) as e:
        ner_task({"train": str(tmp_path / "train.txt"), "dev": str(tmp_path / "dev_loc.txt")})
    assert str(e.value) == (f"{tmp_path}/dev_loc.txt: the sentence at line 1 has tag 'B-LOC' (word 1), which the "
                            "train file never has (O, B-ORG, B-PER, I-PER)")
    with pytest.raises(AlbertError) as e:
        ner_task({"dev": str(tmp_path / "dev.txt")})
    assert str(e.value).startswith("which tags? pass --train_file, or the --output_dir of the training run")
    with pytest.raises(AlbertError, match="missing.txt: --dev_file not found"):
        ner_task({"train": str(tmp_path / "train.txt"), "dev": str(tmp_path / "missing.txt")})


def test_prediction_lines_keep_documents_and_sentence_breaks():
    sentences = [Sentence(("EU", "rejects"), ("B-ORG", "O"), 3, True), Sentence(("Peter",), ("B-PER",), 6)]
    assert prediction_lines(sentences, [["B-ORG", "O"], ["O"]]) == (
        "-DOCSTART- O O\n\nEU B-ORG B-ORG\nrejects O O\n\nPeter B-PER O\n\n")
    untagged = [Sentence(("EU",), None, 1, True)]
    assert prediction_lines(untagged, [["B-ORG"]]) == "-DOCSTART- O\n\nEU B-ORG\n\n"
