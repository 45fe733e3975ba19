"""run_classifier.py on a user's own files (issue 61): a CSV made from real SST-2 rows (quoted commas, label names)
trained, evaluated at every checkpoint and predicted; the labels recorded in the run directory and read back by an
evaluation-only run; the serving SavedModel and model.onnx naming the labels; a latin-1 file with --encoding."""

import csv
import io
import json
import os

import numpy as np
import onnx
import pytest

from tests.export_helpers import GLUE, SPM, TINY, fresh, run_script

NAMES = {"0": "negative", "1": "positive"}


def sst2_rows(split, count=None):
    with open(os.path.join(GLUE, "SST-2", f"{split}.tsv"), encoding="utf-8") as f:
        rows = [line.split("\t") for line in f.read().splitlines()[1:]]
    # SST-2's tokenized text with its commas put back: CSV must quote them
    return [(sentence.replace(" ,", ","), NAMES[label]) for sentence, label in rows[:count]]


def write_csv(path, header, rows, encoding="utf-8"):
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    path.write_bytes(out.getvalue().encode(encoding))
    return str(path)


@pytest.mark.slow
def test_own_csv_trains_evaluates_predicts_and_exports_with_label_names(tmp_path):
    train_rows, dev_rows = sst2_rows("train", 872), sst2_rows("dev")
    assert sum('"' in line for line in open(write_csv(tmp_path / "train.csv", ["sentence", "label"], train_rows))) > 50
    write_csv(tmp_path / "dev.csv", ["sentence", "label"], dev_rows)
    test_rows = [(sentence,) for sentence, _ in dev_rows[:30]]
    write_csv(tmp_path / "test.csv", ["sentence"], test_rows)  # no label column
    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps(TINY))
    out, export = tmp_path / "out", tmp_path / "serving"
    common = [f"--output_dir={out}", f"--albert_config_file={config}", f"--spm_model_file={SPM}",
              "--text_a_column=sentence", "--max_seq_length=64", "--eval_batch_size=128"]
    result = run_script("run_classifier.py", *common, f"--train_file={tmp_path / 'train.csv'}",
                        f"--dev_file={tmp_path / 'dev.csv'}", f"--test_file={tmp_path / 'test.csv'}", "--do_train",
                        "--do_eval", "--do_predict", "--train_batch_size=32", "--train_step=54", "--warmup_step=5",
                        "--learning_rate=1e-3", "--save_checkpoints_steps=27", f"--export_dir={export}",
                        "--onnx_export=float32")
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads((out / "albert_run.json").read_text()) == {
        "model_class": "AlbertClassifier", "task": "own", "labels": ["negative", "positive"], "regression": False,
        "pair": False, "preprocessing": {"do_lower_case": True, "max_seq_length": 64,
                                         "spm_model_file": os.path.basename(SPM), "vocab_file": None}}
    blocks = (out / "eval_results.txt").read_text().split("global_step = ")
    assert len(blocks) == 3  # one per checkpoint (27, 54)
    last = dict(line.split(" = ") for line in (out / "eval_results.txt").read_text().splitlines()[-10:])
    assert set(last) == {"eval_accuracy", "eval_loss", "global_step", "macro_f1", "precision[negative]",
                         "precision[positive]", "recall[negative]", "recall[positive]", "support[negative]",
                         "support[positive]"}
    assert int(last["support[negative]"]) == sum(label == "negative" for _, label in dev_rows)
    assert int(last["support[positive]"]) == sum(label == "positive" for _, label in dev_rows)
    assert (out / "own_train.tf_record").exists() and (out / "model.ckpt-best.index").exists()
    lines = [line.split("\t") for line in (out / "test_results.tsv").read_text().splitlines()]
    assert lines[0] == ["index", "prediction", "negative", "positive"]
    assert [row[0] for row in lines[1:]] == [str(i) for i in range(30)]
    probabilities = np.array([[float(x) for x in row[2:]] for row in lines[1:]])
    np.testing.assert_allclose(probabilities.sum(-1), 1, atol=1e-6)
    assert [row[1] for row in lines[1:]] == [NAMES[str(i)] for i in probabilities.argmax(-1)]

    # the serving model names the labels, on raw strings, as do_predict did
    (tmp_path / "test.json").write_text(json.dumps([row[0] for row in test_rows]))
    fresh(f"""
        import json, numpy as np, tensorflow as tf, tensorflow_text
        serve = tf.saved_model.load("{export}").signatures["serving_default"]
        out = serve(text_a=tf.constant(json.load(open("test.json"))))
        np.save("probabilities.npy", out["probabilities"].numpy())
        json.dump([p.decode() for p in out["predictions"].numpy()], open("predictions.json", "w"))
    """, tmp_path)
    np.testing.assert_allclose(np.load(tmp_path / "probabilities.npy"), probabilities, atol=2e-6)
    assert json.loads((tmp_path / "predictions.json").read_text()) == [row[1] for row in lines[1:]]
    metadata = {p.key: p.value for p in onnx.load(str(export / "model.onnx")).metadata_props}
    assert json.loads(metadata["labels"]) == ["negative", "positive"] and metadata["task"] == "own"

    # an evaluation-only run reads the labels the training run recorded: no --train_file, no --labels
    before = (out / "eval_results.txt").read_text()
    again = run_script("run_classifier.py", *common, f"--dev_file={tmp_path / 'dev.csv'}", "--do_eval")
    assert again.returncode == 0, again.stderr[-3000:]
    after = (out / "eval_results.txt").read_text()
    assert after.startswith(before) and after[len(before):].count("global_step = ") == 2


@pytest.mark.slow
def test_latin1_csv_is_one_line_without_its_encoding_and_trains_with_it(tmp_path):
    rows = sst2_rows("train", 40) + [("café society, a delight", "positive"), ("naïve and dull", "negative")]
    path = write_csv(tmp_path / "latin1.csv", ["sentence", "label"], rows, encoding="latin-1")
    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps(TINY))
    args = [f"--train_file={path}", "--text_a_column=sentence", f"--output_dir={tmp_path / 'out'}",
            f"--albert_config_file={config}", f"--spm_model_file={SPM}", "--max_seq_length=32", "--do_train",
            "--train_step=2", "--train_batch_size=8"]
    result = run_script("run_classifier.py", *args)
    assert result.returncode == 2
    first = next(i for i, (sentence, _) in enumerate(rows) if "\xe9" in sentence) + 2  # after the header line
    assert result.stderr.strip().splitlines() == [
        f"run_classifier.py: error: {path}:{first}: byte 0xe9 is not UTF-8 text; pass the file's encoding with --encoding "
        "(e.g. --encoding=latin-1)"]
    assert not (tmp_path / "out").exists()
    result = run_script("run_classifier.py", *args, "--encoding=latin-1")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "out" / "model.ckpt-2.index").exists()
