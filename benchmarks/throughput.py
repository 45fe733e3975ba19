"""Training and inference throughput, peak memory and MFU of ALBERT on this machine.

For each sequence length, precision and XLA setting (each in its own process, so that peak memory is its own):
- train step: tokens/s of the pretrainer's forward + backward + LAMB update through the project's training loop
  (`Trainer.train_steps`, the compiled loop that run_pretraining.py runs), global-norm clipping included;
  best of `--steps` single steps (this machine is shared: its speed drifts by +-10 % between runs);
- inference: tokens/s of the encoder's forward pass in process, and of the same encoder exported as a TF Hub-style
  SavedModel and loaded back (its `serve` endpoint);
- peak RSS of the process;
- MFU: model FLOPs/s (counted as `python -m albert.info` counts them; training = 3x forward) divided by this
  machine's GEMM ceiling, measured in the same run as the best of several 2048x2048 matmuls in fp32 and bf16.

    python benchmarks/throughput.py                              # ALBERT-base, B=8, T=128 and 512, fp32/bf16, XLA off/on
    python benchmarks/throughput.py --seq_lengths 128 --precisions bf16 --xla on
"""

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def synthetic_batch(config, batch_size: int, seq_length: int, predictions: int, seed: int = 0) -> dict:
    import numpy as np

    rng = np.random.default_rng(seed)
    positions = np.sort(np.stack([rng.choice(np.arange(1, seq_length), predictions, replace=False)
                                  for _ in range(batch_size)]), axis=1)
    return {
        "input_ids": rng.integers(5, config.vocab_size, (batch_size, seq_length)).astype(np.int32),
        "input_mask": np.ones((batch_size, seq_length), np.int32),
        "segment_ids": (np.arange(seq_length)[None] >= seq_length // 2).repeat(batch_size, 0).astype(np.int32),
        "masked_lm_positions": positions.astype(np.int32),
        "masked_lm_ids": rng.integers(5, config.vocab_size, (batch_size, predictions)).astype(np.int32),
        "masked_lm_weights": np.ones((batch_size, predictions), np.float32),
        "next_sentence_labels": rng.integers(0, 2, (batch_size, 1)).astype(np.int32),
    }


def timed(fns: list, repeats: int) -> list:
    """Best-of-`repeats` seconds of each fn() (after one untimed call each), the functions taking turns so that a
    drift of the shared machine's speed does not favour one of them."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def worker(args) -> dict:
    """One (seq_length, precision, xla) measurement; returns a JSON-able dict."""
    import tensorflow as tf

    from albert import AlbertConfig, AlbertPretrainer
    from albert.distribute import create_strategy
    from albert.export import export_encoder
    from albert.info import forward_flops_per_token, train_flops_per_step
    from albert.optimization import create_optimizer
    from albert.tasks.pretraining import pretraining_loss
    from albert.training import LoopConfig, Trainer, set_precision

    config = (AlbertConfig.from_json_file(args.albert_config_file) if args.albert_config_file
              else AlbertConfig.preset(args.preset))
    b, t, xla = args.batch_size, args.seq_length, args.xla == "on"
    p = args.predictions or max(20, -(-15 * t // 100))
    set_precision(args.precision)
    tf.keras.utils.set_random_seed(0)
    strategy = create_strategy("one_device")
    with strategy.scope():
        model = AlbertPretrainer(config)
        optimizer = create_optimizer(1e-4, 1000, 10, "lamb", model=model)
    with tempfile.TemporaryDirectory() as tmp:
        loop = LoopConfig(output_dir=tmp, num_train_steps=1000, global_batch_size=b, jit_compile=xla)
        trainer = Trainer(strategy, model, optimizer, pretraining_loss, loop)
        batch = synthetic_batch(config, b, t, p)
        dataset = tf.data.Dataset.from_tensors(batch).repeat()
        iterator = trainer.local_iterator(lambda ctx, size: dataset, b)
        train_seconds = timed([lambda: trainer.train_steps(iterator, 1)], args.steps)[0]  # the first call compiles

        inputs = {k: tf.constant(batch[k]) for k in ("input_ids", "input_mask", "segment_ids")}
        forward = tf.function(lambda x: model.encoder(x, training=False)["sequence_output"], jit_compile=xla)
        calls = [lambda: forward(inputs).numpy()]
        if not args.skip_savedmodel:
            path = os.path.join(tmp, "encoder")
            export_encoder(model.encoder, path)
            loaded = tf.saved_model.load(path)
            hub_inputs = {"input_word_ids": inputs["input_ids"], "input_mask": inputs["input_mask"],
                          "input_type_ids": inputs["segment_ids"]}
            calls.append(lambda: loaded.serve(hub_inputs)["sequence_output"].numpy())
        infer_seconds, saved_seconds = (timed(calls, args.steps) + [None])[:2]
    tokens = b * t
    return {
        "seq_length": t, "precision": args.precision, "xla": args.xla, "predictions": p,
        "train_tokens_per_s": tokens / train_seconds,
        "train_flops_per_s": train_flops_per_step(config, b, t, p) / train_seconds,
        "infer_tokens_per_s": tokens / infer_seconds,
        "infer_flops_per_s": forward_flops_per_token(config, t)["encoder_total"] * tokens / infer_seconds,
        "saved_tokens_per_s": tokens / saved_seconds if saved_seconds else None,
        "saved_flops_per_s": (forward_flops_per_token(config, t)["encoder_total"] * tokens / saved_seconds
                              if saved_seconds else None),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def machine() -> str:
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = f"{names[0]} x {len(names)}" if names else cpu
    except OSError:
        pass
    return f"{platform.node() or 'host'}: {cpu}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="base_v2")
    parser.add_argument("--albert_config_file")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--seq_lengths", default="128,512")
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--xla", default="off,on", help="off, on or off,on")
    parser.add_argument("--steps", type=int, default=5, help="timed steps (and inference calls) per setting")
    parser.add_argument("--predictions", type=int, default=0, help="masked positions (default: 15%% of T, >= 20)")
    parser.add_argument("--skip_savedmodel", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seq_length", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--precision", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(args)))
        return 0

    import tensorflow as tf

    from albert.info import gemm_ceiling

    ceilings = {"fp32": gemm_ceiling("float32"), "bf16": gemm_ceiling("bfloat16")}
    gpus = tf.config.list_physical_devices("GPU")
    print(f"machine: {machine()}; TensorFlow {tf.__version__}; GPUs: {len(gpus)}")
    print(f"GEMM ceiling (best 2048^3 matmul): fp32 {ceilings['fp32'] / 1e9:.0f} GFLOP/s, "
          f"bf16 {ceilings['bf16'] / 1e9:.0f} GFLOP/s")
    model = args.albert_config_file or args.preset
    print(f"model {model}, batch {args.batch_size}\n")
    print("| T | precision | XLA | train tokens/s | train MFU | infer tokens/s | infer MFU | SavedModel tokens/s "
          "| SavedModel / in-process | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for t in [int(x) for x in args.seq_lengths.split(",")]:
        for precision in args.precisions.split(","):
            for xla in args.xla.split(","):
                cmd = [sys.executable, os.path.abspath(__file__), "--worker", f"--seq_length={t}",
                       f"--precision={precision}", f"--xla={xla}", f"--batch_size={args.batch_size}",
                       f"--steps={args.steps}", f"--predictions={args.predictions}", f"--preset={args.preset}"]
                if args.albert_config_file:
                    cmd.append(f"--albert_config_file={args.albert_config_file}")
                if args.skip_savedmodel:
                    cmd.append("--skip_savedmodel")
                env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
                lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
                if proc.returncode or not lines:
                    print(f"| {t} | {precision} | {xla} | failed: {proc.stderr.strip().splitlines()[-1][:120]} |")
                    continue
                r = json.loads(lines[-1][len("RESULT "):])
                ceiling = ceilings[precision]
                saved = (f"{r['saved_tokens_per_s']:,.0f} | {r['saved_tokens_per_s'] / r['infer_tokens_per_s']:.0%}"
                         if r["saved_tokens_per_s"] else "- | -")
                print(f"| {t} | {precision} | {xla} | {r['train_tokens_per_s']:,.0f} | "
                      f"{r['train_flops_per_s'] / ceiling:.0%} | {r['infer_tokens_per_s']:,.0f} | "
                      f"{r['infer_flops_per_s'] / ceiling:.0%} | {saved} | {r['peak_rss_mib']:,.0f} MiB |",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
