"""What the benchmarks that run this project beside its peers share: the real data's default paths, the peers'
environment (.venv-peers, benchmarks/peers.sh), one measurement in a worker process (its `RESULT <json>` line),
and saving a picture."""

import contextlib
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
PEERS_PYTHON = os.path.join(ROOT, ".venv-peers", "bin", "python")


def add_data_flags(parser):
    """--glue_dir and --spm_model_file (the real GLUE files and the released 30k-clean model, ../shared)."""
    parser.add_argument("--glue_dir", default=os.path.join(SHARED, "glue_real"))
    parser.add_argument("--spm_model_file", default=os.path.join(SHARED, "albert_30k_clean", "30k-clean.model"))


def check_peers(program: str, python: str):
    if not os.path.exists(python):
        sys.exit(f"{program}: error: {python} not found; make it with bash benchmarks/peers.sh")


def run_worker(program: str, side: str, command: list, env: dict):
    """The RESULT of one worker process (`command`), or exit naming the side and its last stderr line."""
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode or not lines:
        sys.exit(f"{program}: the {side} worker failed: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(lines[-1][len("RESULT "):])


def save_figure(figure, path: str):
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def stratified(sizes: list, count: int) -> list:
    """The positions of `count` items of `sizes` (e.g. the padded tokens of each batch of an epoch) at the evenly
    spaced quantiles (k + 1/2) / count of their ranking by size, in their original order: a sample of the whole
    epoch whose mean size is the epoch's, wherever each size falls in it."""
    ranked = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    return sorted(ranked[int((k + 0.5) * len(ranked) / count)] for k in range(count))


def hf_base_classifier_config(transformers, num_labels: int = 2):
    """transformers' AlbertConfig of ALBERT-base (v2 shape, the tanh GELU as "gelu_new", SDPA attention): the
    HF workers' model, in .venv-peers (`transformers` passed in: this module imports nothing outside the stdlib)."""
    return transformers.AlbertConfig(vocab_size=30000, embedding_size=128, hidden_size=768, num_attention_heads=12,
                                     intermediate_size=3072, num_hidden_layers=12, max_position_embeddings=512,
                                     hidden_act="gelu_new", num_labels=num_labels, attn_implementation="sdpa")


def hf_train_rate(torch, model, optimizer, batches: list, warmup: int, batch_size: int, autocast=None) -> float:
    """Examples/s of transformers' training steps (loss, backward, clipping at 1.0, AdamW) over `batches` after
    the first `warmup` untimed ones (`torch` and the objects passed in: this module imports nothing outside the
    stdlib)."""
    def step(batch):
        with autocast or contextlib.nullcontext():
            loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for batch in batches[:warmup]:
        step(batch)
    start = time.perf_counter()
    for batch in batches[warmup:]:
        step(batch)
    return (len(batches) - warmup) * batch_size / (time.perf_counter() - start)

