"""run_pretraining.py end to end: learning, resuming after SIGKILL, original inputs, strategies, errors."""

import json
import os
import re
import signal
import time

import numpy as np
import pytest
import tensorflow as tf

from tests.helpers import FIXTURES, resized_config, tree_digest
from tests.pretraining_helpers import (PRED, SEQ, run_pretraining, step_losses, write_config,
                                       write_original_records)


@pytest.fixture
def setup(tmp_path):
    records = write_original_records(str(tmp_path / "train.tfrecord"), 8)
    config = write_config(str(tmp_path / "albert_config.json"))
    return tmp_path, records, config


@pytest.mark.slow
def test_tiny_model_overfits_original_format_records(setup):
    tmp_path, records, config = setup
    out = tmp_path / "out"
    result = run_pretraining(f"--input_file={records}", f"--output_dir={out}", f"--albert_config_file={config}",
                             "--train_batch_size=8", "--num_train_steps=300", "--num_warmup_steps=10",
                             "--learning_rate=0.01", "--save_checkpoints_steps=150", "--iterations_per_loop=100",
                             "--do_eval", "--eval_batch_size=8", "--max_eval_steps=1", "--log_every_steps=50")
    assert result.returncode == 0, result.stderr[-2000:]
    # Progress: the first (tracing) call runs one step and is reported apart; then a line every 50 steps (and at
    # each checkpoint) with the rates.
    lines = [line for line in result.stdout.splitlines() if line.startswith("step ")]
    assert [int(line.split()[1].split("/")[0]) for line in lines] == [1, 51, 101, 150, 200, 250, 300]
    assert "| first call (tracing, compiling): " in lines[0]
    assert "examples/s" not in lines[0]
    assert all(re.search(r"\| [\d,.]+ examples/s, [\d,]+ tokens/s, [\d,.]+ GFLOP/s \(MFU \d+%\), ETA [\d,]+ s$", line)
               for line in lines[1:]), lines[1]
    # eval_results.txt keeps both evaluations; they reach TensorBoard too.
    assert (out / "eval_results.txt").read_text().count("global_step = ") == 2
    assert len(list((out / "eval").iterdir())) == 1
    events = sorted(p.name for p in (out / "train").iterdir())
    rerun = run_pretraining(f"--input_file={records}", f"--output_dir={out}", f"--albert_config_file={config}",
                            "--train_batch_size=8", "--num_train_steps=300", "--do_eval")
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert rerun.stdout.splitlines()[-1].endswith("at step 300")
    assert "\nstep " not in rerun.stdout
    assert sorted(p.name for p in (out / "train").iterdir()) == events  # nothing to do: no new event file
    results = dict(line.split(" = ") for line in (out / "eval_results.txt").read_text().splitlines())
    assert float(results["masked_lm_accuracy"]) >= 0.95, results
    assert float(results["sentence_order_accuracy"]) >= 0.95, results
    assert results["global_step"] == "300"
    assert set(results) == {"global_step", "loss", "masked_lm_accuracy", "masked_lm_loss",
                            "sentence_order_accuracy", "sentence_order_loss"}
    assert abs(float(results["loss"]) - float(results["masked_lm_loss"]) - float(results["sentence_order_loss"])) \
        < 1e-6
    # model.ckpt-best is written under the original names, readable as the original's checkpoints are.
    names = dict(tf.train.list_variables(str(out / "model.ckpt-best")))
    assert names["bert/embeddings/word_embeddings"] == [40, 8]
    assert names["global_step"] == []
    assert (out / "train").is_dir()
    assert any((out / "train").iterdir())  # TensorBoard summaries


@pytest.mark.slow
def test_recompute_trains_the_same_losses_and_deterministic_reruns_are_identical(tmp_path):
    """--recompute changes memory, not numbers (dropout on: the same masks are drawn again); --deterministic
    reruns give the same losses bit for bit."""
    records = write_original_records(str(tmp_path / "train.tfrecord"), 16)
    config = write_config(str(tmp_path / "albert_config.json"), hidden_dropout_prob=0.1,
                          attention_probs_dropout_prob=0.1, inner_group_num=2)
    losses = {}
    for name, flags in (("plain", ["--deterministic"]), ("recompute", ["--recompute"]), ("again", ["--deterministic"])):
        result = run_pretraining(f"--input_file={records}", f"--output_dir={tmp_path / name}",
                                 f"--albert_config_file={config}", "--train_batch_size=4", "--num_train_steps=6",
                                 "--num_warmup_steps=1", "--learning_rate=0.01", "--save_checkpoints_steps=6",
                                 "--log_every_steps=1", *flags)
        assert result.returncode == 0, result.stderr[-2000:]
        losses[name] = [loss for _, loss in sorted(step_losses(result.stdout).items())]
    assert len(losses["plain"]) == 6
    assert abs(losses["plain"][0] - losses["plain"][-1]) > 1e-3
    np.testing.assert_allclose(losses["recompute"], losses["plain"], atol=1e-5, rtol=0)
    assert losses["again"] == losses["plain"]


@pytest.mark.slow
def eval_blocks(path):
    """{global_step: {key: value}} of an eval_results.txt."""
    blocks, block = {}, {}
    for line in open(path).read().splitlines():
        key, value = line.split(" = ")
        block[key] = float(value)
        if key == "sentence_order_loss":  # the last key of a block (sorted)
            blocks[int(block["global_step"])] = block
            block = {}
    return blocks


@pytest.mark.slow
def test_sigkill_then_rerun_resumes_exactly(setup):
    """With dropout: the dropout seed generators are checkpointed, so the resumed losses, every evaluation and
    model.ckpt-best equal an uninterrupted run's; a checkpoint saved but not yet evaluated when the kill landed is
    evaluated on resume."""
    tmp_path, records, _ = setup
    config = write_config(str(tmp_path / "dropout.json"), hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    common = [f"--input_file={records}", f"--albert_config_file={config}", "--train_batch_size=4",
              "--num_train_steps=60", "--num_warmup_steps=5", "--learning_rate=0.005", "--save_checkpoints_steps=5",
              "--iterations_per_loop=1", "--keep_checkpoint_max=3", "--do_eval", "--max_eval_steps=2",
              "--eval_batch_size=4"]
    reference = run_pretraining(*common, f"--output_dir={tmp_path / 'ref'}")
    assert reference.returncode == 0, reference.stderr[-2000:]
    expected = step_losses(reference.stdout)
    assert sorted(expected) == list(range(1, 61))

    out = tmp_path / "killed"
    proc = run_pretraining(*common, f"--output_dir={out}", popen=True)
    deadline = time.time() + 240
    while not (out / "model.ckpt-10.index").exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    state = tf.train.get_checkpoint_state(str(out))
    last = int(state.model_checkpoint_path.rsplit("-", 1)[1])
    assert 5 <= last < 60  # the kill may land while model.ckpt-10 is being written: then 5 is the last
    for path in state.all_model_checkpoint_paths:  # every checkpoint left behind reads back whole
        reader = tf.train.load_checkpoint(path)
        dtypes = reader.get_variable_to_dtype_map()
        assert any("iterator" in n for n in dtypes)  # the data position is in the checkpoint
        assert all(reader.get_tensor(n) is not None for n, d in dtypes.items() if d != tf.variant)

    resumed = run_pretraining(*common, f"--output_dir={out}")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"resumed from {out}/model.ckpt-{last} at step {last}" in resumed.stdout
    got = step_losses(resumed.stdout)
    assert sorted(got) == list(range(last + 1, 61))
    # nothing the kill left (a half-written model.ckpt-N_temp/, a *.tmp-<pid> file) outlives the resumed run
    assert not [n for n in os.listdir(out) if n.endswith("_temp") or ".tmp-" in n or n.startswith(".albert.lock")]
    for step, loss in got.items():
        assert abs(loss - expected[step]) <= 1e-6, (step, loss, expected[step])
    reference_evals, evals = eval_blocks(tmp_path / "ref" / "eval_results.txt"), eval_blocks(out / "eval_results.txt")
    assert sorted(evals) == sorted(reference_evals) == list(range(5, 61, 5))
    for step, block in evals.items():
        for key, value in block.items():
            assert abs(value - reference_evals[step][key]) <= 1e-6, (step, key)
    best = json.load(open(out / "model.ckpt-best.json"))
    assert best.keys() == (expected_best := json.load(open(tmp_path / "ref" / "model.ckpt-best.json"))).keys()
    assert all(abs(best[k] - expected_best[k]) <= 1e-6 for k in best)


def test_init_checkpoint_from_an_original_tf1_checkpoint(tmp_path):
    records = write_original_records(str(tmp_path / "train.tfrecord"), 8, learnable=False)
    fixture = os.path.join(FIXTURES, "e_lt_h_shared")
    out = tmp_path / "out"
    result = run_pretraining(f"--input_file={records}", f"--output_dir={out}",
                             f"--albert_config_file={fixture}/albert_config.json",
                             f"--init_checkpoint={fixture}/model.ckpt", "--learning_rate=0", "--train_batch_size=4",
                             "--num_train_steps=1", "--num_warmup_steps=0", "--save_checkpoints_steps=1")
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"{fixture}/model.ckpt: loaded 32, missing 0, ignored 2" in result.stdout
    from albert import AlbertConfig, AlbertPretrainer
    from albert.weights.loader import init_from_checkpoint
    from albert.weights.original import original_variable_map

    model = AlbertPretrainer(AlbertConfig.from_json_file(f"{fixture}/albert_config.json"))
    init_from_checkpoint(model, str(out / "model.ckpt-1"))  # our TF2 checkpoint, restored through the encoder
    reader = tf.train.load_checkpoint(f"{fixture}/model.ckpt")
    for name, variable in original_variable_map(model).items():
        np.testing.assert_array_equal(np.asarray(variable), reader.get_tensor(name), err_msg=name)


@pytest.mark.slow
def test_cli_errors(setup):
    """Resuming with another batch shape is one line (the other bad inputs: tests/test_bad_inputs.py)."""
    tmp_path, records, config = setup
    base = [f"--input_file={records}", f"--output_dir={tmp_path / 'o'}", f"--albert_config_file={config}"]
    first = run_pretraining(*base, "--train_batch_size=4", "--num_train_steps=2", "--save_checkpoints_steps=2",
                            f"--max_seq_length={SEQ}", f"--max_predictions_per_seq={PRED}")
    assert first.returncode == 0, first.stderr[-2000:]
    resumed = run_pretraining(*base, "--train_batch_size=2", "--num_train_steps=4", f"--max_seq_length={SEQ}",
                              f"--max_predictions_per_seq={PRED}")
    assert resumed.returncode == 2, resumed.stderr[-2000:]
    assert resumed.stderr.strip().splitlines()[-1].startswith(
        f"run_pretraining.py: error: {tmp_path / 'o'}/model.ckpt-2: cannot resume with these flags: its saved input "
        "position holds batches of another shape (")
    line, = resumed.stderr.splitlines()  # one line: TensorFlow's start-up noise filtered


@pytest.mark.slow
def test_accumulation_xla_and_fp16_paths_train(setup):
    """Accumulating 2 micro-batches of 4 gives the first-step loss of one batch of 8 (the masked-LM denominator
    is per micro-batch, so equal up to the weight balance); XLA and fp16 (dynamic loss scaling) runs learn."""
    tmp_path, records, config = setup
    common = [f"--input_file={records}", f"--albert_config_file={config}", "--train_batch_size=8",
              "--num_train_steps=30", "--num_warmup_steps=2", "--learning_rate=0.01", "--save_checkpoints_steps=30",
              "--iterations_per_loop=1"]
    runs = {}
    for name, extra in {"plain": [], "accumulate": ["--gradient_accumulation_steps=2"],
                        "xla": ["--jit_compile"], "fp16": ["--mixed_precision=fp16"]}.items():
        result = run_pretraining(*common, *extra, f"--output_dir={tmp_path / name}")
        assert result.returncode == 0, (name, result.stderr[-2000:])
        runs[name] = step_losses(result.stdout)
        assert sorted(runs[name]) == list(range(1, 31)), name
        assert runs[name][30] < runs[name][1] - 0.5, (name, runs[name][1], runs[name][30])
    assert abs(runs["accumulate"][1] - runs["plain"][1]) < 0.02
    assert abs(runs["xla"][1] - runs["plain"][1]) < 1e-4
    assert abs(runs["fp16"][1] - runs["plain"][1]) < 0.05


@pytest.mark.slow
def test_weights_do_not_depend_on_how_steps_are_grouped_into_calls(setup):
    """Every step runs in the one compiled loop body: logging every step, every 7 steps or every ~30 s trains the
    same weights, bit for bit."""
    tmp_path, records, config = setup
    common = [f"--input_file={records}", f"--albert_config_file={config}", "--train_batch_size=4",
              "--num_train_steps=20", "--num_warmup_steps=2", "--learning_rate=0.005", "--save_checkpoints_steps=20",
              "--iterations_per_loop=20"]
    weights = []
    for every in (1, 7, 0):
        out = tmp_path / f"every_{every}"
        result = run_pretraining(*common, f"--output_dir={out}", f"--log_every_steps={every}")
        assert result.returncode == 0, result.stderr[-2000:]
        reader = tf.train.load_checkpoint(str(out / "model.ckpt-20"))
        weights.append({name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
                        if name.endswith("VARIABLE_VALUE")})  # model, optimizer slots and step
    assert len(weights[0]) > 10
    for other in weights[1:]:
        assert other.keys() == weights[0].keys()
        for name in weights[0]:
            np.testing.assert_array_equal(other[name], weights[0][name], err_msg=name)


@pytest.mark.slow
def test_a_refused_rerun_leaves_the_run_directory_byte_identical(setup):
    """A run of 4 steps, then reruns on its directory that are refused: a config of another hidden_size (the
    checkpoint is another model's) and another batch size (its saved data position holds other batches). Each: exit
    2, one line, and every file of the directory (albert_config.json, every checkpoint) byte-identical."""
    tmp_path, records, config = setup
    out = tmp_path / "four"
    base = [f"--input_file={records}", f"--output_dir={out}", f"--max_seq_length={SEQ}",
            f"--max_predictions_per_seq={PRED}", "--num_train_steps=4", "--save_checkpoints_steps=2"]
    first = run_pretraining(*base, f"--albert_config_file={config}", "--train_batch_size=4")
    assert first.returncode == 0, first.stderr[-2000:]
    before = tree_digest(out)
    assert {"albert_config.json", "model.ckpt-4.index", "model.ckpt-2.index", "checkpoint"} <= set(before)
    wider = resized_config(config, tmp_path, hidden_size=24)
    more = ["--num_train_steps=8"]
    for flags, start in (([f"--albert_config_file={wider}", "--train_batch_size=4"],
                          f"run_pretraining.py: error: {out}/model.ckpt-4: written for another model ("),
                         ([f"--albert_config_file={config}", "--train_batch_size=2"],
                          f"run_pretraining.py: error: {out}/model.ckpt-4: cannot resume with these flags: ")):
        refused = run_pretraining(*base, *more, *flags)
        assert refused.returncode == 2, refused.stderr[-2000:]
        line, = refused.stderr.splitlines()
        assert line.startswith(start), line
        assert tree_digest(out) == before, flags
