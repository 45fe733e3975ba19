"""One table for a GPU machine (run through benchmarks/gpu.sh, first thing on any lent device, under 8 minutes):

- pretraining step (the project's loop: pretrainer forward + backward + LAMB, what run_pretraining.py runs) at
  ALBERT-base, T=128 (batch 32) and T=512 (batch 8), fp32 / bf16, XLA off / on: tokens/s, MFU (model FLOPs/s over
  the best large matmul measured in the same run in that dtype: the device's practical ceiling) and peak device
  memory;
- fine-tuning on real SST-2 (../shared/glue_real, the released 30k-clean model) at T=128, batch 32: examples/s with
  the default length buckets vs fixed padding (`--length_buckets=none`), fp32 and bf16;
- the device's name.

On a machine without a GPU the GPU rows are skipped, and it says so; the same code then runs once at a tiny config
on the CPU (rows marked `cpu-check`: they prove the script works, they are not figures), so CI keeps it working.

    bash benchmarks/gpu.sh                      # installs what it needs, then runs this
    python benchmarks/gpu.py --rows 128 --precisions bf16
"""

import argparse
import json
import os
import sys
import tempfile
import time

os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")  # peak memory on a CPU too (benchmarks/throughput.py)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import sides  # noqa: E402  (benchmarks/sides.py)
TINY = {"vocab_size": 30000, "embedding_size": 16, "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 512}


def device_name() -> tuple:
    """(the TensorFlow device to run on, its name in words)."""
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        from finetune import cpu_name

        return "CPU:0", f"{cpu_name()}, {os.cpu_count()} CPUs (no GPU)"
    details = tf.config.experimental.get_device_details(gpus[0])
    return "GPU:0", f"{details.get('device_name', 'GPU')} (compute capability {details.get('compute_capability')})"


def peak_mib(device: str) -> float:
    import tensorflow as tf

    return tf.config.experimental.get_memory_info(device)["peak"] / 2 ** 20


def pretraining_row(config, device: str, seq_length: int, batch_size: int, precision: str, xla: bool, steps: int,
                    ceiling: float) -> dict:
    import keras
    import tensorflow as tf
    from throughput import pretraining_trainer, timed

    from albert.model.sizing import default_predictions, train_flops_per_step

    keras.backend.clear_session()
    predictions = default_predictions(seq_length)
    with tempfile.TemporaryDirectory() as tmp:
        trainer, iterator, _, _ = pretraining_trainer(config, precision, batch_size, seq_length, predictions, tmp, xla)
        trainer.train_steps(iterator, 1)  # traces (and compiles with XLA)
        tf.config.experimental.reset_memory_stats(device)
        seconds = timed([lambda: trainer.train_steps(iterator, 1)], steps)[0]
        flops = train_flops_per_step(config, batch_size, seq_length, predictions) / seconds
        return {"job": "pretraining step", "T": seq_length, "batch": batch_size, "precision": precision,
                "xla": "on" if xla else "off", "rate": f"{batch_size * seq_length / seconds:,.0f} tokens/s",
                "mfu": f"{flops / ceiling:.1%}", "peak_mib": round(peak_mib(device))}


def fine_tuning_rows(config, device: str, precision: str, steps: int, record: str) -> list:
    import tensorflow as tf
    from finetune import train_rate

    from albert.train.setup import set_precision

    rows = []
    for scheme, buckets in (("buckets", "default"), ("fixed", "none")):
        set_precision(precision)
        tf.config.experimental.reset_memory_stats(device)
        with tempfile.TemporaryDirectory() as tmp:
            rate = train_rate(config, record, 128, 32, buckets, False, steps, tmp, device=f"/{device.lower()}")
        rows.append({"job": f"fine-tuning SST-2, {scheme}", "T": 128, "batch": 32, "precision": precision,
                     "xla": "off", "rate": f"{rate:,.1f} examples/s", "mfu": "", "peak_mib": round(peak_mib(device))})
    set_precision("fp32")
    return rows


def main(argv=None):
    from albert.ground.cpu import prefer_onednn

    prefer_onednn()  # before TensorFlow loads: what the command lines run (albert.ground.cpu)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default="128,512", help="pretraining sequence lengths")
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--xla", default="off,on")
    parser.add_argument("--steps", type=int, default=5, help="timed steps per row (best of)")
    sides.add_data_flags(parser)
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args(argv)
    for path, flag in ((args.glue_dir, "--glue_dir"), (args.spm_model_file, "--spm_model_file")):
        if not os.path.exists(path):
            sys.exit(f"gpu.py: error: {flag} {path} not found; pass the real GLUE directory and 30k-clean.model")
    started = time.perf_counter()
    from albert.config import AlbertConfig
    from albert.model.sizing import gemm_ceiling
    from albert.tasks.classification.features import cached_features
    from albert.tasks.classification.glue import get_task
    from albert.text.tokenization import FullTokenizer

    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")  # the retracing notices of the bucketed rows (one trace per bucket: expected)
    device, name = device_name()
    gpu = device.startswith("GPU")
    if gpu:
        config, steps, mode = AlbertConfig.preset("base_v2"), args.steps, "GPU"
        lengths = [int(t) for t in args.rows.split(",")]
    else:
        print("no GPU on this machine: the GPU rows are skipped. The rows below are the CPU check (a tiny config, "
              "T=128, 2 steps): they show the script runs, they are not figures.")
        config, steps, mode, lengths = AlbertConfig(**TINY), 2, "cpu-check", [128]
    precisions = args.precisions.split(",")
    ceilings = {p: gemm_ceiling("float32" if p == "fp32" else "bfloat16", 8192 if gpu else 512, 5) for p in precisions}
    rows = []
    for t in lengths:
        for precision in precisions:
            for xla in (x == "on" for x in args.xla.split(",")):
                rows.append(pretraining_row(config, device, t, 32 if t <= 128 else 8, precision, xla, steps,
                                            ceilings[precision]))
                print(json.dumps(rows[-1]), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        record, _ = cached_features(get_task("sst-2"), args.glue_dir, "train", FullTokenizer(None, True,
                                                                                         args.spm_model_file), 128, tmp)
        for precision in precisions:
            rows += fine_tuning_rows(config, device, precision, steps if gpu else 2, record)
            print(json.dumps(rows[-1]), flush=True)
    print(f"\n# {name}; {mode}; matmul ceilings: "
          + ", ".join(f"{p} {c / 1e9:,.0f} GFLOP/s" for p, c in ceilings.items())
          + f"; {time.perf_counter() - started:.0f} s; python benchmarks/gpu.py {' '.join(sys.argv[1:])}")
    print("| device | job | T | batch | precision | XLA | rate | MFU | peak MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {mode} | {row['job']} | {row['T']} | {row['batch']} | {row['precision']} | {row['xla']} | "
              f"{row['rate']} | {row['mfu']} | {row['peak_mib']:,} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": name, "mode": mode, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
