"""Token-classification (NER) fine-tuning and evaluation speed beside Hugging Face transformers, in ONE run on this
machine, on the real CoNLL-2003 English files (../shared/conll2003) and the released 30k-clean SentencePiece model.

An ALBERT-base-shaped token classifier (random weights, seed 0; AdamW; clipping; 9 tags), the same windows on both
sides (run_ner.py's: albert.tasks.ner.windows, --max_seq_length, --doc_stride 64), 2 threads each:

| row | ours (the training loop run_ner.py runs) | HF (PyTorch, SDPA attention) |
|---|---|---|
| train | each step's batch cut to its longest window (the default --length_buckets) | `AlbertForTokenClassification`, `DataCollatorForTokenClassification` (each batch padded to its longest), the SAME batches |
| eval | dev windows in batches of 32 sorted by length, each cut to its longest (run_ner.py's evaluation) | the same batches through `DataCollatorForTokenClassification` |

Training: examples (windows) per second over --train_steps steps after WARMUP untimed ones, on the same batches (a
seeded permutation of the train windows). Evaluation: over the first --eval_examples dev windows, after an untimed
pass, the best of EVAL_PASSES timed passes. Each side in its own process (ours here, HF in .venv-peers:
benchmarks/peers.sh), taking turns --turns times; each figure is the best of its turns.

    bash benchmarks/peers.sh                      # once: .venv-peers
    python benchmarks/finetune_ner_hf.py          # T=128, fp32
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

WARMUP = 3
EVAL_BATCH = 32
EVAL_PASSES = 3
MODES = ("train", "eval")
TAGS = 9


def ours_worker(args) -> dict:
    import numpy as np
    import keras
    import tensorflow as tf

    from albert.config import AlbertConfig
    from albert.data.buckets import grouped_batches
    from albert.data.features import PACKED_INPUTS, step_boundaries
    from albert.tasks.ner.job import token_loss
    from albert.tasks.ner.model import AlbertTokenClassifier
    from albert.train.loop import Trainer
    from albert.train.optimizers import create_optimizer
    from albert.train.settings import LoopConfig
    from throughput import timed

    with np.load(args.record) as data:
        train = {k: data[k] for k in ("input_ids", "input_mask", "segment_ids", "tag_ids")}
        dev = {k: data["dev_" + k] for k in ("input_ids", "input_mask", "segment_ids")}
        order = data["train_order"]
    keras.utils.set_random_seed(0)
    config = AlbertConfig.preset("base_v2")
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        model = AlbertTokenClassifier(config, num_labels=TAGS)
        optimizer = create_optimizer(5e-5, 1000, 0, "adamw", model=model)
    with tempfile.TemporaryDirectory() as tmp:
        loop = LoopConfig(output_dir=tmp, num_train_steps=1000, global_batch_size=args.batch_size,
                          length_boundaries=step_boundaries(args.seq_length))
        trainer = Trainer(strategy, model, optimizer, token_loss, loop)
        batches = [{k: v[order[s:s + args.batch_size]] for k, v in train.items()}
                   for s in range(0, len(order), args.batch_size)]

        def dataset(ctx, batch):
            joined = tf.data.Dataset.from_tensors(batches[0])
            for one in batches[1:]:
                joined = joined.concatenate(tf.data.Dataset.from_tensors(one))
            return joined

        iterator = trainer.feed.local_iterator(dataset, args.batch_size)
        trainer.train_steps(iterator, WARMUP)
        start = time.perf_counter()
        trainer.train_steps(iterator, args.train_steps)
        result = {"train": args.train_steps * args.batch_size / (time.perf_counter() - start)}
    examples = tf.data.Dataset.from_tensor_slices({k: v[:args.eval_examples] for k, v in dev.items()})
    eval_batches = list(grouped_batches(examples, EVAL_BATCH, step_boundaries(args.seq_length)))
    step = tf.function(lambda features: model(features, training=False), reduce_retracing=True)

    def one_pass():
        for batch in eval_batches:
            step({k: batch[k] for k in PACKED_INPUTS}).numpy()

    result["eval"] = args.eval_examples / timed([one_pass], EVAL_PASSES)[0]
    return result


def hf_worker(args) -> dict:
    """Runs in .venv-peers (PyTorch, transformers; nothing of this package, no TensorFlow)."""
    import numpy as np
    import torch
    import transformers
    from transformers import AlbertForTokenClassification, AlbertTokenizer, DataCollatorForTokenClassification

    from throughput import timed

    torch.set_num_threads(2)
    torch.manual_seed(0)
    with np.load(args.record) as data:
        ids, mask, tags, order = data["input_ids"], data["input_mask"], data["tag_ids"], data["train_order"]
        dev_ids, dev_mask = data["dev_input_ids"], data["dev_input_mask"]

    def example(row_ids, row_mask, row_tags=None):
        n = int(row_mask.sum())
        out = {"input_ids": row_ids[:n].tolist(), "token_type_ids": [0] * n, "attention_mask": [1] * n}
        if row_tags is not None:
            out["labels"] = [int(t) if t >= 0 else -100 for t in row_tags[:n]]
        return out

    collate = DataCollatorForTokenClassification(AlbertTokenizer(vocab_file=args.spm_model_file),
                                                 return_tensors="pt")
    model = AlbertForTokenClassification(sides.hf_base_classifier_config(transformers, num_labels=TAGS))
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    model.train()
    batches = [collate([example(ids[i], mask[i], tags[i]) for i in order[s:s + args.batch_size]])
               for s in range(0, len(order), args.batch_size)]

    result = {"train": sides.hf_train_rate(torch, model, optimizer, batches, WARMUP, args.batch_size)}
    model.eval()
    lengths = dev_mask[:args.eval_examples].sum(-1)
    ranked = sorted(range(args.eval_examples), key=lambda i: int(lengths[i]))
    eval_batches = [collate([example(dev_ids[i], dev_mask[i]) for i in ranked[s:s + EVAL_BATCH]])
                    for s in range(0, len(ranked), EVAL_BATCH)]

    def evaluate():
        with torch.inference_mode():
            for batch in eval_batches:
                model(**batch).logits.numpy()

    result["eval"] = args.eval_examples / timed([evaluate], EVAL_PASSES)[0]
    return result


def prepare(conll: str, spm: str, seq_length: int, batch_size: int, steps: int, work: str) -> str:
    """The train and dev windows of CoNLL-2003 at `seq_length` (run_ner.py's), and the train batches' order, as an
    .npz both sides read."""
    import numpy as np

    from albert.tasks.ner.windows import padded, sentence_windows
    from albert.tasks.ner.conll import read_sentences, tag_set
    from albert.text.tokenization import FullTokenizer

    tokenizer = FullTokenizer(None, True, spm)
    train = read_sentences(os.path.join(conll, "train.txt"))
    labels = tag_set(train)
    arrays = padded(sentence_windows(train, tokenizer, labels, seq_length, 64), seq_length)
    dev = padded(sentence_windows(read_sentences(os.path.join(conll, "valid.txt")), tokenizer, labels, seq_length, 64),
                 seq_length)
    order = np.random.default_rng(0).permutation(len(arrays["input_ids"]))[:(WARMUP + steps) * batch_size]
    path = os.path.join(work, f"conll{seq_length}.npz")
    np.savez(path, **arrays, **{f"dev_{k}": v for k, v in dev.items()}, train_order=order)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conll_dir", default=os.path.join(sides.SHARED, "conll2003"))
    parser.add_argument("--spm_model_file", default=os.path.join(sides.SHARED, "albert_30k_clean", "30k-clean.model"))
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--train_steps", type=int, default=6)
    parser.add_argument("--eval_examples", type=int, default=512)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--peers_python", default=sides.PEERS_PYTHON)
    parser.add_argument("--results", default=os.path.join(ROOT, "benchmarks", "finetune_ner_hf.json"))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--record", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        if args.worker == "ours":
            from albert.ground.cpu import prefer_onednn

            prefer_onednn()
        print("RESULT " + json.dumps((ours_worker if args.worker == "ours" else hf_worker)(args)), flush=True)
        return
    sides.check_peers("finetune_ner_hf.py", args.peers_python)
    from finetune import cpu_name

    machine = f"{cpu_name()}, {os.cpu_count()} CPUs, 2 threads each side"
    print(f"# {machine}; python benchmarks/finetune_ner_hf.py {' '.join(sys.argv[1:])}", flush=True)
    work = tempfile.mkdtemp(prefix="albert-ner-hf-")
    record = prepare(args.conll_dir, args.spm_model_file, args.seq_length, args.batch_size, args.train_steps, work)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", OMP_NUM_THREADS="2")
    common = ["--seq_length", str(args.seq_length), "--batch_size", str(args.batch_size), "--train_steps",
              str(args.train_steps), "--eval_examples", str(args.eval_examples), "--spm_model_file",
              args.spm_model_file, "--record", record]
    best = {"ours": dict.fromkeys(MODES, 0.0), "hf": dict.fromkeys(MODES, 0.0)}
    for _ in range(args.turns):
        for side, python in (("ours", sys.executable), ("hf", args.peers_python)):
            command = [python, os.path.abspath(__file__), "--worker", side, *common]
            for mode, rate in sides.run_worker("finetune_ner_hf.py", side, command, env).items():
                best[side][mode] = max(best[side][mode], rate)
    row = {"task": "conll2003-ner", "T": args.seq_length, "batch": args.batch_size, "precision": "fp32",
           "train_steps": args.train_steps, "eval_examples": args.eval_examples, "turns": args.turns,
           "machine": machine, **best}
    with open(args.results, "a") as out:
        out.write(json.dumps(row) + "\n")
    print("\n| task | T | batch | train: ours / HF (ratio) | eval: ours / HF (ratio) |\n|---|---|---|---|---|")
    cells = [f"{best['ours'][m]:.2f} / {best['hf'][m]:.2f} ({best['ours'][m] / best['hf'][m]:.2f}x)" for m in MODES]
    print(f"| CoNLL-2003 NER | {args.seq_length} | {args.batch_size} | {cells[0]} | {cells[1]} |")
    missed = [m for m in MODES if best["ours"][m] < best["hf"][m]]
    print(f"\ntarget ours >= 1.0x HF in every row: {'met' if not missed else 'NOT met in ' + ', '.join(missed)}")


if __name__ == "__main__":
    main()
