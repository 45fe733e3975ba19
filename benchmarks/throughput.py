"""Training and inference throughput, peak memory and MFU of ALBERT on this machine, beside keras-hub (and Hugging
Face transformers for inference, when a Python with PyTorch is given).

Every measurement runs in its own process (its peak RSS is its own), best of `--steps` calls, the compared functions
taking turns so that a drift of this shared machine's speed favours none:
- pretrain: the pretrainer's forward + backward + LAMB update through the project's training loop
  (`Trainer.train_steps`, what run_pretraining.py runs), global-norm clipping included; with and without --recompute;
- encoder train step, ours and keras-hub's `AlbertBackbone` built from the same config, in one process and timed in
  turns: forward + backward + AdamW on mean(sequence_output^2), the same code around both (keras-hub has no
  pretraining loop to compare with);
- inference: the encoder's forward pass in process (ours, keras-hub), ours exported as a TF Hub-style SavedModel
  and loaded back, and HF `AlbertModel` (PyTorch, `--hf_python`, bf16 by casting the model);
- MFU: model FLOPs/s (`python -m albert.info`'s count; training = 3x forward) over two ceilings measured in the same
  run: the best 2048^3 matmul, and the model's own GEMMs (QKV/output/FFN products at B*T rows, the attention's
  batched products, forward and backward shapes) timed one by one and weighted by their count.
The CPU model, its AMX / AVX-512 bf16 flags and the oneDNN kernel TensorFlow picks for a bf16 matmul are printed.

    pip install -r benchmarks/requirements.txt                    # keras-hub, for the comparison
    python benchmarks/throughput.py                               # base, B=8, T=128 and 512, fp32/bf16, XLA off/on
    python benchmarks/throughput.py --seq_lengths 128 --precisions bf16 --xla on --hf_python .venv-ref/bin/python
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
import warnings

# TensorFlow keeps CPU allocator statistics (get_memory_info) only with its BFC allocator, which it picks by
# itself only where oneDNN is on (Intel CPUs): asked for on every CPU, before TensorFlow loads.
os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")

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
    """Best-of-`repeats` seconds of each fn() (after one untimed call each), the functions taking turns."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ------------------------------------------------------------------------------------------------------ ceilings
def model_gemms(config, batch_size: int, seq_length: int) -> list:
    """(count per training step, batch, m, k, n) of the encoder's matrix products, forward and backward: for each
    forward product X[m,k] W[k,n], the backward's dX = dY[m,n] W^T[n,k] and dW = X^T[k,m] dY[m,n]."""
    c = config
    rows, h, i, t = batch_size * seq_length, c.hidden_size, c.intermediate_size, seq_length
    heads, d = c.num_attention_heads, c.head_size
    applications = c.num_hidden_layers * c.inner_group_num
    forward = [(4, 1, rows, h, h), (1, 1, rows, h, i), (1, 1, rows, i, h),  # q, k, v, output; FFN in, out
               (1, batch_size * heads, t, d, t), (1, batch_size * heads, t, t, d)]  # scores, context
    shapes = []
    for count, batch, m, k, n in forward:
        shapes += [(count * applications, batch, m, k, n), (count * applications, batch, m, n, k),
                   (count * applications, batch, k, m, n)]
    return shapes


def shape_ceiling(config, batch_size: int, seq_length: int, dtype_name: str, repeats: int = 5) -> float:
    """FLOP/s of the model's own GEMM mix: each distinct product timed (best of `repeats`), weighted by its count."""
    import tensorflow as tf

    dtype = tf.as_dtype(dtype_name)
    total_flops = total_seconds = 0.0
    matmul = tf.function(tf.linalg.matmul)
    for count, batch, m, k, n in model_gemms(config, batch_size, seq_length):
        a = tf.cast(tf.random.normal((batch, m, k)), dtype)
        b = tf.cast(tf.random.normal((batch, k, n)), dtype)
        seconds = timed([lambda: matmul(a, b).numpy()], repeats)[0]
        total_flops += count * 2.0 * batch * m * k * n
        total_seconds += count * seconds
    return total_flops / total_seconds


def cpu_evidence() -> str:
    """The CPU model, its matrix-extension flags and the oneDNN kernel TensorFlow runs a bf16 matmul with."""
    flags, model = set(), "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    isa = [f for f in ("amx_bf16", "amx_tile", "amx_int8", "avx512_bf16", "avx512f") if f in flags]
    probe = ("import tensorflow as tf\n"
             "a = tf.cast(tf.random.normal((256, 768)), tf.bfloat16)\n"
             "tf.function(tf.linalg.matmul)(a, tf.transpose(a)).numpy()\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, ONEDNN_VERBOSE="1", TF_CPP_MIN_LOG_LEVEL="2"))
    kernels = sorted({line.split(",")[6] for line in proc.stdout.splitlines() + proc.stderr.splitlines()
                      if line.startswith("onednn_verbose") and ",exec,cpu," in line and "matmul" in line})
    amx = "AMX used" if any("amx" in k for k in kernels) else "AMX not used"
    return (f"CPU {model}; flags: {' '.join(isa) or 'none of amx/avx512'}; oneDNN bf16 matmul kernel: "
            f"{', '.join(kernels) or 'none reported'} ({amx})")


# ------------------------------------------------------------------------------------------------------ workers
def pretraining_trainer(config, precision: str, batch_size: int, seq_length: int, predictions: int, output_dir: str,
                        jit_compile: bool = False, recompute: bool = False):
    """The pretrainer with LAMB in the project's training loop, on one synthetic batch repeated (seed 0):
    (trainer, its iterator, the model, the batch). benchmarks/memory.py uses it too."""
    import tensorflow as tf

    from albert import AlbertPretrainer
    from albert.train.distribute import create_strategy
    from albert.train.optimizers import create_optimizer
    from albert.tasks.pretraining.objective import pretraining_loss
    from albert.train.loop import Trainer
    from albert.train.settings import LoopConfig
    from albert.train.setup import set_precision

    set_precision(precision)
    tf.keras.utils.set_random_seed(0)
    strategy = create_strategy("one_device")
    with strategy.scope():
        model = AlbertPretrainer(config)
        optimizer = create_optimizer(1e-4, 1000, 10, "lamb", model=model)
    loop = LoopConfig(output_dir=output_dir, num_train_steps=1000, global_batch_size=batch_size,
                      jit_compile=jit_compile, recompute=recompute)
    trainer = Trainer(strategy, model, optimizer, pretraining_loss, loop)
    batch = synthetic_batch(config, batch_size, seq_length, predictions)
    dataset = tf.data.Dataset.from_tensors(batch).repeat()
    return trainer, trainer.feed.local_iterator(lambda ctx, size: dataset, batch_size), model, batch


def pretrain_worker(args) -> dict:
    """The project's pretraining step (+ inference and SavedModel when asked)."""
    import tensorflow as tf

    from albert.export.hub import export_encoder
    from albert.model.sizing import default_predictions, forward_flops_per_token, train_flops_per_step

    config = load_config(args)
    b, t, xla = args.batch_size, args.seq_length, args.xla == "on"
    p = args.predictions or default_predictions(t)
    result = {"predictions": p}
    with tempfile.TemporaryDirectory() as tmp:
        trainer, iterator, model, batch = pretraining_trainer(config, args.precision, b, t, p, tmp, xla,
                                                              args.recompute)
        trainer.train_steps(iterator, 1)  # traces and compiles
        tf.config.experimental.reset_memory_stats("CPU:0")
        train_seconds = timed([lambda: trainer.train_steps(iterator, 1)], args.steps)[0]
        result["train_peak_tensor_mib"] = tf.config.experimental.get_memory_info("CPU:0")["peak"] / 2 ** 20
        result["train_tokens_per_s"] = b * t / train_seconds
        result["train_flops_per_s"] = train_flops_per_step(config, b, t, p) / train_seconds
        result["train_peak_rss_mib"] = peak_rss_mib()
        if args.inference:
            inputs = {k: tf.constant(batch[k]) for k in ("input_ids", "input_mask", "segment_ids")}
            forward = tf.function(lambda x: model.encoder(x, training=False)["sequence_output"], jit_compile=xla)
            path = os.path.join(tmp, "encoder")
            export_encoder(model.encoder, path)
            loaded = tf.saved_model.load(path)
            hub_inputs = {"input_word_ids": inputs["input_ids"], "input_mask": inputs["input_mask"],
                          "input_type_ids": inputs["segment_ids"]}
            infer, saved = timed([lambda: forward(inputs).numpy(),
                                  lambda: loaded.serve(hub_inputs)["sequence_output"].numpy()], args.steps)
            flops = forward_flops_per_token(config, t)["encoder_total"] * b * t
            result.update(infer_tokens_per_s=b * t / infer, infer_flops_per_s=flops / infer,
                          saved_tokens_per_s=b * t / saved, saved_flops_per_s=flops / saved)
    return result


def encoder_steps(config, precision: str, batch_size: int, seq_length: int, impls=("ours",), xla: bool = False,
                  seed: int = 0) -> dict:
    """{implementation: (train, forward)}: zero-argument calls of one encoder train step (forward + backward + AdamW
    on mean(sequence_output^2)) and one forward pass, for ours and (in `impls`) keras-hub's `AlbertBackbone` built
    from the same config, on one synthetic batch. benchmarks/profile_step.py uses it too."""
    import keras
    import tensorflow as tf

    from albert import AlbertEncoder
    from albert.train.setup import set_precision

    b, t = batch_size, seq_length
    # the loss uses sequence_output only: Keras warns that the pooler gets no gradient
    warnings.filterwarnings("ignore", message="Gradients do not exist")
    set_precision(precision)
    keras.utils.set_random_seed(seed)
    batch = synthetic_batch(config, b, t, 1, seed)
    models = {"ours": (AlbertEncoder(config), {k: tf.constant(batch[k])
                                               for k in ("input_ids", "input_mask", "segment_ids")})}
    if "keras_hub" in impls:
        import keras_hub

        hub = keras_hub.models.AlbertBackbone(
            vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
            num_heads=config.num_attention_heads, embedding_dim=config.embedding_size, hidden_dim=config.hidden_size,
            intermediate_dim=config.intermediate_size, num_groups=config.num_hidden_groups,
            num_inner_repetitions=config.inner_group_num, dropout=config.hidden_dropout_prob,
            max_sequence_length=config.max_position_embeddings, num_segments=config.type_vocab_size)
        models["keras_hub"] = (hub, {"token_ids": tf.constant(batch["input_ids"]),
                                     "segment_ids": tf.constant(batch["segment_ids"]),
                                     "padding_mask": tf.constant(batch["input_mask"])})
    steps = {}
    for name, (model, inputs) in models.items():
        optimizer = keras.optimizers.AdamW(1e-5)
        optimizer.build(model.trainable_variables)

        def train_step(x, model=model, optimizer=optimizer):
            with tf.GradientTape() as tape:
                out = model(x, training=True)["sequence_output"]
                loss = tf.reduce_mean(tf.square(tf.cast(out, tf.float32)))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply(grads, model.trainable_variables)
            return loss

        train = tf.function(train_step, jit_compile=xla)
        forward = tf.function(lambda x, model=model: model(x, training=False)["sequence_output"], jit_compile=xla)
        steps[name] = (lambda train=train, inputs=inputs: train(inputs).numpy(),
                       lambda forward=forward, inputs=inputs: forward(inputs).numpy())
    return steps


def encoder_worker(args) -> dict:
    """Encoder train step and forward pass of ours and, when installed, keras-hub's backbone built from the same
    config: in one process, timed in turns (a drift of the machine favours neither)."""
    b, t = args.batch_size, args.seq_length
    impls = ("ours", "keras_hub") if args.impl == "keras_hub" else ("ours",)
    steps = encoder_steps(load_config(args), args.precision, b, t, impls, args.xla == "on")
    seconds = timed([call for pair in steps.values() for call in pair], args.steps)
    result = {"peak_rss_mib": peak_rss_mib()}
    for i, name in enumerate(steps):
        result[f"{name}_train_tokens_per_s"] = b * t / seconds[2 * i]
        result[f"{name}_infer_tokens_per_s"] = b * t / seconds[2 * i + 1]
    return result


HF_WORKER = r"""
import json, sys, time
import torch
from transformers import AlbertConfig, AlbertModel
c, b, t, precision, steps = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
torch.set_num_threads(int(sys.argv[6]))
torch.manual_seed(0)
model = AlbertModel(AlbertConfig(vocab_size=c["vocab_size"], embedding_size=c["embedding_size"],
    hidden_size=c["hidden_size"], num_hidden_layers=c["num_hidden_layers"], num_hidden_groups=c["num_hidden_groups"],
    num_attention_heads=c["num_attention_heads"], intermediate_size=c["intermediate_size"],
    inner_group_num=c["inner_group_num"], hidden_act="gelu_new", max_position_embeddings=c["max_position_embeddings"],
    type_vocab_size=c["type_vocab_size"], hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)).eval()
if precision == "bf16":
    model = model.to(torch.bfloat16)
ids = torch.randint(5, c["vocab_size"], (b, t))
mask, types = torch.ones_like(ids), (torch.arange(t)[None] >= t // 2).long().repeat(b, 1)
best = float("inf")
with torch.inference_mode():
    for i in range(steps + 1):
        start = time.perf_counter()
        model(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state.float().numpy()
        best = min(best, time.perf_counter() - start) if i else best
print("RESULT " + json.dumps({"infer_tokens_per_s": b * t / best, "torch": torch.__version__}))
"""


def load_config(args):
    from albert import AlbertConfig

    return (AlbertConfig.from_json_file(args.albert_config_file) if args.albert_config_file
            else AlbertConfig.preset(args.preset))


# --------------------------------------------------------------------------------------------------------- main
def run_worker(args, kind: str, t: int, precision: str, xla: str, *extra) -> dict:
    """One measurement in a fresh process: its RESULT dict, or {"error": the last line of its stderr}."""
    if kind == "hf":
        config = load_config(args)
        fields = ("vocab_size", "embedding_size", "hidden_size", "num_hidden_layers", "num_hidden_groups",
                  "num_attention_heads", "intermediate_size", "inner_group_num", "max_position_embeddings",
                  "type_vocab_size")
        cmd = [args.hf_python, "-c", HF_WORKER, json.dumps({f: getattr(config, f) for f in fields}),
               str(args.batch_size), str(t), precision, str(args.steps), str(os.cpu_count())]
    else:
        cmd = [sys.executable, os.path.abspath(__file__), f"--worker={kind}", f"--seq_length={t}",
               f"--precision={precision}", f"--xla={xla}", f"--batch_size={args.batch_size}", f"--steps={args.steps}",
               f"--predictions={args.predictions}", f"--preset={args.preset}", *extra]
        if args.albert_config_file:
            cmd.append(f"--albert_config_file={args.albert_config_file}")
    return worker_result(cmd)


def worker_result(cmd: list) -> dict:
    """Run a benchmark worker process: the dict of its `RESULT <json>` line, or {"error": its last stderr line}."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode or not lines:
        return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:120]}
    return json.loads(lines[-1][len("RESULT "):])


def rate(result: dict, key: str, fmt: str = "{:,.0f}") -> str:
    return fmt.format(result[key]) if key in result else result.get("error", "-")


def main(argv=None):
    from albert.ground.cpu import prefer_onednn

    prefer_onednn()  # before TensorFlow loads: what the command lines run (albert.ground.cpu)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="base_v2")
    parser.add_argument("--albert_config_file")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--seq_lengths", default="128,512")
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--xla", default="off,on", help="off, on or off,on")
    parser.add_argument("--steps", type=int, default=3, help="timed steps (and inference calls) per setting")
    parser.add_argument("--predictions", type=int, default=0, help="masked positions (default: 15%% of T, >= 20)")
    parser.add_argument("--hf_python", help="a Python with torch + transformers (tools/requirements-reference.txt) "
                        "for the HF inference column")
    parser.add_argument("--skip_peers", action="store_true", help="no keras-hub / HF columns")
    parser.add_argument("--worker", choices=("pretrain", "encoder"), help=argparse.SUPPRESS)
    parser.add_argument("--impl", choices=("ours", "keras_hub"), default="ours", help=argparse.SUPPRESS)
    parser.add_argument("--recompute", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--inference", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seq_length", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--precision", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(pretrain_worker(args) if args.worker == "pretrain" else encoder_worker(args)))
        return 0

    import tensorflow as tf

    from albert.model.sizing import gemm_ceiling

    config = load_config(args)
    peers = not args.skip_peers
    if peers:
        try:
            import keras_hub  # noqa: F401
        except ImportError:
            print("keras-hub is not installed (pip install -r benchmarks/requirements.txt): its columns are skipped")
            peers = False
    print(f"machine: {platform.node() or 'host'}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}, "
          f"TensorFlow {tf.__version__}, GPUs: {len(tf.config.list_physical_devices('GPU'))}")
    print(cpu_evidence())
    square = {p: gemm_ceiling({"fp32": "float32", "bf16": "bfloat16"}[p]) for p in args.precisions.split(",")}
    print("GEMM ceilings (GFLOP/s): " + "; ".join(f"{p} 2048^3 {v / 1e9:,.0f}" for p, v in square.items()))
    print(f"model {args.albert_config_file or args.preset}, batch {args.batch_size}; tokens/s, best of {args.steps}\n")
    print("| T | precision | XLA | model-shape ceiling GFLOP/s | pretrain step | MFU vs 2048^3 / model shapes "
          "| encoder train: ours | keras-hub | ours / keras-hub | inference: ours | SavedModel | keras-hub "
          "| peak RSS (pretrain) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    measured = {}
    for t in [int(x) for x in args.seq_lengths.split(",")]:
        for precision in args.precisions.split(","):
            shapes = shape_ceiling(config, args.batch_size, t, {"fp32": "float32", "bf16": "bfloat16"}[precision])
            for xla in args.xla.split(","):
                pre = measured[(t, precision, xla)] = run_worker(args, "pretrain", t, precision, xla, "--inference")
                enc = run_worker(args, "encoder", t, precision, xla, f"--impl={'keras_hub' if peers else 'ours'}")
                mfu = (f"{pre['train_flops_per_s'] / square[precision]:.0%} / {pre['train_flops_per_s'] / shapes:.0%}"
                       if "train_flops_per_s" in pre else "-")
                ratio = (f"{enc['ours_train_tokens_per_s'] / enc['keras_hub_train_tokens_per_s']:.2f}x"
                         if "keras_hub_train_tokens_per_s" in enc else "-")
                print(f"| {t} | {precision} | {xla} | {shapes / 1e9:,.1f} | {rate(pre, 'train_tokens_per_s')} | {mfu} "
                      f"| {rate(enc, 'ours_train_tokens_per_s')} | {rate(enc, 'keras_hub_train_tokens_per_s')} "
                      f"| {ratio} | {rate(enc, 'ours_infer_tokens_per_s')} | {rate(pre, 'saved_tokens_per_s')} "
                      f"| {rate(enc, 'keras_hub_infer_tokens_per_s')} "
                      f"| {rate(pre, 'train_peak_rss_mib', '{:,.0f} MiB')} |", flush=True)
    print("\n--recompute (pretrain step, XLA off): tokens/s and peak memory beside the same step without it (peak "
          "tensor memory of the steps, TensorFlow's count; peak RSS of the process)\n")
    print("| T | precision | tokens/s without | with --recompute | speed | peak tensors without | with | cut "
          "| peak RSS without | with |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for t in [int(x) for x in args.seq_lengths.split(",")]:
        for precision in args.precisions.split(","):
            plain = run_worker(args, "pretrain", t, precision, "off")
            again = run_worker(args, "pretrain", t, precision, "off", "--recompute")
            if "error" in plain or "error" in again:
                print(f"| {t} | {precision} | {rate(plain, 'train_tokens_per_s')} | "
                      f"{rate(again, 'train_tokens_per_s')} |")
                continue
            print(f"| {t} | {precision} | {plain['train_tokens_per_s']:,.0f} | {again['train_tokens_per_s']:,.0f} | "
                  f"{again['train_tokens_per_s'] / plain['train_tokens_per_s'] - 1:+.0%} | "
                  f"{plain['train_peak_tensor_mib']:,.0f} MiB | {again['train_peak_tensor_mib']:,.0f} MiB | "
                  f"{plain['train_peak_tensor_mib'] / max(again['train_peak_tensor_mib'], 1e-9):.1f}x | "
                  f"{plain['train_peak_rss_mib']:,.0f} MiB | {again['train_peak_rss_mib']:,.0f} MiB |", flush=True)
    if args.hf_python:
        print("\nInference beside Hugging Face transformers (PyTorch, eager, inference_mode; "
              f"{args.hf_python}), XLA off for ours\n")
        print("| T | precision | ours in process | ours SavedModel | HF transformers | SavedModel / HF |")
        print("|---|---|---|---|---|---|")
        for t in [int(x) for x in args.seq_lengths.split(",")]:
            for precision in args.precisions.split(","):
                pre = measured.get((t, precision, "off")) or run_worker(args, "pretrain", t, precision, "off",
                                                                         "--inference")
                hf = run_worker(args, "hf", t, precision, "off")
                ratio = (f"{pre['saved_tokens_per_s'] / hf['infer_tokens_per_s']:.2f}x"
                         if "saved_tokens_per_s" in pre and "infer_tokens_per_s" in hf else "-")
                print(f"| {t} | {precision} | {rate(pre, 'infer_tokens_per_s')} | {rate(pre, 'saved_tokens_per_s')} "
                      f"| {rate(hf, 'infer_tokens_per_s')} | {ratio} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
