"""Fine-tuning and evaluation speed beside Hugging Face transformers with its own speed recipe, in ONE run on this
machine, on real GLUE text (../shared/glue_real) and the released 30k-clean SentencePiece model.

For each task, --max_seq_length and precision (fp32; bf16: ours `--mixed_precision=bf16`, HF
`torch.autocast(dtype=torch.bfloat16)`), an ALBERT-base-shaped classifier (random weights, seed 0; AdamW; the
original's batch size), the same ids on both sides (FullTokenizer's), 2 threads each:

| row | ours (the project's training loop, what run_classifier.py runs) | HF (PyTorch, SDPA attention) |
|---|---|---|
| train | the default --length_buckets (each step's batch cut to its longest), the original's batches | `DataCollatorWithPadding` (each batch padded to its longest), the SAME batches |
| grouped | `--group_by_length`, batches sampled over its epoch | `group_by_length=True`: the Trainer's `LengthGroupedSampler`, batches sampled over its epoch |
| eval | batches of 32 sorted by length, each cut to its longest (what evaluation does) | `DataCollatorWithPadding` over length-sorted batches of 32 |

Training rates: examples/s over --train_steps steps after WARMUP untimed ones on each side (ours: the first calls
trace new bucket lengths). In the train row both sides train on the same examples in the same batches: the ones the
original's reader gives (its shuffle buffer and seed), read from our pipeline and matched to their indices, so the
rows differ only in padding (buckets vs each batch's longest) and the framework. In the grouped row each side's own
grouping decides the batches (ours: the reader's, cut from windows of 50 batches sorted by length, each step cut
to its longest; HF: its `LengthGroupedSampler`'s, mega-batches of 50 sorted, each padded to its longest), and each side samples its own whole epoch the same way: its
epoch's batches ranked by padded tokens, the timed ones (and, apart, the warm-up ones) at the evenly spaced
quantiles (k + 1/2) / n of that ranking (sides.stratified), trained in epoch order. A few batches taken anywhere
else (the first ones, or one place per mega-batch) hold tokens that differ from the epoch's mean by a factor of two
either way, and the row would measure the draw; the row also prints the tokens of each side's timed batches.
Evaluation: over the first --eval_examples
examples after an untimed pass, the best of EVAL_PASSES timed passes on each side. Each side runs in its own process
(ours in this environment, HF in .venv-peers: benchmarks/peers.sh), the two taking turns, --turns times; each figure
is the best of its turns. Rows
go to --results as they are measured (a rerun with the same settings skips the rows already there, so a long table
can be finished over several runs). Prints the table with ours / HF per row, the targets (ours >= 1.0x in every row)
and draws docs/finetune_hf.png.

    bash benchmarks/peers.sh                                                  # once: .venv-peers
    python benchmarks/finetune_hf.py                                          # SST-2, CoLA, RTE, QNLI; 128 and 512
    python benchmarks/finetune_hf.py --tasks sst-2 --seq_lengths 128          # one task
    python benchmarks/finetune_hf.py --draw --train_steps 4 --eval_examples 256   # table and picture, no measuring
    python benchmarks/finetune_hf.py --eval_alone --tasks sst-2 --seq_lengths 128 --precisions fp32 --eval_examples 256
                                                    # the eval row without training first, each side fresh

--draw measures nothing: it prints the table and redraws --picture from the rows in --results of --tasks,
--seq_lengths and --precisions measured with --train_steps, --eval_examples and --turns (on any machine; the last
row of each wins), in that order (a run draws only the rows it was asked for).
"""

import argparse
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import sides  # noqa: E402  (benchmarks/sides.py, beside this script)
BATCH = {"sst-2": 32, "cola": 16, "rte": 32, "qnli": 32}
WARMUP = 3  # untimed training steps on each side (finetune.train_rate's: tracing, the first bucket lengths)
EVAL_BATCH = 32
EVAL_PASSES = 3  # timed evaluation passes on each side in each turn, the best kept (a pass is a few seconds)
MODES = ("train", "grouped", "eval")


# ---------------------------------------------------------------------------------------------------- our side
def ours_worker(args) -> dict:
    from finetune import computed_tokens, epoch_sample, train_rate

    from albert.config import AlbertConfig
    from albert.data.features import step_boundaries
    from albert.tasks.classification.model import AlbertClassifier
    from albert.train.setup import set_precision

    config = AlbertConfig.preset("base_v2")
    result, modes = {}, ()
    if not args.eval_only:
        sample = epoch_sample(args.record, args.seq_length, args.batch_size, args.examples, WARMUP, args.train_steps)
        result = {"grouped_tokens": sum(computed_tokens(b) for b in sample[1])}
        modes = (("train", None), ("grouped", sample))
    with tempfile.TemporaryDirectory() as tmp:
        for mode, batches in modes:
            set_precision(args.precision)
            result[mode] = train_rate(config, args.record, args.seq_length, args.batch_size, "default", False,
                                      args.train_steps, os.path.join(tmp, mode), batches=batches)
    set_precision(args.precision)
    from finetune import eval_rate

    result["eval"] = eval_rate(AlbertClassifier(config, num_labels=2), args.record, args.seq_length, EVAL_BATCH,
                               step_boundaries(args.seq_length), args.eval_examples, EVAL_PASSES)
    return result


# ------------------------------------------------------------------------------------------------- the HF side
def hf_worker(args) -> dict:
    """Runs in .venv-peers (PyTorch, transformers; nothing of this package, no TensorFlow)."""
    import numpy as np
    import torch
    from transformers import AlbertForSequenceClassification, AlbertTokenizer, DataCollatorWithPadding
    from transformers.trainer_pt_utils import LengthGroupedSampler

    torch.set_num_threads(2)
    torch.manual_seed(0)
    with np.load(args.record) as data:
        ids, lengths, labels, train_order = (data[k] for k in ("input_ids", "lengths", "labels", "train_order"))
    examples = [{"input_ids": ids[i, :n].tolist(), "token_type_ids": [0] * int(n), "attention_mask": [1] * int(n),
                 "labels": int(labels[i])} for i, n in enumerate(lengths)]
    collate = DataCollatorWithPadding(AlbertTokenizer(vocab_file=args.spm_model_file), return_tensors="pt")
    import transformers

    model = AlbertForSequenceClassification(sides.hf_base_classifier_config(transformers))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.01)
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "bf16")
    result, orders = {}, {}
    if not args.eval_only:
        sampler = list(LengthGroupedSampler(args.batch_size, lengths=[int(n) for n in lengths],
                                            generator=torch.Generator().manual_seed(0)))
        epoch = [sampler[s:s + args.batch_size] for s in range(0, len(sampler) - args.batch_size + 1,
                                                                args.batch_size)]
        tokens = [len(batch) * int(lengths[batch].max()) for batch in epoch]  # padded to the batch's longest
        timed = sides.stratified(tokens, args.train_steps)
        ours = train_order.tolist()
        orders = {"train": [ours[s:s + args.batch_size] for s in range(0, len(ours), args.batch_size)],
                  "grouped": [epoch[i] for i in sides.stratified(tokens, WARMUP) + timed]}
        result = {"grouped_tokens": sum(tokens[i] for i in timed)}
    for mode, order in orders.items():
        model.train()
        batches = [collate([examples[i] for i in batch]) for batch in order]
        result[mode] = sides.hf_train_rate(torch, model, optimizer, batches, WARMUP, args.batch_size, autocast)
    model.eval()
    order = sorted(range(args.eval_examples), key=lambda i: int(lengths[i]))
    batches = [collate([{k: v for k, v in examples[i].items() if k != "labels"} for i in order[s:s + EVAL_BATCH]])
               for s in range(0, len(order), EVAL_BATCH)]

    def evaluate():
        with torch.inference_mode(), autocast:
            for batch in batches:
                model(**batch).logits.float().numpy()

    from throughput import timed  # stdlib-only at import

    result["eval"] = len(order) / timed([evaluate], EVAL_PASSES)[0]
    return result


# ---------------------------------------------------------------------------------------------------------- main
def prepare(task_name: str, seq_length: int, batch_size: int, steps: int, glue_dir: str, spm: str,
            work: str) -> tuple:
    """(our feature record, the same ids for HF as an .npz, the number of examples) of the task's training split at
    `seq_length`; the .npz also holds `train_order`: the examples of our first WARMUP + `steps` training batches."""
    import numpy as np

    from albert.tasks.classification.features import cached_features
    from albert.tasks.classification.glue import convert_example, get_task, read_examples
    from albert.text.tokenization import FullTokenizer

    task, tokenizer = get_task(task_name), FullTokenizer(None, True, spm)
    split = "dev" if task_name == "qnli" else "train"  # QNLI's train file is not in ../shared: its dev stands in
    directory = os.path.join(work, f"{task_name}{seq_length}")
    record, _ = cached_features(task, glue_dir, split, tokenizer, seq_length, directory)
    features = [convert_example(e, task, seq_length, tokenizer) for e in read_examples(task, glue_dir, split)]
    ids = np.array([f.input_ids for f in features], np.int64)
    arrays = os.path.join(directory, "hf.npz")
    np.savez(arrays, input_ids=ids, lengths=np.array([sum(f.input_mask) for f in features]),
             labels=np.array([f.label_id for f in features]),
             train_order=our_batches(record, ids, seq_length, batch_size, WARMUP + steps))
    return record, arrays, len(features)


def our_batches(record: str, ids, seq_length: int, batch_size: int, count: int) -> list:
    """The indices (rows of `ids`) of the examples in the first `count` training batches our reader gives, in
    order: the same pipeline and seeds as finetune.train_rate's, each example found by its ids."""
    import keras
    from finetune import training_batches

    rows = {}
    for index, row in enumerate(ids):
        rows.setdefault(row.tobytes(), []).append(index)
    keras.utils.set_random_seed(0)  # as train_rate
    order = []
    for batch in training_batches(record, seq_length, batch_size, False).take(count):
        order += [rows[row.tobytes()][0] for row in batch["input_ids"].numpy().astype(ids.dtype)]
    return order


def padded_tokens(arrays: str, batch_size: int, seq_length: int) -> list:
    """[ours, HF]: the tokens the timed batches of the train row hold once padded (ours: as its training step cuts
    them, albert.data.features.step_boundaries; HF: to its longest example): the two sides compute on the same
    examples, each padded its own way."""
    import numpy as np

    from albert.data.features import step_boundaries

    bounds = np.array(step_boundaries(seq_length))
    with np.load(arrays) as data:
        longest = data["lengths"][data["train_order"]].reshape(-1, batch_size).max(axis=1)[WARMUP:]
    return [int(bounds[np.searchsorted(bounds, longest)].sum() * batch_size), int(longest.sum() * batch_size)]


def measured(path: str, settings: dict) -> dict:
    """{(task, T, precision): row} of the rows in `path` measured with `settings`."""
    if not os.path.exists(path):
        return {}
    with open(path) as rows:
        found = [json.loads(line) for line in rows if line.strip()]
    return {(r["task"], r["T"], r["precision"]): r for r in found
            if all(r.get(k) == v for k, v in settings.items())}


def draw(rows: list, path: str, title: str):
    """Examples/s per task, length, precision and mode: ours beside HF."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['task']}\nT={r['T']} {r['precision']}\n{mode}" for r in rows for mode in MODES]
    ours = [r["ours"][mode] for r in rows for mode in MODES]
    theirs = [r["hf"][mode] for r in rows for mode in MODES]
    figure, axis = plt.subplots(figsize=(max(6, 0.9 * len(labels)), 4.4))
    x = range(len(labels))
    axis.bar([i - 0.2 for i in x], ours, 0.4, label="ours", color="tab:blue")
    axis.bar([i + 0.2 for i in x], theirs, 0.4, label="HF transformers (dynamic padding)", color="tab:grey")
    for i, (a, b) in enumerate(zip(ours, theirs)):  # the row's ratio above its pair
        axis.annotate(f"{a / b:.2f}x", (i, max(a, b)), ha="center", va="bottom", fontsize=7)
    axis.set_xticks(list(x), labels, fontsize=7)
    axis.set_ylabel("examples/s (higher is better)")
    axis.legend(fontsize=8)
    axis.set_title(title, fontsize=9)
    sides.save_figure(figure, path)


def run_settings(args) -> dict:
    """What a row of --results must have been measured with to stand for this run (the machine apart)."""
    return {"train_steps": args.train_steps, "eval_examples": args.eval_examples, "turns": args.turns,
            "grouped_sample": "stratified", "our_step_cut": "longest example",
            "our_grouping": "windows of 50 batches sorted by length", "our_eval_cut": "longest example",
            "our_last_block": "token 0 only", "eval_passes": EVAL_PASSES}


def report(rows: list, picture: str, machine: str):
    """The table (ours / HF per row), the targets and the picture."""
    print("\n| task | T | batch | precision | train: ours / HF (ratio) | train tokens: ours / HF | "
          "grouped: ours / HF (ratio) | grouped tokens: ours / HF | eval: ours / HF (ratio) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = [f"{r['ours'][m]:.2f} / {r['hf'][m]:.2f} ({r['ours'][m] / r['hf'][m]:.2f}x)" for m in MODES]
        tokens = ["{:,} / {:,}".format(*r[key]) for key in ("padded_tokens", "grouped_tokens")]
        print(f"| {r['task']} | {r['T']} | {r['batch']} | {r['precision']} | {cells[0]} | {tokens[0]} | {cells[1]} | "
              f"{tokens[1]} | {cells[2]} |")
    missed = [f"{r['task']} T={r['T']} {r['precision']} {m}" for r in rows for m in MODES if r["ours"][m] < r["hf"][m]]
    print(f"\ntarget ours >= 1.0x HF in every row: {'met' if not missed else 'NOT met in ' + ', '.join(missed)}")
    if picture:
        draw(rows, picture, f"Fine-tuning ALBERT-base on real GLUE text, ours vs HF transformers\n{machine}")
        print(f"drew {picture}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sides.add_data_flags(parser)
    parser.add_argument("--tasks", default="sst-2,cola,rte,qnli")
    parser.add_argument("--seq_lengths", default="128,512")
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--train_steps", type=int, default=6)
    parser.add_argument("--eval_examples", type=int, default=512)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--peers_python", default=sides.PEERS_PYTHON)
    parser.add_argument("--picture", default=os.path.join(ROOT, "docs", "finetune_hf.png"))
    parser.add_argument("--results", default=os.path.join(ROOT, "benchmarks", "finetune_hf.json"),
                        help="rows measured so far (JSON lines); rows there with the same settings are not rerun")
    parser.add_argument("--draw", action="store_true",
                        help="measure nothing: the table and --picture from the rows in --results")
    parser.add_argument("--eval_alone", action="store_true",
                        help="evaluation only, each side in a fresh process that does not train first, in turns; "
                             "prints each turn's rates, stores nothing")
    parser.add_argument("--eval_only", action="store_true", help=argparse.SUPPRESS)
    for name in ("worker", "record", "precision"):
        parser.add_argument(f"--{name}", help=argparse.SUPPRESS)
    parser.add_argument("--seq_length", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--batch_size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--examples", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:  # ours: TensorFlow loads as the command lines load it (albert.ground.cpu); HF: no albert
        if args.worker == "ours":
            from albert.ground.cpu import prefer_onednn

            prefer_onednn()
        print("RESULT " + json.dumps((ours_worker if args.worker == "ours" else hf_worker)(args)), flush=True)
        return
    if args.draw:
        wanted = [(task, int(seq), precision) for task in args.tasks.split(",")
                  for seq in args.seq_lengths.split(",") for precision in args.precisions.split(",")]
        found = measured(args.results, run_settings(args))
        rows = [found[key] for key in wanted if key in found]
        if not rows:
            print(f"finetune_hf.py: error: {args.results} holds no row of --tasks {args.tasks} --seq_lengths "
                  f"{args.seq_lengths} --precisions {args.precisions} measured with --train_steps {args.train_steps} "
                  f"--eval_examples {args.eval_examples} --turns {args.turns}; pass the settings it was measured with",
                  file=sys.stderr)
            sys.exit(2)
        report(rows, args.picture, "; ".join(sorted({r["machine"] for r in rows})))
        return
    sides.check_peers("finetune_hf.py", args.peers_python)
    from finetune import cpu_name

    machine = f"{cpu_name()}, {os.cpu_count()} CPUs, 2 threads each side"
    print(f"# {machine}; python benchmarks/finetune_hf.py {' '.join(sys.argv[1:])}", flush=True)
    work = tempfile.mkdtemp(prefix="albert-finetune-hf-")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", OMP_NUM_THREADS="2")
    settings = {"machine": machine, **run_settings(args)}
    done = measured(args.results, settings)
    rows = []
    for task in args.tasks.split(","):
        for seq in (int(s) for s in args.seq_lengths.split(",")):
            if args.eval_alone or any((task, seq, p) not in done for p in args.precisions.split(",")):
                record, arrays, count = prepare(task, seq, BATCH[task], args.train_steps, args.glue_dir,
                                                args.spm_model_file, work)
            for precision in args.precisions.split(","):
                if (task, seq, precision) in done and not args.eval_alone:
                    rows.append(done[task, seq, precision])
                    continue
                common = ["--seq_length", str(seq), "--batch_size", str(BATCH[task]), "--precision", precision,
                          "--examples", str(count),
                          "--train_steps", str(args.train_steps), "--eval_examples", str(args.eval_examples),
                          "--spm_model_file", args.spm_model_file]
                workers = (("ours", sys.executable, record), ("hf", args.peers_python, arrays))
                if args.eval_alone:
                    eval_alone(f"{task} T={seq} {precision}", workers, common, env, args.turns)
                    continue
                best = {"ours": dict.fromkeys(MODES, 0.0), "hf": dict.fromkeys(MODES, 0.0)}
                grouped_tokens = {}
                for _ in range(args.turns):
                    for side, result in turn(workers, common, env):
                        grouped_tokens[side] = result.pop("grouped_tokens")
                        for mode, rate in result.items():
                            best[side][mode] = max(best[side][mode], rate)
                rows.append({"task": task, "T": seq, "batch": BATCH[task], "precision": precision,
                             "padded_tokens": padded_tokens(arrays, BATCH[task], seq),
                             "grouped_tokens": [grouped_tokens["ours"], grouped_tokens["hf"]], **best, **settings})
                print(json.dumps(rows[-1]), flush=True)
                with open(args.results, "a") as out:
                    out.write(json.dumps(rows[-1]) + "\n")
    if rows:
        report(rows, args.picture, machine)


def turn(workers: tuple, common: list, env: dict):
    """(side, its worker's RESULT) for each of `workers` ((side, python, data)) in order, one process each."""
    for side, python, data in workers:
        command = [python, os.path.abspath(__file__), "--worker", side, "--record", data, *common]
        yield side, sides.run_worker("finetune_hf.py", side, command, env)


def eval_alone(row: str, workers: tuple, common: list, env: dict, turns: int):
    """The eval row with neither side training first: each side's evaluation in a fresh process, in turns (what
    the measuring run's eval column compares after each side's training in the same process); prints each turn."""
    rates = {"ours": [], "hf": []}
    for number in range(1, turns + 1):
        for side, result in turn(workers, [*common, "--eval_only"], env):
            rates[side].append(result["eval"])
        ours, hf = rates["ours"][-1], rates["hf"][-1]
        print(f"{row} eval alone, turn {number}: ours {ours:.2f} / HF {hf:.2f} examples/s ({ours / hf:.2f}x)",
              flush=True)
    ours, hf = max(rates["ours"]), max(rates["hf"])
    print(f"{row} eval alone, best of {turns}: ours {ours:.2f} / HF {hf:.2f} examples/s ({ours / hf:.2f}x)",
          flush=True)

if __name__ == "__main__":
    main()
