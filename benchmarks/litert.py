"""Batch-1 latency and file size of a SQuAD 1.1 model of ALBERT-base shape: the serving SavedModel (what
`run_squad.py --export_dir` writes) against its LiteRT model.tflite in float32, dynamic_int8 and float16.

Weights are random (the speed and size do not depend on their values); the inputs are one packed question of
`--seq_length` tokens. Each timing is the median of `--runs` calls after 3 warm-up calls, best of `--repeats` such
medians (this machine is shared). LiteRT runs in the ai-edge-litert interpreter with XNNPACK and
`--threads` threads; the SavedModel in TensorFlow with the same intra-op thread count.

    python benchmarks/litert.py                       # base_v2, T=128
    python benchmarks/litert.py --preset large_v2 --seq_length 384
"""

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def median_latency(call, runs: int, repeats: int) -> float:
    for _ in range(3):
        call()
    best = float("inf")
    for _ in range(repeats):
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        best = min(best, statistics.median(times))
    return best


def main():
    from albert.ground.cpu import prefer_onednn

    prefer_onednn()  # before TensorFlow loads: what the command lines run (albert.ground.cpu)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="base_v2")
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()

    import numpy as np
    import tensorflow as tf
    from ai_edge_litert.interpreter import Interpreter

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    from albert import AlbertConfig, AlbertSquadV1
    from albert.tasks.squad.serving import export_squad
    from albert.export.litert import export_tflite

    config = AlbertConfig.preset(args.preset)
    model = AlbertSquadV1(config)
    rng = np.random.default_rng(0)
    inputs = {"input_ids": rng.integers(5, config.vocab_size, (1, args.seq_length)).astype(np.int32),
              "input_mask": np.ones((1, args.seq_length), np.int32),
              "segment_ids": (np.arange(args.seq_length)[None] >= 24).astype(np.int32)}
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        saved = os.path.join(directory, "serving")
        export_squad(model, False, saved, args.seq_length)
        serve = tf.saved_model.load(saved).signatures["serving_default"]
        constants = {k: tf.constant(v) for k, v in inputs.items()}
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(saved) for f in files
                   if f != "model.tflite")
        reference = {k: v.numpy() for k, v in serve(**constants).items()}
        rows.append({"format": "SavedModel (TensorFlow)", "bytes": size,
                     "ms": 1000 * median_latency(lambda: serve(**constants), args.runs, args.repeats),
                     "max_abs_diff": 0.0})
        for quantization in ("none", "dynamic_int8", "float16"):
            path = os.path.join(directory, f"{quantization}.tflite")
            report = export_tflite(model, path, tuple(inputs), args.seq_length, ("start_logits", "end_logits"),
                                   quantization)
            runner = Interpreter(model_path=path, num_threads=args.threads).get_signature_runner("serve")
            got = runner(**inputs)
            rows.append({"format": f"model.tflite ({quantization})", "bytes": report["bytes"],
                         "ms": 1000 * median_latency(lambda: runner(**inputs), args.runs, args.repeats),
                         "max_abs_diff": float(max(np.abs(got[k] - reference[k]).max() for k in reference))})
    print(json.dumps({"preset": args.preset, "seq_length": args.seq_length, "batch": 1, "threads": args.threads,
                      "cpu": platform.processor() or platform.machine(), "rows": rows}, indent=1))
    print(f"\n| {args.preset}, T={args.seq_length}, batch 1 | size | latency | max abs diff vs SavedModel |")
    print("|---|---:|---:|---:|")
    for row in rows:
        print(f"| {row['format']} | {row['bytes'] / 2**20:.1f} MiB | {row['ms']:.1f} ms | {row['max_abs_diff']:.1e} |")


if __name__ == "__main__":
    main()
