"""Compute only real tokens (albert.data.buckets): batches cut to a length bucket give the numbers of fixed padding.

- every task model's outputs on a cut batch equal the fixed-length batch's at the real positions (1e-5);
- evaluation batches hold every example once, sorted by length in windows (numpy), each cut to its longest (or its
  bucket), and outputs go back to the examples' order;
- `--group_by_length` batches are those of windows sorted by length (an independent numpy reference), shuffled;
- a training step cuts its batch to its longest example, under XLA to its bucket (albert.train.replicas);
- run_classifier.py: 20 steps with the default buckets and with `--length_buckets=none` give the same per-step
  losses (1e-4) and the same test predictions; `--group_by_length` trains; under `--jit_compile` XLA compiles the
  step once per length used (counted from XLA's own dumps), bounded by the boundaries;
- MirroredStrategy over two logical CPUs with buckets follows one device;
- the raw-string serving models compute up to the batch's bucket with the fixed model's outputs (1e-5);
- model.tflite takes any length (the fixed model's outputs on a cut batch), or the fixed one with buckets none;
- Keras fit / predict on strings or feature arrays: grouped by length, each batch cut to its longest example (under
  XLA to its bucket), predictions in the examples' order equal one uncut batch's (1e-5).
"""

import json
import os
import random
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import albert
from albert.data.buckets import cut, cut_to_bucket, grouped_batches, in_original_order, length_sorted_batches
from albert.data.features import PACKED_INPUTS, boundaries, step_boundaries
from albert.ground.errors import AlbertError
from albert.train.replicas import ReplicaFeed
from tests.helpers import ROOT, tiny_config
from tests.pretraining_helpers import run_on_two_cpus, step_losses

T = 16


def batch_of(lengths, rows=None, seed=0) -> dict:
    """Features padded to T with the given real lengths ([B], or [B, rows] for multiple choice)."""
    rng = np.random.default_rng(seed)
    lengths = np.asarray(lengths)
    mask = (np.arange(T) < lengths[..., None]).astype(np.int32)
    ids = rng.integers(5, 40, mask.shape).astype(np.int32) * mask
    segments = ((np.arange(T) >= lengths[..., None] // 2) * mask).astype(np.int32)
    return {"input_ids": ids, "input_mask": mask, "segment_ids": segments}


def test_boundaries_from_the_flag():
    assert boundaries(512) == (8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256,
                               320, 384, 448, 512)
    assert boundaries(128) == (8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128)
    assert boundaries(100) == (8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 100)
    assert boundaries(512, "none") == (512,)
    assert boundaries(128, "24, 48,256") == (24, 48, 128)
    with pytest.raises(AlbertError, match="--length_buckets 'x': use default, none or comma-separated lengths"):
        boundaries(128, "x")


def test_a_batch_is_cut_to_the_bucket_of_its_longest_example():
    features = batch_of([3, 7, 5])
    bounds = (4, 8, 16)
    cut_batch = cut_to_bucket({k: tf.constant(v) for k, v in features.items()}, bounds)
    assert {k: tuple(v.shape) for k, v in cut_batch.items()} == {k: (3, 8) for k in PACKED_INPUTS}
    np.testing.assert_array_equal(cut_batch["input_ids"], features["input_ids"][:, :8])
    race = cut_to_bucket({k: tf.constant(v) for k, v in batch_of([[2, 3, 9, 1], [1, 1, 1, 1]]).items()}, bounds)
    assert tuple(race["input_ids"].shape) == (2, 4, 16)  # the longest row of any choice decides
    assert cut_to_bucket(features, (16,)) is features  # fixed padding: as it is


def test_an_uncompiled_step_cuts_its_batch_to_the_longest_example_a_compiled_one_to_the_bucket():
    assert step_boundaries(16) == tuple(range(1, 17))
    assert step_boundaries(16, " Default ", compiled=True) == boundaries(16) == (8, 12, 16)
    assert step_boundaries(16, "none") == (16,)
    assert step_boundaries(128, "32,64") == (32, 64, 128)
    features = {k: tf.constant(v) for k, v in batch_of([3, 7, 5]).items()}
    for compiled, length in ((False, 7), (True, 8)):
        feed = ReplicaFeed(tf.distribute.OneDeviceStrategy("/cpu:0"), step_boundaries(T, compiled=compiled))
        batch, positions = feed.cut(features)
        assert {k: tuple(v.shape) for k, v in batch.items()} == {k: (3, length) for k in PACKED_INPUTS}
        assert float(positions) == 3 * length
        np.testing.assert_array_equal(batch["input_mask"], features["input_mask"][:, :length])
        assert feed.batch_shapes() == {length: 1}


def test_evaluation_batches_hold_every_example_once_sorted_by_length_and_come_back_in_order():
    rng = np.random.default_rng(1)
    lengths = rng.integers(1, T + 1, 53)
    features = batch_of(lengths)
    for bounds in (step_boundaries(T), (4, 8, 16)):  # the default (each batch's longest), or given boundaries
        batches = list(grouped_batches(tf.data.Dataset.from_tensor_slices(features), 8, bounds, window_batches=3))
        positions = [b["position"].numpy() for b in batches]
        assert sorted(np.concatenate(positions)) == list(range(53))  # every example once
        # windows of 24 examples, each sorted by length (ties in arrival order), cut into batches of 8 (numpy)
        expected = np.concatenate([start + np.argsort(lengths[start:start + 24], kind="stable")
                                   for start in range(0, 53, 24)])
        np.testing.assert_array_equal(np.concatenate(positions), expected)
        for batch, where in zip(batches, positions):
            length = batch["input_ids"].shape[1]
            assert length == min(b for b in bounds if b >= lengths[where].max())
            np.testing.assert_array_equal(batch["input_ids"], features["input_ids"][where, :length])
        ordered = in_original_order(positions, [b["input_ids"][:, 0].numpy() for b in batches])
        np.testing.assert_array_equal(ordered, features["input_ids"][:, 0])
        computed = sum(b["input_ids"].shape[0] * b["input_ids"].shape[1] for b in batches)
        assert computed < 0.8 * len(lengths) * T, computed  # fixed padding: 848


@pytest.mark.parametrize("rows", [None, 4])
def test_group_by_length_batches_are_cut_from_windows_sorted_by_length(rows):
    """Windows of 3 batches of 5: each sorted by length (longest first, ties in arrival order; multiple choice: the
    longest row) and cut into batches, as numpy sorts them here; the same batches come out, in another order, each
    example at most once (a last partial batch dropped), padded as they came (the step cuts them)."""
    rng = np.random.default_rng(2)
    count = 4 * 15 + 7  # four whole windows and one of 7 examples: one batch and 2 dropped
    lengths = rng.integers(1, T + 1, (count,) if rows is None else (count, rows))
    features = dict(batch_of(lengths), label_ids=np.arange(count, dtype=np.int32))
    longest = lengths if rows is None else lengths.max(axis=1)
    expected = []
    for start in range(0, count, 15):
        window = np.arange(start, min(start + 15, count))
        ordered = window[np.argsort(-longest[window], kind="stable")]
        expected += [tuple(ordered[s:s + 5]) for s in range(0, len(ordered) - 4, 5)]
    batches = list(length_sorted_batches(tf.data.Dataset.from_tensor_slices(features), 5, seed=3, window_batches=3))
    got = [tuple(batch["label_ids"].numpy()) for batch in batches]
    assert len(got) == 13 and sorted(got) == sorted(expected)
    assert got != expected  # the batches shuffled, not longest first in every window
    for batch, examples in zip(batches, got):
        np.testing.assert_array_equal(batch["input_ids"], features["input_ids"][list(examples)])
    spread = np.mean([np.ptp(longest[list(examples)]) for examples in got])  # longest - shortest in a batch
    arrival = np.mean([np.ptp(longest[s:s + 5]) for s in range(0, count - 4, 5)])
    assert spread < 0.6 * arrival, (spread, arrival)

MODELS = {  # name -> (constructor, extra inputs, outputs compared at real positions (axis 1) or whole)
    "classifier": (lambda c: albert.AlbertClassifier(c, num_labels=3), {}, {"": None}),
    "squad_v1": (albert.AlbertSquadV1, {}, {"start_logits": "positions", "end_logits": "positions"}),
    "squad_v2": (lambda c: albert.AlbertSquadV2(c, 2, 2), {"p_mask": None},
                 {"start_top_index": None, "start_top_log_probs": None, "end_top_index": None,
                  "end_top_log_probs": None, "cls_logits": None}),
    "pretrainer": (albert.AlbertPretrainer, {"masked_lm_positions": np.array([[1, 2], [3, 1], [4, 2]], np.int32)},
                   {"mlm_logits": None, "sop_logits": None}),
    "encoder": (albert.AlbertEncoder, {}, {"pooled_output": None, "sequence_output": "positions"}),
}


@pytest.mark.parametrize("name", sorted(MODELS) + ["multiple_choice"])
def test_every_task_model_gives_the_fixed_lengths_outputs_on_a_cut_batch(name):
    keras.utils.set_random_seed(2)
    config = tiny_config()
    lengths = [5, 7, 3]
    if name == "multiple_choice":
        model, features, compared = albert.AlbertMultipleChoice(config, num_choices=2), \
            batch_of([[5, 2], [7, 6], [3, 3]]), {"": None}
    else:
        make, extra, compared = MODELS[name]
        model, features = make(config), batch_of(lengths)
        features.update({k: (1 - features["input_mask"]) if v is None else v for k, v in extra.items()})
    fixed = model(features)
    cut_features = cut(features, 8)
    bucketed = model(cut_features)
    for key, how in compared.items():
        a, b = (fixed, bucketed) if key == "" else (fixed[key], bucketed[key])
        a, b = np.asarray(a), np.asarray(b)
        if how == "positions":
            a = a[:, :8]
        if a.dtype.kind == "i":
            np.testing.assert_array_equal(a, b, err_msg=f"{name} {key}")
        else:
            np.testing.assert_allclose(a, b, atol=1e-5, err_msg=f"{name} {key}")


def test_squad_v1_candidates_do_not_depend_on_how_far_a_feature_was_padded():
    from albert.tasks.squad.predictions import _spans

    rng = np.random.default_rng(0)
    real = 10
    full = {k: rng.normal(size=16).astype(np.float32) for k in ("start_logits", "end_logits")}
    for value in full.values():
        value[real:] = 50.0  # padded positions out-rank every real one, as they can in an unmasked 1.1 head
    at_bucket = {k: v[:12] for k, v in full.items()}
    fixed, cut_spans = list(_spans(full, 4, False, real)), list(_spans(at_bucket, 4, False, real))
    assert fixed == cut_spans
    assert len(fixed) == 16
    assert max(max(start, end) for start, end, _, _ in fixed) < real
    best = np.argsort(-full["start_logits"][:real], kind="stable")[:4]
    assert sorted({start for start, _, _, _ in fixed}) == sorted(best.tolist())


# ----------------------------------------------------------------------------------------------- run_classifier
def length_task(root, rng, rows: int):
    """An RTE-layout task whose sentence pairs vary from 3 to 40 words; label: does b hold `alpha`."""
    words = [f"w{i}" for i in range(20)]

    def row(i, labelled=True):
        a = " ".join(rng.choice(words) for _ in range(rng.choice([2, 3, 5, 20])))
        marker = rng.choice(["alpha", "beta"])
        b = " ".join([marker] + [rng.choice(words) for _ in range(rng.choice([1, 2, 4, 18]))])
        return [str(i), a, b] + (["entailment" if marker == "alpha" else "not_entailment"] if labelled else [])

    (root / "RTE").mkdir(parents=True, exist_ok=True)
    for split, count, labelled in (("train", rows, True), ("dev", 48, True), ("test", 24, False)):
        header = ["index", "sentence1", "sentence2"] + (["label"] if labelled else [])
        lines = ["\t".join(header)] + ["\t".join(row(i, labelled)) for i in range(count)]
        (root / "RTE" / f"{split}.tsv").write_text("\n".join(lines) + "\n")
    vocab = root / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "alpha", "beta"] + words) + "\n")
    config = root / "albert_config.json"
    config.write_text(json.dumps({"vocab_size": 27, "embedding_size": 16, "hidden_size": 32, "num_hidden_layers": 2,
                                  "num_attention_heads": 2, "intermediate_size": 64,
                                  "max_position_embeddings": 64}))
    return [f"--data_dir={root}", f"--vocab_file={vocab}", f"--albert_config_file={config}", "--task_name=RTE",
            "--max_seq_length=64"]


def run_classifier(*args, env=None):
    result = subprocess.run([sys.executable, os.path.join(ROOT, "run_classifier.py"), *args], capture_output=True,
                            text=True, timeout=600, env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2",
                                                             **(env or {})))
    assert result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return length_task(tmp_path_factory.mktemp("lengths"), random.Random(0), 160)


@pytest.mark.slow
def test_twenty_steps_with_buckets_follow_fixed_padding(task, tmp_path):
    """The same batches cut to their buckets: every step's loss within 1e-4 of fixed padding, the same test
    predictions (argmax), probabilities within 1e-5."""
    common = [*task, "--do_train", "--do_predict", "--train_batch_size=8", "--train_step=20", "--warmup_step=2",
              "--learning_rate=1e-3", "--save_checkpoints_steps=20", "--iterations_per_loop=5", "--log_every_steps=1",
              "--predict_batch_size=8"]
    losses, probabilities = {}, {}
    for buckets in ("default", "none"):
        out = tmp_path / buckets
        result = run_classifier(*common, f"--output_dir={out}", f"--length_buckets={buckets}")
        losses[buckets] = step_losses(result.stdout)
        probabilities[buckets] = np.loadtxt(out / "test_results.tsv")
        if buckets == "default":
            lengths = dict(item.split(" (") for item in result.stdout.split("batch lengths (steps): ")[1]
                           .splitlines()[0].rstrip(")").split("), "))
            assert len(lengths) >= 2 and min(map(int, lengths)) < 64, lengths  # short batches computed less
            # each batch cut to its own longest example, not to a bucket (the task's lengths are drawn at random,
            # so its 20 batches' longest do not all fall on boundaries)
            assert not set(map(int, lengths)) <= set(boundaries(64)), lengths
    assert sorted(losses["default"]) == list(range(1, 21))
    for step, loss in losses["none"].items():
        assert abs(loss - losses["default"][step]) <= 1e-4, (step, loss, losses["default"][step])
    np.testing.assert_array_equal(probabilities["default"].argmax(-1), probabilities["none"].argmax(-1))
    np.testing.assert_allclose(probabilities["default"], probabilities["none"], atol=1e-5)


@pytest.mark.slow
def test_group_by_length_and_xla_compile_once_per_length(task, tmp_path):
    """--group_by_length with --jit_compile: the step is compiled once per batch length used (XLA's dumps counted),
    never more than the boundaries; the lengths are printed once."""
    dump = tmp_path / "xla"
    result = run_classifier(*task, f"--output_dir={tmp_path / 'out'}", "--do_train", "--do_eval",
                            "--train_batch_size=8", "--train_step=12", "--save_checkpoints_steps=12",
                            "--iterations_per_loop=4", "--group_by_length", "--jit_compile", "--eval_batch_size=16",
                            env={"XLA_FLAGS": f"--xla_dump_to={dump}"})
    summary = [line for line in result.stdout.splitlines() if line.startswith("batch lengths (steps): ")]
    assert len(summary) == 1, result.stdout
    lengths = [int(item.split(" (")[0]) for item in summary[0].split(": ", 1)[1].split("; ")[0].split(", ")]
    assert set(lengths) <= set(boundaries(64))
    assert len(lengths) >= 2  # grouped: short batches apart from long
    assert f"XLA compiled the step for {len(lengths)} shape(s)" in summary[0]
    compiled = {name.split(".")[0] for name in os.listdir(dump)  # module_<n>: one per compilation
                if name.endswith(".before_optimizations.txt") and "replica_grads" in name}
    assert len(compiled) == len(lengths), sorted(os.listdir(dump))[:20]
    assert "eval_accuracy" in (tmp_path / "out" / "eval_results.txt").read_text()


@pytest.mark.slow
def test_mirrored_on_two_cpus_follows_one_device_with_buckets(tmp_path):
    """Pretraining records of 8-16 tokens cut to 8 or 16, under MirroredStrategy over two logical CPUs (both
    replicas of a step get one shape): the one-device losses, and those without buckets, within 1e-5."""
    result = run_on_two_cpus("""
cut, _ = train_losses(tf.distribute.OneDeviceStrategy("/cpu:0"), out + "/one", 4, length_boundaries=(8, 16))
whole, _ = train_losses(tf.distribute.OneDeviceStrategy("/cpu:0"), out + "/whole", 4)
mirrored, _ = train_losses(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]), out + "/two", 4,
                           length_boundaries=(8, 16))
print("RESULT " + json.dumps({"cut": cut, "whole": whole, "mirrored": mirrored}))
""", tmp_path)
    assert len(result["cut"]) == 4
    np.testing.assert_allclose(result["cut"], result["whole"], atol=1e-5)
    np.testing.assert_allclose(result["mirrored"], result["cut"], atol=1e-5)


# ----------------------------------------------------------------------------------------------------- serving
@pytest.mark.slow
def test_raw_string_serving_computes_up_to_the_bucket_with_the_same_outputs(spm_model, tmp_path):
    from albert.tasks.classification.serving import export_classifier

    keras.utils.set_random_seed(5)
    config = tiny_config(vocab_size=300, max_position_embeddings=64)
    model = albert.AlbertClassifier(config, num_labels=2)
    export_classifier(model, spm_model, True, ["no", "yes"], True, 64, str(tmp_path / "bucketed"))
    export_classifier(model, spm_model, True, ["no", "yes"], True, 64, str(tmp_path / "fixed"), (64,))
    short = (["a short one", "Hello WORLD, 1,024 times."], ["yes", "no"])
    long = (["word " * 40, "a"], ["another " * 12, "b"])
    for name in ("bucketed", "fixed"):
        globals()[name] = tf.saved_model.load(str(tmp_path / name))
    for a, b in (short, long):
        inputs = {"text_a": tf.constant(a), "text_b": tf.constant(b)}
        got, want = globals()["bucketed"].serve(inputs), globals()["fixed"].serve(inputs)
        np.testing.assert_allclose(got["logits"], want["logits"], atol=1e-5)
        assert list(got["predictions"].numpy()) == list(want["predictions"].numpy())
    # model.export of a model with a preprocessor: raw strings, cut to the bucket, the feature model's logits
    model.preprocessor = albert.AlbertPreprocessor(spm_model, seq_length=64)
    model.export(str(tmp_path / "keras"), verbose=False)
    served = tf.saved_model.load(str(tmp_path / "keras"))
    features = model.preprocessor((tf.constant(short[0]), tf.constant(short[1])))
    np.testing.assert_allclose(served.serve_text_pairs(tf.constant(short[0]), tf.constant(short[1])),
                               model(features), atol=1e-5)
    np.testing.assert_allclose(served.serve_text(tf.constant(short[0])),
                               model(model.preprocessor(tf.constant(short[0]))), atol=1e-5)


@pytest.mark.slow
def test_the_hub_preprocessor_packs_to_seq_length_its_bucketed_call_to_the_bucket_and_the_encoder_agrees(
        spm_model, tmp_path):
    from albert.export.hub import export_preprocessor

    export_preprocessor(spm_model, True, str(tmp_path / "pre"), 64)
    preprocessor = tf.saved_model.load(str(tmp_path / "pre"))
    texts = tf.constant(["a short text", "Hello WORLD, 1,024 times."])
    packed = preprocessor.bucketed(texts)  # the batch's bucket
    whole = preprocessor.bert_pack_inputs([preprocessor.tokenize(texts)], tf.constant(64))
    default = preprocessor(texts)  # TF Hub's contract: exactly seq_length
    assert {k: v.shape.as_list() for k, v in default.items()} == {k: [2, 64] for k in whole}
    for key in whole:
        np.testing.assert_array_equal(default[key], whole[key])
    longest = int(tf.reduce_max(tf.reduce_sum(whole["input_mask"], -1)))
    length = next(b for b in boundaries(64) if b >= longest)
    assert packed["input_word_ids"].shape[1] == length < 64
    assert whole["input_word_ids"].shape[1] == 64
    for key in packed:
        np.testing.assert_array_equal(packed[key], whole[key][:, :length])
    keras.utils.set_random_seed(3)
    encoder = albert.AlbertEncoder(tiny_config(vocab_size=300, max_position_embeddings=64))
    names = {"input_ids": "input_word_ids", "input_mask": "input_mask", "segment_ids": "input_type_ids"}
    short = encoder({k: packed[v] for k, v in names.items()})
    full = encoder({k: whole[v] for k, v in names.items()})
    np.testing.assert_allclose(short["pooled_output"], full["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(short["sequence_output"], full["sequence_output"][:, :length], atol=1e-5)


@pytest.mark.slow
def test_model_tflite_takes_the_batchs_own_length_unless_buckets_are_none(tmp_path):
    """The LiteRT file's sequence axis is dynamic by default (a batch cut to its longest example gives the fixed
    model's outputs, in one interpreter at several lengths); with --length_buckets=none it is the fixed length."""
    from albert.export.litert import file_length, tflite_runner
    from albert.export.serving import export_packed

    keras.utils.set_random_seed(4)
    model = albert.AlbertClassifier(tiny_config(max_position_embeddings=T), num_labels=3)
    for name, bounds in (("dynamic", boundaries(T)), ("fixed", (T,))):
        export_packed(model, PACKED_INPUTS, None, str(tmp_path / name), file_length(T, bounds))
    from ai_edge_litert.interpreter import Interpreter

    for name, shape in (("dynamic", [-1, -1]), ("fixed", [-1, T])):
        details = Interpreter(model_path=str(tmp_path / name / "model.tflite")).get_signature_runner(
            "serve").get_input_details()
        assert sorted(details) == sorted(PACKED_INPUTS)
        assert [list(d["shape_signature"]) for d in details.values()] == [shape] * 3, (name, details)
    runner = tflite_runner(str(tmp_path / "dynamic" / "model.tflite"))
    for lengths in ([3, 5], [9, 2, 12], [1]):
        features = batch_of(lengths, seed=len(lengths))
        want = model(features, training=False).numpy()
        length = max(lengths)
        got = runner({k: v[:, :length] for k, v in features.items()})["logits"]
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_keras_fit_and_predict_on_strings_and_features_cut_batches_in_the_original_order(spm_model):
    keras.utils.set_random_seed(4)
    model = albert.AlbertClassifier(tiny_config(vocab_size=300, max_position_embeddings=64), num_labels=2)
    model.preprocessor = albert.AlbertPreprocessor(spm_model, seq_length=64)
    rng = random.Random(0)
    texts = [" ".join(rng.choice(["the", "cat", "1,024", "sat", "on", "a", "mat"]) for _ in range(rng.choice([2, 30])))
             for _ in range(20)]
    features = model.tokenize(texts)
    expected = np.asarray(model(features))  # one whole-length batch, no cutting
    np.testing.assert_allclose(model.predict(texts, batch_size=4, verbose=0), expected, atol=1e-5)
    np.testing.assert_allclose(model.predict(features, batch_size=4, verbose=0), expected, atol=1e-5)
    lengths = features["input_mask"].sum(-1)
    for jit_compile, bounds in ((False, range(1, 65)), (True, boundaries(64))):
        model.jit_compile = jit_compile
        batches, order = model._feature_dataset(features, batch_size=4, grouped=True)
        np.testing.assert_array_equal(order, np.argsort(lengths, kind="stable"))  # grouped by length
        shapes = [b[0]["input_ids"].shape[1] for b in batches]
        for i, shape in enumerate(shapes):  # each batch cut to its longest example (XLA: that one's bucket)
            assert shape == min(b for b in bounds if b >= lengths[order][4 * i:4 * i + 4].max())
        assert shapes == sorted(shapes) and shapes[0] < 16
    model.jit_compile = False
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(features, np.arange(20) % 2, batch_size=4, epochs=1, verbose=0).history
    assert np.isfinite(history["loss"][0])
