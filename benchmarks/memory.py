"""Peak training memory of ALBERT, measured, against `albert.model.sizing`'s estimate; with and without --recompute.

Each setting runs in its own process: the pretraining model (MLM + SOP) and a LAMB optimizer are built, one training
step traces the loop, then the timed steps run. Measured = TensorFlow's peak tensor memory over the timed steps
(`tf.config.experimental.get_memory_info`, weights and optimizer slots included: what a GPU's memory must hold);
the process's peak RSS is shown beside it (TensorFlow's runtime and the traced graph add to it). The estimate is
`albert.model.sizing.training_memory` (weights, gradients, optimizer slots, activations, MLM logits).

    python benchmarks/memory.py                                   # base, T=512, batch 2 and 8, recompute off/on
    python benchmarks/memory.py --batch_sizes 2,4 --seq_length 256 --precisions fp32,bf16
    python benchmarks/memory.py --xla on --batch_sizes 8          # the same under --jit_compile
"""

import argparse
import json
import os
import resource
import sys
import tempfile
import time

# TensorFlow keeps CPU allocator statistics (get_memory_info) only with its BFC allocator, which it picks by
# itself only where oneDNN is on (Intel CPUs): asked for on every CPU, before TensorFlow loads.
os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def worker(args) -> dict:
    import tensorflow as tf

    from albert import AlbertConfig
    from albert.model.sizing import default_predictions
    from throughput import pretraining_trainer

    config = AlbertConfig.preset(args.preset)
    b, t = args.batch_size, args.seq_length
    p = default_predictions(t)
    with tempfile.TemporaryDirectory() as tmp:
        trainer, iterator, _, _ = pretraining_trainer(config, args.precision, b, t, p, tmp,
                                                      jit_compile=args.xla == "on", recompute=args.recompute == "on")
        trainer.train_steps(iterator, 1)  # traces (its peak, graph building included, is the process peak)
        tf.config.experimental.reset_memory_stats("CPU:0")
        seconds = float("inf")
        for _ in range(args.steps):
            start = time.perf_counter()
            trainer.train_steps(iterator, 1)
            seconds = min(seconds, time.perf_counter() - start)
    tensors = tf.config.experimental.get_memory_info("CPU:0")["peak"] / 2 ** 20
    process_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"measured_mib": tensors, "process_peak_mib": process_peak, "step_s": seconds,
            "predictions": p}


def main(argv=None):
    from albert.ground.cpu import prefer_onednn

    prefer_onednn()  # before TensorFlow loads: what the command lines run (albert.ground.cpu)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="base_v2")
    parser.add_argument("--seq_length", type=int, default=512)
    parser.add_argument("--batch_sizes", default="2,8")
    parser.add_argument("--precisions", default="fp32")
    parser.add_argument("--recompute", default="off,on", help="off, on or off,on")
    parser.add_argument("--steps", type=int, default=2, help="timed steps per setting (after one that traces)")
    parser.add_argument("--xla", choices=("off", "on"), default="off",
                        help="--jit_compile (XLA's buffers come from TensorFlow's allocator: counted too)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--batch_size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--precision", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(args)))
        return 0

    from albert.config import AlbertConfig
    from albert.model.sizing import training_memory
    from throughput import worker_result

    config = AlbertConfig.preset(args.preset)
    print(f"{args.preset}, T={args.seq_length}, XLA {args.xla}; measured = TensorFlow's peak tensor memory over the "
          "timed steps\n")
    print("| batch | precision | recompute | estimate | measured | estimate / measured | process peak RSS | step s "
          "| step time vs off |")
    print("|---|---|---|---|---|---|---|---|---|")
    for b in [int(x) for x in args.batch_sizes.split(",")]:
        for precision in args.precisions.split(","):
            base_step = None
            for recompute in args.recompute.split(","):
                cmd = [sys.executable, os.path.abspath(__file__), "--worker", f"--preset={args.preset}",
                       f"--seq_length={args.seq_length}", f"--batch_size={b}", f"--precision={precision}",
                       f"--recompute={recompute}", f"--steps={args.steps}", f"--xla={args.xla}"]
                r = worker_result(cmd)
                if "error" in r:
                    print(f"| {b} | {precision} | {recompute} | failed: {r['error']} |")
                    continue
                estimate = training_memory(config, b, args.seq_length, precision, recompute == "on",
                                           r["predictions"])["total"] / 2 ** 20
                base_step = r["step_s"] if recompute == "off" else base_step
                slower = f"{r['step_s'] / base_step - 1:+.0%}" if base_step and recompute == "on" else "-"
                print(f"| {b} | {precision} | {recompute} | {estimate:,.0f} MiB | {r['measured_mib']:,.0f} MiB | "
                      f"{estimate / r['measured_mib']:.2f} | {r['process_peak_mib']:,.0f} MiB | {r['step_s']:.2f} | "
                      f"{slower} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
