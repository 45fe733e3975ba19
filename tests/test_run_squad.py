"""run_squad.py end to end: a tiny model learns a synthetic extractive task (v1 and v2 heads); predicting needs no
--train_file; bad input is one line and exit status 2 with no feature file left behind."""

import json
import random
import zipfile

import pytest

from tests.helpers import resized_config, tree_digest
from tests.squad_helpers import make_sentencepiece, make_squad, run_squad, tiny_config


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("squad")
    rng = random.Random(0)
    spm = make_sentencepiece(directory, rng)
    for name, count, version_2 in (("train", 300, False), ("dev", 40, False), ("train2", 300, True),
                                   ("dev2", 40, True)):
        make_squad(directory / f"{name}.json", rng, count, version_2)
    return directory, [f"--albert_config_file={tiny_config(directory)}", f"--spm_model_file={spm}",
                       "--max_seq_length=20", "--max_query_length=8", "--doc_stride=6", "--predict_batch_size=16"]


def train_args(out, train, dev):
    return [f"--output_dir={out}", f"--train_file={train}", f"--predict_file={dev}", "--do_train", "--do_predict",
            "--train_batch_size=16", "--num_train_epochs=10", "--learning_rate=1e-3", "--save_checkpoints_steps=100",
            "--iterations_per_loop=100", "--random_seed=1"]


def gold(path):
    data = json.loads(path.read_text())["data"]
    return {qa["id"]: (qa["answers"][0]["text"] if qa["answers"] else "")
            for article in data for paragraph in article["paragraphs"] for qa in paragraph["qas"]}


@pytest.mark.slow
def test_v1_learns_the_task_and_predicts_without_a_train_file(workdir):
    directory, common = workdir
    out = directory / "out_v1"
    result = run_squad(*common, *train_args(out, directory / "train.json", directory / "dev.json"))
    assert result.returncode == 0, result.stderr[-3000:]
    # Paragraphs of up to 16 words do not fit one 9-piece window: several spans per question.
    assert "40 questions -> " in result.stdout
    assert "40 questions -> 40 features" not in result.stdout
    blocks = (out / "eval_results.txt").read_text().split("global_step = ")
    assert len(blocks) == 3  # steps 100 and 187
    results = dict(line.split(" = ") for line in (out / "predict_results.txt").read_text().splitlines())
    assert set(results) == {"exact_match", "f1"}
    assert float(results["exact_match"]) >= 90.0
    predictions = json.loads((out / "predictions.json").read_text())
    truth = gold(directory / "dev.json")
    assert sorted(predictions) == sorted(truth)
    assert sum(predictions[k] == truth[k] for k in truth) / len(truth) >= 0.9
    nbest = json.loads((out / "nbest_predictions.json").read_text())
    assert all(nbest[k][0]["text"] == predictions[k] for k in truth)
    assert all(abs(sum(e["probability"] for e in nbest[k]) - 1) < 1e-6 for k in truth)
    assert list(nbest["q0"][0]) == ["text", "probability", "start_log_prob", "end_log_prob"]  # the original's order
    assert (out / "nbest_predictions.json").read_text().startswith('{\n    "')  # indent 4, as the original
    best_step = (out / "best_trial.txt").read_text().split(":")[1]
    assert (out / "model.ckpt-best.index").exists()
    assert best_step in ("100", "187")
    # Predict only (google-research/albert#221): no --train_file; model.ckpt-best is used; cached features reused.
    again = directory / "out_v1_predict"
    result = run_squad(*common, f"--output_dir={again}", f"--predict_file={directory / 'dev.json'}",
                       "--do_predict", f"--init_checkpoint={out / 'model.ckpt-best'}",
                       f"--predict_feature_file={out / 'predict.tf_record'}", f"--export_dir={again / 'serving'}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "SQuAD features:" not in result.stdout
    assert json.loads((again / "predictions.json").read_text()) == predictions
    # The serving export gives the same spans: decode its logits over the cached features.
    import tensorflow as tf

    from albert.data.readers import squad_dataset
    from albert.tasks.squad.examples import read_examples
    from albert.tasks.squad.predictions import decode

    serve = tf.saved_model.load(str(again / "serving")).signatures["serving_default"]
    metadata = json.loads((out / "predict.tf_record.json").read_text())
    outputs = {}
    for batch in squad_dataset([str(out / "predict.tf_record")], 20, 8, False).take(-(-metadata["num_features"] // 8)):
        logits = serve(**{k: batch[k] for k in ("input_ids", "input_mask", "segment_ids")})
        for row, unique_id in enumerate(batch["unique_ids"].numpy().reshape(-1)):
            outputs[int(unique_id)] = {k: v[row].numpy() for k, v in logits.items()}
    served, _, _ = decode(read_examples(str(directory / "dev.json"), False), metadata, outputs, 20, 30, False)
    assert served == predictions
    # ... and so does its LiteRT model.tflite (builtin ops, frozen weights), in the ai-edge-litert interpreter.
    from ai_edge_litert.interpreter import Interpreter

    lite = Interpreter(model_path=str(again / "serving" / "model.tflite")).get_signature_runner("serve")
    lite_outputs = {}
    for batch in squad_dataset([str(out / "predict.tf_record")], 20, 8, False).take(-(-metadata["num_features"] // 8)):
        logits = lite(**{k: batch[k].numpy().astype("int32") for k in ("input_ids", "input_mask", "segment_ids")})
        for row, unique_id in enumerate(batch["unique_ids"].numpy().reshape(-1)):
            lite_outputs[int(unique_id)] = {k: v[row] for k, v in logits.items()}
            for key in ("start_logits", "end_logits"):
                assert abs(lite_outputs[int(unique_id)][key] - outputs[int(unique_id)][key]).max() < 1e-5
    lite_served, _, _ = decode(read_examples(str(directory / "dev.json"), False), metadata, lite_outputs, 20, 30,
                               False)
    assert lite_served == predictions
    f1 = json.loads(result.stdout.split("predict ", 1)[1].splitlines()[0])["f1"]
    assert (again / "tflite_results.txt").read_text() == (
        f"{again / 'serving' / 'model.tflite'} (none, {(again / 'serving' / 'model.tflite').stat().st_size / 2**20:.1f}"
        f" MiB): dev f1 {f1:.4f}, float model {f1:.4f} (+0.0000)\n")


@pytest.mark.slow
def test_v2_learns_answers_and_no_answers(workdir):
    directory, common = workdir
    out = directory / "out_v2"
    result = run_squad(*common, *train_args(out, directory / "train2.json", directory / "dev2.json"),
                       "--version_2_with_negative")
    assert result.returncode == 0, result.stderr[-3000:]
    results = dict(line.split(" = ") for line in (out / "predict_results.txt").read_text().splitlines())
    assert float(results["exact"]) >= 90.0
    assert int(results["total"]) == 40
    assert int(results["NoAns_total"]) == 14
    assert int(results["HasAns_total"]) == 26
    assert float(results["null_score_diff_threshold"]) == float(results["best_f1_thresh"])
    predictions = json.loads((out / "predictions.json").read_text())
    null_odds = json.loads((out / "null_odds.json").read_text())
    truth = gold(directory / "dev2.json")
    assert sorted(predictions) == sorted(truth) == sorted(null_odds)
    assert sum(predictions[k] == truth[k] for k in truth) / len(truth) >= 0.9
    threshold = float(results["null_score_diff_threshold"])
    assert all((predictions[k] == "") == (null_odds[k] > threshold) for k in truth)
    # A test-set run with a fixed threshold: everything above it is "no answer".
    again = directory / "out_v2_fixed"
    result = run_squad(*common, "--version_2_with_negative", f"--output_dir={again}", "--do_predict",
                       f"--predict_file={directory / 'dev2.json'}", f"--init_checkpoint={out / 'model.ckpt-best'}",
                       "--null_score_diff_threshold=-1e9", f"--export_dir={again / 'serving'}",
                       "--tflite_quantization=float16")
    assert result.returncode == 0, result.stderr[-3000:]
    assert set(json.loads((again / "predictions.json").read_text()).values()) == {""}
    # the 2.0 model.tflite (float16) decoded with the same fixed threshold: all "no answer" too, the same F1
    line = (again / "tflite_results.txt").read_text()
    assert line.startswith(f"{again / 'serving' / 'model.tflite'} (float16, ")
    assert line.endswith("(+0.0000)\n")
    with zipfile.ZipFile(again / "serving" / "model.tflite") as archive:  # its TFLite metadata's tokenizer
        assert archive.namelist() == ["sentencepiece.model"]


def bad_train_file(directory, case):
    path = directory / f"bad_{case}.json"
    data = json.loads((directory / "train.json").read_text())
    if case == "malformed":
        path.write_text(json.dumps(data, indent=1)[:200])
        lines = path.read_text().count("\n") + 1
        return path, f"{path}:{lines}: not JSON ("
    if case == "no answer placed":  # every answer a backspace, which SentencePiece deletes: no piece holds one
        ids = []
        for article in data["data"]:
            paragraph = article["paragraphs"][0]
            paragraph["context"] += " \x08"
            for qa in paragraph["qas"]:
                qa["answers"] = [{"text": "\x08", "answer_start": len(paragraph["context"]) - 1}]
                ids.append(qa["id"])
        path.write_text(json.dumps(data))
        random.Random(12345).shuffle(ids)  # the order training reads them in
        return path, (f"{path}: {len(ids)} of {len(ids)} answers could not be placed in the tokens: ids "
                      + ", ".join(f"'{qid}'" for qid in ids[:20]) + f" and {len(ids) - 20} more")
    qa = data["data"][2]["paragraphs"][0]["qas"][0]
    qa["answers"][0]["answer_start"] += 1
    path.write_text(json.dumps(data))
    return path, f"{path}: question 'q2': answer {qa['answers'][0]['text']!r} does not occur at answer_start "


@pytest.mark.parametrize("case", ["malformed", "misplaced answer", "no answer placed"])
def test_bad_training_data(workdir, case):
    directory, common = workdir
    path, message = bad_train_file(directory, case)
    out = directory / f"out_{case.replace(' ', '_')}"
    result = run_squad(*common, f"--output_dir={out}", f"--train_file={path}", "--do_train")
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(f"run_squad.py: error: {message}")
    assert not (out / "train.tf_record").exists()
    assert not (out / "train.tf_record.json").exists()


def test_bad_flags(workdir):
    directory, common = workdir
    out = directory / "out_flags"
    cases = [
        (["--max_query_length=17", "--do_train", f"--train_file={directory / 'train.json'}"],
         "--max_seq_length 20 must exceed --max_query_length 17 + 3 (room for [CLS], two [SEP] and the document)"),
        (["--do_train", f"--train_file={directory / 'none.json'}"], f"{directory / 'none.json'}: --train_file not "
                                                                     "found"),
        (["--do_predict"], "--do_predict needs --predict_file"),
        ([], "nothing to do: pass --do_train, --do_predict and/or --export_dir"),
        (["--do_predict", f"--predict_file={directory / 'dev.json'}", "--spm_model_file="],
         "--spm_model_file is required: SQuAD features align SentencePiece pieces with the text"),
    ]
    for extra, message in cases:
        result = run_squad(*common, f"--output_dir={out}", *extra)
        assert result.returncode == 2, result.stderr[-2000:]
        assert result.stderr.strip().splitlines()[-1] == f"run_squad.py: error: {message}"
    assert not out.exists()


@pytest.mark.slow
def test_a_refused_rerun_leaves_the_run_directory_byte_identical(workdir):
    """A short run, then a rerun on its directory with a config of another hidden_size: exit 2, one line (the
    checkpoints are another model's), every file of the directory byte-identical (albert_config.json included)."""
    directory, common = workdir
    out = directory / "refused"
    train = [f"--output_dir={out}", f"--train_file={directory / 'train.json'}", "--do_train", "--train_batch_size=16",
             "--save_checkpoints_steps=2", "--random_seed=1"]
    first = run_squad(*common, *train, "--num_train_epochs=0.1")
    assert first.returncode == 0, first.stderr[-2000:]
    before = tree_digest(out)
    assert {"albert_config.json", "train.tf_record", "checkpoint"} <= set(before)
    wider = resized_config(directory / "albert_config.json", out.parent, hidden_size=48)
    refused = run_squad(*common, f"--albert_config_file={wider}", *train, "--num_train_epochs=0.2")
    assert refused.returncode == 2, refused.stderr[-2000:]
    line, = refused.stderr.splitlines()
    assert line.startswith(f"run_squad.py: error: {out}/model.ckpt-"), line
    assert ": written for another model (" in line, line
    assert tree_digest(out) == before
