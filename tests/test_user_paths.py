"""The paths users take, end to end at a tiny size: every runner in float32 and bf16 (two in fp16 too), exported,
then served in a process that trained nothing, next to the float32 Keras model of the same weights; the Keras chain
from `from_pretrained` to a served export; and the publishing chain from a fine-tuning run to a Hugging Face
directory.

A row: the runner trains 2 steps (`--mixed_precision` fp32 / bf16, and fp16 for two runners; `--recompute` on
one row per runner), evaluates, exports (`--export_dir`; pretraining: `export_to_tfhub.py` of its best checkpoint),
and `tests/serving_check.py` serves every SavedModel and `model.tflite` in a process of its own (one for the file,
which trains nothing, under float32): outputs within 1e-5 of the float32 model, top-k indices equal, and no bf16 /
f16 value anywhere in the exported graphs (exports compute in float32, whatever the training precision).
"""

import functools
import json
import os
import random
import select
import subprocess
import sys

import numpy as np
import pytest

from tests import squad_helpers
from tests.helpers import FIXTURES, ROOT, run_command
from tests.pretraining_helpers import PRED, SEQ, write_original_records
from tests.task_data_helpers import WORDS, make_race, make_rte_like

TOLERANCE = 1e-5
SEQ_LENGTH = {"pretraining": SEQ, "classifier": 24, "squad_v1": 48, "squad_v2": 48, "race": 24}
# Every runner in fp32 and in bf16 (with --recompute); fp16 (loss scaling, another low-precision dtype through the
# same float32 copy at export) on the runners with the most outputs to compare, a classifier and SQuAD 2.0.
# Every runner in float32; bf16 with recompute and fp16 through the runners whose heads differ (the precision paths
# are the shared training loop's: SQuAD 1.1 and RACE add no precision-specific code, and fp16 once is its loss
# scaling, kept within the suite's 30 minutes).
ROWS = [(runner, precision, recompute)
        for runner in ("pretraining", "classifier", "squad_v1", "squad_v2", "race")
        for precision, recompute in (("fp32", False), ("bf16", True), ("fp16", False))
        if precision == "fp32" or (precision == "bf16" and runner in ("pretraining", "classifier", "squad_v2"))
        or runner == "squad_v2"]


run = functools.partial(run_command, timeout=300, check=True)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One SentencePiece model for every task's words, a tiny config, and each task's data."""
    from albert.text.tokenization import load_sentencepiece, train_sentencepiece

    root = tmp_path_factory.mktemp("paths")
    rng = random.Random(0)
    words = WORDS + squad_helpers.FILLER + squad_helpers.ANSWERS + ["alpha", "beta", "up", "_", "code", "what",
                                                                   "is", "the"]
    (root / "sp.txt").write_text("\n".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(2000)))
    spm = train_sentencepiece([str(root / "sp.txt")], str(root / "sp"), vocab_size=64)
    pieces = load_sentencepiece(spm).get_piece_size()
    config = root / "albert_config.json"
    config.write_text(json.dumps({"vocab_size": pieces, "embedding_size": 8, "hidden_size": 16,
                                  "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 32,
                                  "max_position_embeddings": 48}))
    make_rte_like(root, random.Random(1))
    for version_2 in (False, True):
        for split, count in (("train", 24), ("dev", 8)):
            squad_helpers.make_squad(root / f"squad{int(version_2)}_{split}.json", random.Random(count), count,
                                     version_2)
    make_race(root, random.Random(2))
    write_original_records(str(root / "pretraining.tfrecord"), 32)
    return {"root": root, "spm": spm, "config": str(config)}


_RUNS = {}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """tests/serving_check.py --serve: TensorFlow started once for the file's exports; it ends when its stdin closes."""
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    log = tmp_path_factory.mktemp("serving") / "stderr.txt"
    with open(log, "w") as stderr:
        process = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "serving_check.py"), "--serve"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)
    process.log = log
    yield process
    process.stdin.close()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()


def run_row(world, runner, precision, recompute) -> dict:
    """Train, evaluate and export once per row (the publishing chain reuses a row's run)."""
    key = (runner, precision, recompute)
    if key in _RUNS:
        return _RUNS[key]
    root = world["root"]
    out = root / f"{runner}-{precision}-{int(recompute)}"
    export = out.with_name(out.name + "-export")
    common = [f"--output_dir={out}", f"--albert_config_file={world['config']}", f"--mixed_precision={precision}",
              f"--max_seq_length={SEQ_LENGTH[runner]}", "--iterations_per_loop=1", "--save_checkpoints_steps=2",
              "--learning_rate=1e-3"] + (["--recompute"] if recompute else [])
    spec = {"kind": runner, "run_dir": str(out), "export_dir": str(export), "seq_length": SEQ_LENGTH[runner],
            "checkpoint": str(out / "model.ckpt-best")}
    if runner == "pretraining":
        records = str(root / "pretraining.tfrecord")
        run("run_pretraining.py", *common, f"--input_file={records}", f"--max_predictions_per_seq={PRED}",
            "--train_batch_size=8", "--num_train_steps=2", "--num_warmup_steps=0", "--do_eval",
            "--eval_batch_size=8", "--max_eval_steps=1")
        run("export_to_tfhub.py", f"--albert_directory={out}", f"--spm_model_file={world['spm']}",
            f"--export_path={export}", f"--seq_length={SEQ}")
        spec.update(records=records, predictions=PRED)
    elif runner == "classifier":
        run("run_classifier.py", *common, "--task_name=RTE", f"--data_dir={root}", f"--spm_model_file={world['spm']}",
            "--do_train", "--do_eval", "--train_batch_size=8", "--train_step=2", "--eval_batch_size=64",
            f"--export_dir={export}")
        spec.update(dev_file=str(root / "RTE" / "dev.tsv"), spm_model_file=world["spm"])
    elif runner.startswith("squad"):
        version = runner[-1] == "2"
        run("run_squad.py", *common, f"--spm_model_file={world['spm']}", "--do_train", "--do_predict",
            f"--train_file={root / f'squad{int(version)}_train.json'}", "--train_batch_size=12",
            f"--predict_file={root / f'squad{int(version)}_dev.json'}", "--num_train_epochs=1",
            "--max_query_length=8", "--doc_stride=16", f"--export_dir={export}",
            *(["--version_2_with_negative", "--start_n_top=2", "--end_n_top=2"] if version else []))
        spec.update(records=str(out / "predict.tf_record"), n_top=2)
    else:
        run("run_race.py", *common, f"--data_dir={root}", f"--spm_model_file={world['spm']}", "--max_qa_length=8",
            "--train_batch_size=8", "--train_step=2", "--warmup_step=0", "--eval_batch_size=8",
            f"--export_dir={export}")
        spec.update(records=str(out / "eval.tf_record"))
    _RUNS[key] = spec
    return spec


def serve_and_compare(server, spec: dict, timeout: float = 300) -> dict:
    server.stdin.write(json.dumps(spec) + "\n")
    server.stdin.flush()
    ready, _, _ = select.select([server.stdout], [], [], timeout)
    assert ready, f"tests/serving_check.py --serve gave no report in {timeout} s"
    line = server.stdout.readline()
    assert line, f"tests/serving_check.py --serve ended (exit {server.wait()}): {server.log.read_text()[-4000:]}"
    report = json.loads(line)
    assert "error" not in report, report["error"]
    assert report["diffs"] and max(report["diffs"].values()) <= TOLERANCE, report["diffs"]
    assert all(report["exact"].values()), report["exact"]
    assert report["low_precision"] and not any(report["low_precision"].values()), report["low_precision"]
    return report


@pytest.mark.slow
@pytest.mark.parametrize("runner,precision,recompute", ROWS, ids=[f"{r}-{p}{'-recompute' * c}" for r, p, c in ROWS])
def test_runner_export_serves_the_float32_model(world, server, runner, precision, recompute):
    spec = run_row(world, runner, precision, recompute)
    report = serve_and_compare(server, spec)
    expected = {"pretraining": 3, "classifier": 3, "squad_v1": 4, "squad_v2": 10, "race": 2}[runner]
    assert len(report["diffs"]) + len(report["exact"]) >= expected, report


@pytest.mark.slow
def test_keras_chain_from_pretrained_to_a_served_export(world, server):
    """from_pretrained -> fit under mixed_bfloat16 -> save(.keras) -> load_model -> export, then served in a
    process that trained nothing, next to the .keras model loaded under float32."""
    root = world["root"]
    model_dir = root / "released"
    keras_file, export = root / "pair.keras", root / "keras-export"
    code = f"""
import os, shutil
import keras
import albert
config = albert.AlbertConfig.from_json_file({world['config']!r})
os.makedirs({str(model_dir)!r})
shutil.copy({world['config']!r}, {str(model_dir / 'albert_config.json')!r})
shutil.copy({world['spm']!r}, {str(model_dir / 'sp.model')!r})
albert.save_original_checkpoint(albert.AlbertPretrainer(config), {str(model_dir / 'model.ckpt-best')!r})
keras.mixed_precision.set_global_policy("mixed_bfloat16")
model = albert.AlbertClassifier.from_pretrained({str(model_dir)!r}, num_labels=2, seq_length=24)
model.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(x=(["the code is mango"] * 4, ["what is the code?"] * 4), y=[1, 0, 1, 0], batch_size=2, verbose=0)
model.save({str(keras_file)!r})
again = albert.load_model({str(keras_file)!r})
assert again.compute_dtype == "bfloat16", again.compute_dtype
again.export({str(export)!r}, verbose=False)
"""
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-4000:]
    serve_and_compare(server, {"kind": "keras", "run_dir": str(model_dir), "export_dir": str(export),
                       "checkpoint": None, "seq_length": 24, "keras_file": str(keras_file)})


@pytest.mark.slow
def test_publishing_chain_run_classifier_to_huggingface(world):
    """run_classifier.py's output directory is a model directory (it records albert_config.json and the
    SentencePiece model): `python -m albert.convert --to=huggingface` writes the tensors and config.json that
    transformers' AlbertForSequenceClassification loads (names and keys as the transformers-written fixture),
    holding the run's best weights."""
    import tensorflow as tf

    from tests.test_weights_formats import read_safetensors

    spec = run_row(world, "classifier", "bf16", True)
    out, hf = spec["run_dir"], os.path.join(world["root"], "published")
    assert {"albert_config.json", "sp.model", "sp.vocab", "model.ckpt-best.index"} <= set(os.listdir(out))
    run("albert.convert", f"--input={out}", f"--output={hf}", "--to=huggingface")
    assert sorted(os.listdir(hf)) == [".albert-output.json", "config.json", "model.safetensors", "spiece.model",
                                      "tokenizer_config.json"]
    written = read_safetensors(os.path.join(hf, "model.safetensors"))
    reference = read_safetensors(os.path.join(FIXTURES, "weights", "hf_classifier", "model.safetensors"))
    # The fixture has 2 groups of 2 inner layers, this run's config 1 of 1: the same names for group 0, layer 0.
    assert sorted(written) == sorted(n for n in reference if ".1." not in n)
    with open(os.path.join(hf, "config.json")) as f, \
            open(os.path.join(FIXTURES, "weights", "hf_classifier", "config.json")) as g:
        config, fixture = json.load(f), json.load(g)
    # The run's label names travel with it (RTE's, in the order the run recorded them).
    assert sorted(config) == sorted(fixture)
    assert config["id2label"] == {"0": "entailment", "1": "not_entailment"}
    assert config["label2id"] == {"entailment": 0, "not_entailment": 1}
    assert config["architectures"] == ["AlbertForSequenceClassification"]
    assert config["hidden_size"] == 16
    best = tf.train.load_checkpoint(os.path.join(out, "model.ckpt-best"))
    np.testing.assert_array_equal(written["classifier.weight"], best.get_tensor("output_weights"))
    np.testing.assert_array_equal(written["albert.embeddings.word_embeddings.weight"],
                                  best.get_tensor("bert/embeddings/word_embeddings"))
    with open(os.path.join(hf, "spiece.model"), "rb") as f, open(world["spm"], "rb") as g:
        assert f.read() == g.read()
