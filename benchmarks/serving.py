"""Serving side by side, in ONE run on this machine: one short query at batch 1 (p50 / p99 latency over the 872 real
SST-2 dev sentences, in order) and a 1,000-sentence batch job (sentences/s), for

- ours: the raw-string serving SavedModel of `run_classifier.py --export_dir` (tokenizes in the graph);
  `model.tflite` float32 and dynamic int8 (LiteRT, XNNPACK); `model.onnx` float32 and dynamic int8 (ONNX Runtime,
  `--onnx_export`) — the files on ids from `FullTokenizer`;
- the peers, in their own environment (.venv-peers, benchmarks/requirements-peers.txt, no TensorFlow): Hugging Face
  transformers `AlbertForSequenceClassification` eager (SDPA attention; fp32, and bf16 autocast), and ONNX Runtime
  on that model exported with `torch.onnx.export` (fp32; dynamic int8 by `onnxruntime.quantization`'s
  `quant_pre_process` then `quantize_dynamic`, ONNX Runtime's recipe), ids from HF's `AlbertTokenizer`.

One ALBERT-base-shaped classifier (random weights, seed 0: time does not depend on them, but biases and LayerNorm
betas are nonzero as a trained model's, so no converter can fold an addition away; the same weights on both sides,
written as a Hugging Face directory by albert.tasks.conversion), the released 30k-clean SentencePiece model, 2
threads everywhere. Every path's batch job runs the same batches: the 1,000 first SST-2 train sentences
sorted by length, 32 a batch, each padded to its longest (the SavedModel pads to its length bucket itself).
Tokenization is included in every figure and reported apart (p50 per query; seconds for the batch job). Each side
runs in its own process, ours then the peers', twice, and each figure is the better of the two. The script prints
the table with the ratios and the positions each tokenizer made the models compute on (HF's gives fewer: it drops
the original's lone `▁` before separated punctuation), and draws docs/serving.png.

    pip install -r benchmarks/requirements.txt && bash benchmarks/peers.sh    # once: .venv-peers
    python benchmarks/serving.py                                              # ~40 minutes on 2 CPUs (AVX2)
    python benchmarks/serving.py --queries 100 --batch_sentences 200          # a quick look
"""

import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import sides  # noqa: E402  (benchmarks/sides.py, beside this script)
THREADS = 2
BATCH = 32


def stats(seconds: list) -> dict:
    import numpy as np

    values = np.asarray(seconds) * 1e3
    return {"p50_ms": float(np.percentile(values, 50)), "p99_ms": float(np.percentile(values, 99))}


def length_batches(spm: str, sentences: list) -> list:
    """The batch job's batches, the same for every path: sentence indices sorted by FullTokenizer's token count,
    BATCH a batch."""
    from albert.text.tokenization import FullTokenizer

    tokenizer = FullTokenizer(None, True, spm)
    order = sorted(range(len(sentences)), key=lambda i: len(tokenizer.tokenize(sentences[i])))
    return [order[i:i + BATCH] for i in range(0, len(order), BATCH)]


def padded(rows: list, dtype) -> dict:
    import numpy as np

    length = max(len(r) for r in rows)
    ids = np.zeros((len(rows), length), dtype)
    mask = np.zeros((len(rows), length), dtype)
    for i, row in enumerate(rows):
        ids[i, :len(row)], mask[i, :len(row)] = row, 1
    return {"ids": ids, "mask": mask, "types": np.zeros_like(ids)}


def positions(features) -> int:
    """The positions a model computes on for `features` (padded ids; 0 for raw strings: counted in the graph)."""
    return int(features["ids"].size) if isinstance(features, dict) else 0


def measure(name: str, tokenize, run, queries: list, sentences: list, batches: list) -> dict:
    """Latency per query (tokenize + run at batch 1) over `queries` in order, and the batch job's sentences/s
    (tokenize + run over length-sorted batches); tokenization timed apart too; the positions each computed on."""
    run(tokenize([queries[0]]))  # first call: allocation, tracing
    latency, tokenizing, query_positions = [], [], 0
    for query in queries:
        start = time.perf_counter()
        features = tokenize([query])
        middle = time.perf_counter()
        run(features)
        latency.append(time.perf_counter() - start)
        tokenizing.append(middle - start)
        query_positions += positions(features)
    start = time.perf_counter()
    tokenized = [tokenize([sentences[i] for i in batch]) for batch in batches]
    tokenize_seconds = time.perf_counter() - start
    for features in tokenized:
        run(features)
    seconds = time.perf_counter() - start
    return {"path": name, **stats(latency), "tokenize_p50_ms": stats(tokenizing)["p50_ms"],
            "batch_per_s": len(sentences) / seconds, "batch_tokenize_s": tokenize_seconds,
            "positions": [query_positions, sum(positions(f) for f in tokenized)]}


# ---------------------------------------------------------------------------------------------------- our side
def ours_worker(work: str, queries: list, sentences: list, batches: list) -> list:
    import numpy as np
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the SentencePiece op the SavedModel tokenizes with)
    from ai_edge_litert.interpreter import Interpreter

    from albert.export.onnx import onnx_runner
    from albert.text.tokenization import FullTokenizer

    tokenizer = FullTokenizer(None, True, os.path.join(work, "30k-clean.model"))

    def ids(texts):
        rows = [tokenizer.convert_tokens_to_ids(["[CLS]", *tokenizer.tokenize(t)[:126], "[SEP]"]) for t in texts]
        return padded(rows, np.int32)

    served = tf.saved_model.load(os.path.join(work, "serving")).signatures["serving_default"]
    results = [measure("ours: SavedModel on raw strings (tokenizes in the graph)", lambda texts: tf.constant(texts),
                       lambda texts: served(text_a=texts)["logits"].numpy(), queries, sentences, batches)]
    for label, file in (("float32", "model.tflite"), ("dynamic int8", "model.int8.tflite")):
        runner = Interpreter(os.path.join(work, "serving", file), num_threads=THREADS).get_signature_runner("serve")
        results.append(measure(f"ours: model.tflite {label} (LiteRT)", ids, lambda f: runner(
            input_ids=f["ids"], input_mask=f["mask"], segment_ids=f["types"])["logits"], queries, sentences, batches))
    for label, file in (("float32", "model.onnx"), ("dynamic int8", "model.int8.onnx")):
        run = onnx_runner(os.path.join(work, "serving", file), THREADS)
        results.append(measure(f"ours: model.onnx {label} (ONNX Runtime)", ids, lambda f: run(
            {"input_ids": f["ids"], "input_mask": f["mask"], "segment_ids": f["types"]})["logits"], queries,
            sentences, batches))
    return results


def prepare(work: str, spm: str, preset: str):
    """The classifier's exports (SavedModel, LiteRT and ONNX, float32 and int8) and its Hugging Face directory."""
    import shutil

    import keras

    from albert.config import AlbertConfig
    from albert.tasks.conversion import write_huggingface
    from albert.export.litert import export_tflite
    from albert.export.onnx import export_onnx
    from albert.tasks.classification.serving import export_classifier
    from albert.tasks.classification.model import AlbertClassifier

    import numpy as np

    keras.utils.set_random_seed(0)
    model = AlbertClassifier(AlbertConfig.preset(preset), num_labels=2)
    model({k: np.zeros([1, 8], np.int32) for k in ("input_ids", "input_mask", "segment_ids")})
    rng = np.random.default_rng(0)
    for weight in model.weights:  # nonzero, as a trained model's: zeros would let a converter fold the additions away
        if weight.path.endswith(("bias", "beta")):
            weight.assign(rng.normal(0, 0.02, weight.shape).astype("float32"))
    shutil.copyfile(spm, os.path.join(work, "30k-clean.model"))
    serving = os.path.join(work, "serving")
    export_classifier(model, spm, True, ["0", "1"], False, 128, serving)
    names = ("input_ids", "input_mask", "segment_ids")
    export_tflite(model, os.path.join(serving, "model.tflite"), names, None)
    export_tflite(model, os.path.join(serving, "model.int8.tflite"), names, None, quantization="dynamic_int8")
    export_onnx(model, os.path.join(serving, "model.onnx"), names)
    export_onnx(model, os.path.join(serving, "model.int8.onnx"), names, quantization="dynamic_int8")
    os.makedirs(os.path.join(work, "hf"))
    write_huggingface(model, {"format": "release", "spm_model": spm}, os.path.join(work, "hf"),
                      "AlbertForSequenceClassification")


# ------------------------------------------------------------------------------------------------ the peers' side
def peers_worker(work: str, queries: list, sentences: list, batches: list) -> list:
    """Runs in .venv-peers: PyTorch, transformers, onnxruntime; no TensorFlow, nothing of this package."""
    import onnxruntime
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process
    from transformers import AlbertForSequenceClassification, AlbertTokenizer

    torch.set_num_threads(THREADS)
    directory = os.path.join(work, "hf")
    tokenizer = AlbertTokenizer.from_pretrained(directory)
    model = AlbertForSequenceClassification.from_pretrained(directory, attn_implementation="sdpa").eval()

    def ids(texts):
        encoded = tokenizer(texts, padding=True, truncation=True, max_length=128, return_tensors="np",
                            return_token_type_ids=True)
        return {"ids": encoded["input_ids"], "mask": encoded["attention_mask"], "types": encoded["token_type_ids"]}

    def eager(precision):
        def run(f):
            with torch.inference_mode(), torch.autocast("cpu", torch.bfloat16, enabled=precision == "bf16"):
                return model(input_ids=torch.from_numpy(f["ids"]), attention_mask=torch.from_numpy(f["mask"]),
                             token_type_ids=torch.from_numpy(f["types"])).logits.float().numpy()
        return run

    results = [measure(f"HF transformers eager {p} (PyTorch, SDPA)", ids, eager(p), queries, sentences, batches)
               for p in ("fp32", "bf16")]
    names = ["input_ids", "attention_mask", "token_type_ids"]
    path = os.path.join(work, "hf.onnx")
    sample = ids(["an example sentence for the export"])
    torch.onnx.export(model, tuple(torch.from_numpy(sample[k]) for k in ("ids", "mask", "types")), path,
                      input_names=names, output_names=["logits"], opset_version=17, dynamo=False,
                      dynamic_axes={name: {0: "batch", 1: "sequence"} for name in names})
    # ONNX Runtime's own recipe: preprocess, then quantize. torch.onnx writes each use of ALBERT's shared weights
    # behind an Identity node, and quantize_dynamic takes only a MatMul whose weight is an initializer (7 of 97 here);
    # the preprocessing's graph optimization removes the Identities, and then 75 become MatMulInteger. Its symbolic
    # shape inference does not complete on this graph (skipped; ONNX's own shape inference still runs).
    quant_pre_process(path, os.path.join(work, "hf.pre.onnx"), skip_symbolic_shape=True)
    quantize_dynamic(os.path.join(work, "hf.pre.onnx"), os.path.join(work, "hf.int8.onnx"),
                     weight_type=QuantType.QInt8)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = THREADS
    for label, file in (("float32", "hf.onnx"), ("dynamic int8", "hf.int8.onnx")):
        session = onnxruntime.InferenceSession(os.path.join(work, file), options, providers=["CPUExecutionProvider"])
        results.append(measure(f"ONNX Runtime on HF's model, {label} (torch.onnx export)", ids, lambda f: session.run(
            ["logits"], {"input_ids": f["ids"], "attention_mask": f["mask"], "token_type_ids": f["types"]})[0],
            queries, sentences, batches))
    return results


# ---------------------------------------------------------------------------------------------------------- main
def read_sentences(glue_dir: str, split: str, count: int) -> list:
    with open(os.path.join(glue_dir, "SST-2", f"{split}.tsv"), encoding="utf-8") as f:
        return [line.split("\t")[0] for line in f.read().splitlines()[1:]][:count]


def best_of(runs: list) -> list:
    """Per path, the lower latencies and the higher throughput of the runs."""
    best = []
    for rows in zip(*runs):
        row = dict(rows[0])
        for key in ("p50_ms", "p99_ms", "tokenize_p50_ms", "batch_tokenize_s"):
            row[key] = min(r[key] for r in rows)
        row["batch_per_s"] = max(r["batch_per_s"] for r in rows)
        best.append(row)
    return best


def draw(rows: list, path: str, title: str, job: int):
    """Latency p50 / p99 and batch throughput per path, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["path"] for r in rows][::-1]
    colours = ["tab:blue" if n.startswith("ours") else "tab:grey" for n in names]
    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 0.45 * len(rows) + 1.6), sharey=True)
    y = range(len(names))
    left.barh(y, [r["p99_ms"] for r in rows][::-1], color="none", edgecolor=colours, label="p99")
    left.barh(y, [r["p50_ms"] for r in rows][::-1], color=colours, label="p50")
    left.set_yticks(list(y), names, fontsize=8)
    left.set_xlabel("ms per query, batch 1 (lower is better)")
    left.legend(loc="lower right", fontsize=8)
    right.barh(y, [r["batch_per_s"] for r in rows][::-1], color=colours)
    right.set_xlabel(f"sentences/s, {job:,}-sentence job, batches of {BATCH} (higher is better)")
    figure.suptitle(title, fontsize=9)
    sides.save_figure(figure, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sides.add_data_flags(parser)
    parser.add_argument("--preset", default="base_v2")
    parser.add_argument("--queries", type=int, default=872, help="SST-2 dev sentences timed one by one")
    parser.add_argument("--batch_sentences", type=int, default=1000, help="SST-2 train sentences of the batch job")
    parser.add_argument("--turns", type=int, default=2, help="runs of each side (each figure: the best)")
    parser.add_argument("--peers_python", default=sides.PEERS_PYTHON)
    parser.add_argument("--picture", default=os.path.join(ROOT, "docs", "serving.png"))
    parser.add_argument("--worker", choices=("ours", "peers"), help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    queries = read_sentences(args.glue_dir, "dev", args.queries)
    sentences = read_sentences(args.glue_dir, "train", args.batch_sentences)
    if args.worker:
        with open(os.path.join(args.work, "batches.json")) as f:
            batches = json.load(f)
        if args.worker == "ours":  # TensorFlow loads as the command lines load it (albert.ground.cpu)
            from albert.ground.cpu import prefer_onednn

            prefer_onednn()
        rows = (ours_worker if args.worker == "ours" else peers_worker)(args.work, queries, sentences, batches)
        print("RESULT " + json.dumps(rows))
        return
    sides.check_peers("serving.py", args.peers_python)
    from finetune import cpu_name

    work = tempfile.mkdtemp(prefix="albert-serving-bench-")
    prepare(work, args.spm_model_file, args.preset)
    with open(os.path.join(work, "batches.json"), "w") as f:
        json.dump(length_batches(args.spm_model_file, sentences), f)
    common = [os.path.abspath(__file__), "--work", work, "--queries", str(args.queries), "--batch_sentences",
              str(args.batch_sentences), "--glue_dir", args.glue_dir]
    runs = {"ours": [], "peers": []}
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", OMP_NUM_THREADS=str(THREADS))
    for _ in range(args.turns):
        for side, python in (("ours", sys.executable), ("peers", args.peers_python)):
            runs[side].append(sides.run_worker("serving.py", side, [python, *common, "--worker", side], env))
    rows = best_of(runs["ours"]) + best_of(runs["peers"])
    machine = f"{cpu_name()}, {os.cpu_count()} CPUs, {THREADS} threads"
    print(f"# {machine}; python benchmarks/serving.py {' '.join(sys.argv[1:])}")
    peers = [r for r in rows if not r["path"].startswith("ours")]
    ort = [r for r in peers if r["path"].startswith("ONNX")]
    print("| path | p50 ms | p99 ms | of which tokenization (p50 ms) | batch job sentences/s | of which tokenization "
          "(s) | p50 vs ORT's best | throughput vs ORT's best |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    best_p50, best_rate = min(r["p50_ms"] for r in ort), max(r["batch_per_s"] for r in ort)
    for r in rows:
        print(f"| {r['path']} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['tokenize_p50_ms']:.2f} | "
              f"{r['batch_per_s']:.1f} | {r['batch_tokenize_s']:.2f} | {best_p50 / r['p50_ms']:.2f}x | "
              f"{r['batch_per_s'] / best_rate:.2f}x |")
    print("\n(ratios: ORT's best p50 / this path's p50, and this path's throughput / ORT's best: above 1 is faster)")
    counted = {("FullTokenizer" if r["path"].startswith("ours") else "HF's AlbertTokenizer"): r["positions"]
               for r in rows if r["positions"][0]}
    print("positions computed on (queries / batch job, padded): " + "; ".join(
        f"{name} {q:,} / {b:,}" for name, (q, b) in counted.items()))
    for precision in ("float32", "int8"):
        ours = [r for r in rows if r["path"].startswith("ours") and precision in r["path"]]
        theirs = [r for r in ort if precision in r["path"]]
        if ours and theirs:
            p50 = min(r["p50_ms"] for r in ours) / min(r["p50_ms"] for r in theirs)
            rate = max(r["batch_per_s"] for r in ours) / max(r["batch_per_s"] for r in theirs)
            print(f"target {precision}: our best p50 / ORT's {p50:.2f} ({'met' if p50 <= 1 else 'NOT met'}: <= 1); "
                  f"our best throughput / ORT's {rate:.2f} ({'met' if rate >= 1 else 'NOT met'}: >= 1)")
    if args.picture:
        draw(rows, args.picture, f"ALBERT-base classifier serving, SST-2 text ({len(queries)} queries); {machine}",
             len(sentences))
        print(f"\ndrew {args.picture}")
    with open(os.path.join(work, "rows.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
