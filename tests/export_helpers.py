"""Shared by the export tests and others: varied strings, a small SentencePiece model with digit+comma pieces,
running a script or an app-style snippet in a new interpreter, and a short fine-tuning on real SST-2 text with its
export (the `sst2` fixture of conftest.py)."""

import os
import pathlib
import random
import subprocess
import sys
import json
import textwrap

from tests.helpers import run_command, shared_directory

SPM = os.path.join(shared_directory(), "albert_30k_clean", "30k-clean.model")  # the released 30k-clean model
GLUE = os.path.join(shared_directory(), "glue_real")
TINY = {"vocab_size": 30000, "embedding_size": 16, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 64, "max_position_embeddings": 64}

FRAGMENTS = ["Hello", "WORLD", "Café", "naïve", "Zoë’s", "“quoted”", '"plain"', "1,024", "12,345,678", "3,5",
             "a,1,", "東京", "中文字", "São Paulo", "ÉTÉ", "don't", "ﬁne", "①", "½", "$2,500.00", "(parens)", "-",
             "–", "—", "€5", "£3", "Straße", "ΟΔΟΣ", "x\u00a0y", "résumé", "7,", "NASA", "İstanbul", "e\u0301t\u00e9"]
SEPARATORS = [" ", " ", " ", "", "  ", "\t", "\n ", "\u2003"]
WORDS = ["the", "cat", "sat", "on", "a", "mat", "and", "then", "ran", "far", "away", "from", "home", "with", "its",
         "friend", "number", "million", "paid", "about"]


# No run of one repeated digit ("000"): where SentencePiece's best segmentations tie exactly ("0"+"00" or "00"+"0",
# same score), tensorflow-text's bundled SentencePiece and sentencepiece 0.2.3 break the tie differently (README).
def random_strings(rng, count):
    out = ["", " ", "\t\n"]
    while len(out) < count:
        parts = [rng.choice(FRAGMENTS + WORDS + WORDS) for _ in range(rng.randrange(1, 14))]
        text = "".join(p + rng.choice(SEPARATORS) for p in parts)
        out.append(rng.choice(["", " ", "  "]) + text)
    return out


def train_sentencepiece_with_numbers(directory) -> str:
    """A small ALBERT-style SentencePiece model whose vocabulary has digit+comma pieces (so the digit-comma rule is
    exercised)."""
    from albert.text.tokenization import preprocess_text, train_sentencepiece

    rng = random.Random(3)
    lines = []
    for _ in range(3000):
        words = [rng.choice(WORDS + [f"{rng.randrange(1, 99)},{rng.randrange(100, 999)}", "1,", "2,", "10,"])
                 for _ in range(10)]
        lines.append(preprocess_text(" ".join(words) + " " + rng.choice(FRAGMENTS), lower=True))
    (directory / "text.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return train_sentencepiece([str(directory / "text.txt")], str(directory / "sp"), vocab_size=300)


def fresh(code: str, cwd, env_extra=None, timeout=300, python=sys.executable):
    """Run `code` in a new interpreter (`python`) that cannot import this package (no PYTHONPATH, cwd outside the
    repo), as an app developer's script would."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", **(env_extra or {}))
    result = subprocess.run([python, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=cwd,
                            env=env, timeout=timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


run_script = run_command  # the harness, under the name these tests use


def sst2_export(tmp_path, reuse=False):
    """run_classifier.py on SST-2 text of dev size (the first 872 training rows; dev as released), the released
    SentencePiece model, a small random model: trains, evaluates, exports (model.tflite with metadata, and
    model.onnx). (tmp_path, output_dir, the 872 dev sentences). `reuse`: `tmp_path` holds a finished run
    (tests/fixture_cache.py)."""
    tmp_path = pathlib.Path(tmp_path)
    out = tmp_path / "out"
    if reuse:
        return tmp_path, out, sst2_dev_sentences()
    data = tmp_path / "glue" / "SST-2"
    data.mkdir(parents=True)
    with open(os.path.join(GLUE, "SST-2", "train.tsv"), encoding="utf-8") as f:
        (data / "train.tsv").write_text("".join(line for line, _ in zip(f, range(873))), encoding="utf-8")
    os.symlink(os.path.join(GLUE, "SST-2", "dev.tsv"), data / "dev.tsv")
    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps(TINY))
    result = run_script("run_classifier.py", "--task_name=SST-2", f"--data_dir={tmp_path / 'glue'}",
                        f"--output_dir={out}", f"--albert_config_file={config}", f"--spm_model_file={SPM}",
                        "--do_train", "--do_eval", "--max_seq_length=64", "--train_batch_size=32", "--train_step=27",
                        "--warmup_step=3", "--learning_rate=1e-3", "--save_checkpoints_steps=27",
                        "--eval_batch_size=128", f"--export_dir={tmp_path / 'serving'}", "--onnx_export=float32")
    assert result.returncode == 0, result.stderr[-3000:]
    # TensorFlow's warning as tf2onnx exports the graph (its first line filtered, the rest stray lines) stays out
    assert "CollectionDef" not in result.stderr and "object has no attribute" not in result.stderr, result.stderr
    return tmp_path, out, sst2_dev_sentences()


def sst2_dev_sentences() -> list:
    with open(os.path.join(GLUE, "SST-2", "dev.tsv"), encoding="utf-8") as f:
        return [line.split("\t")[0] for line in f.read().splitlines()[1:]]
