"""run_race.py end to end on a synthetic, learnable 4-choice task in the all.txt layout."""

import functools
import json
import random
import zipfile

import pytest

from tests.helpers import one_line_error, resized_config, run_command, tree_digest
from tests.task_data_helpers import make_race, word_model_flags


run = functools.partial(run_command, "run_race.py", timeout=300)


def common(tmp_path):
    make_race(tmp_path, random.Random(0))
    return [f"--data_dir={tmp_path}", *word_model_flags(tmp_path, "_", 24), "--max_seq_length=24",
            "--max_qa_length=8"]


@pytest.mark.slow
def test_learns_a_four_choice_task_and_writes_predictions(tmp_path):
    out = tmp_path / "out"
    common_args = common(tmp_path)
    result = run(*common_args, f"--output_dir={out}", "--do_train", "--do_eval", "--do_predict",
                 "--train_batch_size=16", "--train_step=200", "--warmup_step=20", "--learning_rate=1e-3",
                 "--save_checkpoints_steps=100", "--iterations_per_loop=100", "--eval_batch_size=8",
                 "--random_seed=1")
    assert result.returncode == 0, result.stderr[-3000:]
    lines = (out / "eval_results.txt").read_text().splitlines()
    last = dict(line.split(" = ") for line in lines[-4:])
    assert set(last) == {"eval_accuracy", "global_step", "high_accuracy", "middle_accuracy"}
    assert last["global_step"] == "200"
    assert float(last["eval_accuracy"]) >= 0.9
    overall = float(last["eval_accuracy"])
    assert abs(overall - (float(last["high_accuracy"]) + float(last["middle_accuracy"])) / 2) < 1e-9  # equal sizes
    predictions = json.loads((out / "predictions.json").read_text())
    truth = {}
    for level in ("middle", "high"):
        for line in (tmp_path / "RACE" / "test" / level / "all.txt").read_text().splitlines():
            article = json.loads(line)
            truth.update({f"{article['id']}-{i}": a for i, a in enumerate(article["answers"])})
    assert sorted(predictions) == sorted(truth)
    assert len(truth) == 24
    assert sum(predictions[k] == truth[k] for k in truth) / len(truth) >= 0.9
    assert (out / "predict_results.txt").read_text().startswith("eval_accuracy = ")
    # The cached features follow the flags: --high_only rebuilds the predict record (12 questions, not 24).
    result = run(*common_args, f"--output_dir={out}", "--nodo_train", "--nodo_eval", "--do_predict", "--high_only",
                 f"--export_dir={tmp_path / 'serving'}")
    assert result.returncode == 0, result.stderr[-3000:]
    high = json.loads((out / "predictions.json").read_text())
    assert sorted(high) == sorted(k for k in truth if k.startswith("high"))
    assert len(high) == 12
    assert json.loads((out / "predict.tf_record.json").read_text())["examples"] == 12
    assert sum(high[k] == truth[k] for k in high) / len(high) >= 0.9
    # The export (--export_dir, new here): the SavedModel and its LiteRT model.tflite give the predictions' letters.
    import numpy as np
    import tensorflow as tf
    from ai_edge_litert.interpreter import Interpreter

    from albert.data.readers import race_dataset

    batch = next(iter(race_dataset([str(out / "predict.tf_record")], 24, 12, False)))
    features = {k: batch[k].numpy().astype(np.int32) for k in ("input_ids", "input_mask", "segment_ids")}
    served = tf.saved_model.load(str(tmp_path / "serving")).signatures["serving_default"](
        **{k: tf.constant(v) for k, v in features.items()})["logits"].numpy()
    lite = Interpreter(model_path=str(tmp_path / "serving" / "model.tflite")).get_signature_runner("serve")
    lite_logits = lite(**features)["logits"]
    assert lite_logits.shape == (12, 4)
    assert np.abs(lite_logits - served).max() < 1e-5
    with zipfile.ZipFile(tmp_path / "serving" / "model.tflite") as archive:  # its TFLite metadata's tokenizer:
        assert archive.namelist() == ["vocab.txt"]  # the run's WordPiece vocabulary (--vocab_file)
    order = [json.loads(line)["id"] for line in (tmp_path / "RACE" / "test" / "high" / "all.txt").read_text()
             .splitlines()]
    letters = ["ABCD"[i] for i in lite_logits.argmax(-1)]
    assert letters == [high[f"{article}-{q}"] for article in order for q in range(2)]


def test_bad_flags(tmp_path):
    args = common(tmp_path)
    assert one_line_error(run(*args, f"--output_dir={tmp_path / 'o'}", "--max_qa_length=30")) == (
        "run_race.py: error: --max_seq_length 24 leaves no room for the article after --max_qa_length 30 and 3 "
        "special tokens")
    assert "RACE/train/middle: not found" in one_line_error(run(*args, f"--output_dir={tmp_path / 'o'}",
                                                                f"--data_dir={tmp_path / 'none'}"))


@pytest.mark.parametrize("case", ["three options", "answer E", "malformed", "empty"])
def test_bad_data_is_one_line_exit_2(tmp_path, case):
    args = common(tmp_path)
    path = tmp_path / "RACE" / "train" / "middle" / "all.txt"
    first = json.loads(path.read_text().splitlines()[0])
    if case == "three options":
        first["options"][1] = first["options"][1][:3]
        message = f"{path}:1: question 'middle0.txt-1' has 3 options; RACE needs 4"
    elif case == "answer E":
        first["answers"][0] = "E"
        message = f"{path}:1: question 'middle0.txt-0' has answer 'E'; use A, B, C or D"
    if case in ("three options", "answer E"):
        path.write_text(json.dumps(first) + "\n")
    elif case == "malformed":
        path.write_text(json.dumps(first) + "\n" + json.dumps(first)[:-3] + "\n")
        message = f"{path}:2: not JSON ("
    else:
        for level in ("middle", "high"):
            (tmp_path / "RACE" / "train" / level / "all.txt").write_text("")
        message = f"{tmp_path}/RACE/train: no questions in the train split"
    result = run(*args, f"--output_dir={tmp_path / 'o'}", "--do_train", "--nodo_eval", "--train_step=1")
    assert result.returncode == 2, result.stderr[-2000:]
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"run_race.py: error: {message}"), last
    assert not (tmp_path / "o" / "train.tf_record").exists()


@pytest.mark.slow
def test_the_feature_cache_follows_the_data_and_the_flags(tmp_path):
    """A cached record is reused only for the same examples and flags: a changed answer or another --max_seq_length
    (which crashed once: the old record's rows have the old length) rebuilds it."""
    args = common(tmp_path)
    out = tmp_path / "out"
    result = run(*args, f"--output_dir={out}", "--do_train", "--do_eval", "--train_step=2",
                 "--save_checkpoints_steps=2", "--train_batch_size=8")
    assert result.returncode == 0, result.stderr[-2000:]
    record, key = out / "eval.tf_record", out / "eval.tf_record.json"
    first = json.loads(key.read_text())
    assert first["max_seq_length"] == 24
    assert first["examples"] == 48
    stamp = record.stat().st_mtime_ns
    evaluate = ["--nodo_train", "--do_eval"]
    assert run(*args, f"--output_dir={out}", *evaluate).returncode == 0
    assert record.stat().st_mtime_ns == stamp  # same data, same flags: reused
    path = tmp_path / "RACE" / "dev" / "middle" / "all.txt"
    article = json.loads(path.read_text().splitlines()[0])
    article["answers"][0] = "ABCD"[("ABCD".index(article["answers"][0]) + 1) % 4]
    path.write_text("\n".join([json.dumps(article)] + path.read_text().splitlines()[1:]) + "\n")
    shorter = [a for a in args if not a.startswith("--max_seq_length")] + ["--max_seq_length=20"]
    result = run(*shorter, f"--output_dir={out}", *evaluate)
    assert result.returncode == 0, result.stderr[-2000:]
    second = json.loads(key.read_text())
    assert second["max_seq_length"] == 20
    assert second["examples_sha256"] != first["examples_sha256"]
    assert second["record_bytes"] < first["record_bytes"]  # rows of 4 x 20 ids, not 4 x 24


@pytest.mark.slow
def test_a_refused_rerun_leaves_the_run_directory_byte_identical(tmp_path):
    """A run of 4 steps, then a rerun on its directory with a config of another hidden_size: exit 2, one line (the
    checkpoints are another model's), every file of the directory byte-identical (albert_config.json included)."""
    args = common(tmp_path)
    out = tmp_path / "four"
    train = [f"--output_dir={out}", "--do_train", "--train_batch_size=8", "--save_checkpoints_steps=2"]
    first = run(*args, *train, "--train_step=4")
    assert first.returncode == 0, first.stderr[-2000:]
    before = tree_digest(out)
    assert {"albert_config.json", "model.ckpt-4.index", "train.tf_record"} <= set(before)
    wider = resized_config(tmp_path / "albert_config.json", tmp_path, hidden_size=48)
    refused = run(*args, f"--albert_config_file={wider}", *train, "--train_step=8")
    assert refused.returncode == 2, refused.stderr[-2000:]
    line, = refused.stderr.splitlines()
    assert line.startswith(f"run_race.py: error: {out}/model.ckpt-4: written for another model ("), line
    assert tree_digest(out) == before
