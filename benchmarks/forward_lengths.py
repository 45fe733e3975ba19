"""A base-size classifier's forward pass at one batch size over several lengths, ours beside Hugging Face's: where
evaluation's time goes at each length (the short batches of a length-sorted evaluation are the ones that decide
benchmarks/finetune_hf.py's eval row).

Ours: `AlbertClassifier` (random weights) in a `tf.function` as evaluation calls it, TensorFlow loaded with oneDNN as
the command lines load it (albert.ground.cpu). HF: `AlbertForSequenceClassification` (SDPA attention) under
`torch.inference_mode`, in .venv-peers (bash benchmarks/peers.sh). Every row of a batch holds the whole length (no
padding), 2 threads each side, each side in its own process, the two taking turns; ms a call, best of `--calls`
calls a turn and of the turns.

    python benchmarks/forward_lengths.py --batch_size 32 --seq_lengths 8,16,24,64 --turns 2
"""

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import sides  # noqa: E402  (benchmarks/sides.py, beside this script)
from throughput import timed  # noqa: E402  (stdlib-only at import: the HF worker reads it too)


def ours_worker(batch_size: int, lengths: list, calls: int) -> dict:
    import keras
    import tensorflow as tf

    from albert.config import AlbertConfig
    from albert.tasks.classification.model import AlbertClassifier

    tf.config.threading.set_intra_op_parallelism_threads(2)
    keras.utils.set_random_seed(0)
    model = AlbertClassifier(AlbertConfig.preset("base_v2"), num_labels=2)
    step = tf.function(lambda features: model(features, training=False), reduce_retracing=True)
    best = {}
    for length in lengths:
        ids = tf.random.stateless_uniform([batch_size, length], (0, length), 5, 30000, tf.int32)
        features = {"input_ids": ids, "input_mask": tf.ones_like(ids), "segment_ids": tf.zeros_like(ids)}
        best[length] = timed([lambda: step(features).numpy()], calls)[0]
    return best


def hf_worker(batch_size: int, lengths: list, calls: int) -> dict:
    """Runs in .venv-peers (PyTorch, transformers; nothing of this package, no TensorFlow)."""
    import torch
    import transformers

    torch.set_num_threads(2)
    torch.manual_seed(0)
    model = transformers.AlbertForSequenceClassification(sides.hf_base_classifier_config(transformers)).eval()
    best = {}
    with torch.inference_mode():
        for length in lengths:
            ids = torch.randint(5, 30000, (batch_size, length), generator=torch.Generator().manual_seed(length))
            batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "token_type_ids": torch.zeros_like(ids)}
            best[length] = timed([lambda: model(**batch).logits.numpy()], calls)[0]
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--seq_lengths", default="8,16,24,64")
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--calls", type=int, default=3, help="timed calls a length in each turn")
    parser.add_argument("--peers_python", default=sides.PEERS_PYTHON)
    parser.add_argument("--worker", choices=("ours", "hf"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    lengths = [int(n) for n in args.seq_lengths.split(",")]
    if args.worker:
        if args.worker == "ours":
            from albert.ground.cpu import prefer_onednn

            prefer_onednn()
        worker = ours_worker if args.worker == "ours" else hf_worker
        print("RESULT " + json.dumps(worker(args.batch_size, lengths, args.calls)), flush=True)
        return
    sides.check_peers("forward_lengths.py", args.peers_python)
    from finetune import cpu_name

    print(f"# {cpu_name()}, {os.cpu_count()} CPUs, 2 threads each side; python benchmarks/forward_lengths.py "
          f"{' '.join(sys.argv[1:])}", flush=True)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", OMP_NUM_THREADS="2")
    best = {"ours": {}, "hf": {}}
    for _ in range(args.turns):
        for side, python in (("ours", sys.executable), ("hf", args.peers_python)):
            command = [python, os.path.abspath(__file__), "--worker", side, "--batch_size", str(args.batch_size),
                       "--seq_lengths", args.seq_lengths, "--calls", str(args.calls)]
            for length, seconds in sides.run_worker("forward_lengths.py", side, command, env).items():
                best[side][int(length)] = min(best[side].get(int(length), seconds), seconds)
    print("\n| B x T | ours ms | HF ms | ours / HF speed | ours positions/s | HF positions/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for length in lengths:
        ours, hf = best["ours"][length], best["hf"][length]
        positions = args.batch_size * length
        print(f"| {args.batch_size} x {length} | {ours * 1e3:,.0f} | {hf * 1e3:,.0f} | {hf / ours:.2f}x | "
              f"{positions / ours:,.0f} | {positions / hf:,.0f} |")


if __name__ == "__main__":
    main()
