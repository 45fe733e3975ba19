"""benchmarks/finetune_hf.py --draw: the table of the rows already in --results, chosen by the run's settings and in
the order of --tasks, --seq_lengths and --precisions, measuring nothing (no TensorFlow, no peers' environment);
one line and exit 2 when no row matches."""

import json
import os
import subprocess
import sys

from tests.helpers import ROOT

SCRIPT = os.path.join(ROOT, "benchmarks", "finetune_hf.py")
SETTINGS = {"train_steps": 4, "eval_examples": 256, "turns": 3, "grouped_sample": "stratified",
            "our_step_cut": "longest example", "our_grouping": "windows of 50 batches sorted by length",
            "our_eval_cut": "longest example", "our_last_block": "token 0 only", "eval_passes": 3}


def row(task, seq, ours, hf, machine="cpu A", **changes) -> dict:
    return {"task": task, "T": seq, "batch": 32, "precision": "fp32", "padded_tokens": [1234, 1234],
            "grouped_tokens": [800, 768], "ours": dict(zip(("train", "grouped", "eval"), ours)),
            "hf": dict(zip(("train", "grouped", "eval"), hf)), "machine": machine, **SETTINGS, **changes}


def draw(results, *flags):
    return subprocess.run([sys.executable, SCRIPT, "--draw", "--results", str(results), "--picture", "",
                           "--peers_python", "/nowhere/python", *flags], capture_output=True, text=True, timeout=120)


def test_draw_prints_the_rows_of_the_settings_in_the_asked_order(tmp_path):
    results = tmp_path / "rows.json"
    rows = [row("rte", 512, (1.5, 3.0, 9.0), (1.0, 4.0, 9.0)),
            row("sst-2", 128, (6.0, 20.0, 30.0), (4.0, 16.0, 40.0), machine="cpu B"),
            row("rte", 128, (9.9, 9.9, 9.9), (1.0, 1.0, 1.0), train_steps=6),  # other settings: not this run's
            row("rte", 128, (2.2, 3.3, 11.0), (2.0, 3.0, 10.0))]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = draw(results, "--tasks", "sst-2,rte,cola", "--seq_lengths", "128,512", "--precisions", "fp32",
                  "--train_steps", "4", "--eval_examples", "256")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[3:6] == [
        "| sst-2 | 128 | 32 | fp32 | 6.00 / 4.00 (1.50x) | 1,234 / 1,234 | 20.00 / 16.00 (1.25x) | 800 / 768 | "
        "30.00 / 40.00 (0.75x) |",
        "| rte | 128 | 32 | fp32 | 2.20 / 2.00 (1.10x) | 1,234 / 1,234 | 3.30 / 3.00 (1.10x) | 800 / 768 | "
        "11.00 / 10.00 (1.10x) |",
        "| rte | 512 | 32 | fp32 | 1.50 / 1.00 (1.50x) | 1,234 / 1,234 | 3.00 / 4.00 (0.75x) | 800 / 768 | "
        "9.00 / 9.00 (1.00x) |"]
    assert result.stdout.splitlines()[7] == (
        "target ours >= 1.0x HF in every row: NOT met in sst-2 T=128 fp32 eval, rte T=512 fp32 grouped")
    assert len(result.stdout.splitlines()) == 8


def test_draw_without_a_matching_row_says_which_settings_and_exits_2(tmp_path):
    results = tmp_path / "rows.json"
    results.write_text(json.dumps(row("rte", 128, (1, 1, 1), (1, 1, 1))) + "\n")
    result = draw(results, "--tasks", "rte", "--seq_lengths", "128", "--precisions", "fp32")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"finetune_hf.py: error: {results} holds no row of --tasks rte --seq_lengths 128 --precisions fp32 measured "
        "with --train_steps 6 --eval_examples 512 --turns 3; pass the settings it was measured with\n")
