"""Fine-tuning and evaluation speed on real GLUE text: fixed padding vs length buckets vs grouping by length, beside
keras-hub's AlbertTextClassifier, in ONE run on this machine.

For each task (SST-2, CoLA, RTE, QNLI dev; ../shared/glue_real by default, the released 30k-clean SentencePiece
model) and each --max_seq_length (512, 128), an ALBERT-base-shaped classifier (random weights: time does not
depend on them; fp32) trained through the project's training loop (what run_classifier.py runs) with
(a) fixed padding (`--length_buckets=none`), (b) the default buckets (the original's batches, each step's cut to its
longest example: albert.data.features.step_boundaries), (c) `--group_by_length`; and evaluated with fixed-length
batches and with batches grouped by length (what evaluation and prediction always do now). Reported: examples/s of
each, the share of computed positions that is padding over a whole epoch (from the real lengths and each scheme's
batches), keras-hub's `fit` / `predict` with its default preprocessor (sequence_length 512) on the same strings, the
feature conversion of SST-2 train, and the latency of one short query through the exported raw-string classifier
(buckets vs fixed).

Fixed padding costs the same for any batch, so its timings use few steps; the bucketed schemes' cost depends on
each batch's lengths, so they are timed over more batches drawn the same way. Training with fixed padding (ours and
keras-hub's, which pads to 512) runs in batches of at most --fixed_batch_tokens tokens: base at 32 x 512 needs
about 24 GiB of activations, all of a 24 GB machine; a fixed-length step's cost is proportional to its batch, so its
examples/s do not depend on it (the run checks this at T=128: batch 32 and batch 8 side by side). The machine is
shared (±10-15 %).

    pip install -r benchmarks/requirements.txt                 # keras-hub, for the comparison
    python benchmarks/finetune.py                              # every task, 512 and 128
    python benchmarks/finetune.py --tasks sst-2 --seq_lengths 128 --train_steps 4
"""

import argparse
import os
import platform
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
BATCH = {"sst-2": 32, "cola": 16, "rte": 32, "qnli": 32}
DIRECTORY = {"sst-2": "SST-2", "cola": "CoLA", "rte": "RTE", "qnli": "QNLI"}


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def epoch_padding(lengths, batch_size: int, bounds: tuple, grouping: str = "none",
                  cut_bounds: tuple | None = None) -> float:
    """The share of the positions an epoch computes that is padding: batches in the data's order (`grouping`
    "none"), or cut from windows sorted by length ("windows": --group_by_length training and evaluation,
    albert.data.buckets); each batch cut to the smallest of `cut_bounds` (default `bounds`) that holds its
    longest."""
    import numpy as np

    from albert.data.buckets import WINDOW_BATCHES

    lengths = np.asarray(lengths)

    def bucket_of(values, table):
        table = np.asarray(table)
        return table[np.minimum(np.searchsorted(table, values), len(table) - 1)]

    if grouping == "windows":
        window = batch_size * WINDOW_BATCHES
        lengths = np.concatenate([-np.sort(-lengths[s:s + window], kind="stable")
                                  for s in range(0, len(lengths), window)])
    computed = 0
    for start in range(0, len(lengths), batch_size):
        batch = lengths[start:start + batch_size]
        computed += len(batch) * bucket_of(batch.max(), cut_bounds or bounds)
    return 1.0 - lengths.sum() / computed


def training_batches(record: str, max_seq_length: int, batch_size: int, group_by_length: bool,
                     input_context=None):
    """The training batches run_classifier.py's reader gives (its shuffle buffer and seed) after keras's seed 0, as
    train_rate reads them (finetune_hf.py matches them to their examples)."""
    from albert.data.readers import classifier_dataset

    return classifier_dataset([record], max_seq_length, False, batch_size, True, input_context,
                              group_by_length=group_by_length)


def epoch_sample(record: str, max_seq_length: int, batch_size: int, examples: int, warmup: int, steps: int) -> tuple:
    """(`warmup` batches, `steps` batches) of one epoch (`examples` // `batch_size` batches) of `--group_by_length`
    training batches (the reader's seed as train_rate's), each set at evenly spaced quantiles of the epoch's batches
    ranked by the positions a step computes on them (sides.stratified): a sample of the whole epoch, read before any
    clock starts."""
    import keras

    from sides import stratified

    keras.utils.set_random_seed(0)
    epoch = list(training_batches(record, max_seq_length, batch_size, True).take(examples // batch_size))
    tokens = [computed_tokens(b) for b in epoch]
    return [epoch[i] for i in stratified(tokens, warmup)], [epoch[i] for i in stratified(tokens, steps)]


def computed_tokens(batch) -> int:
    """The positions a training step computes on `batch` under the default --length_buckets without XLA: every row
    up to the batch's longest example (albert.data.features.step_boundaries)."""
    mask = batch["input_mask"].numpy()
    return int(mask.shape[0] * mask.sum(axis=-1).max())


def train_rate(config, record: str, max_seq_length: int, batch_size: int, buckets: str, grouped: bool,
               steps: int, output_dir: str, device: str = "/cpu:0", batches: tuple | None = None) -> float:
    """Examples/s of the project's training loop (AdamW, clipping) over `steps` steps after untimed warm-up steps
    (tracing, the first calls at new lengths), under the Keras dtype policy set before (fp32, or bf16:
    albert.train.setup.set_precision), with the --length_buckets value `buckets` (each step cuts its batch as
    run_classifier.py's do: albert.data.features.step_boundaries). `batches`: (warm-up batches, timed batches) to
    train on (epoch_sample) instead of the reader's first ones."""
    import keras
    import tensorflow as tf

    from albert.data.features import boundaries, step_boundaries
    from albert.tasks.classification.model import AlbertClassifier
    from albert.tasks.classification.features import classification_loss
    from albert.train.loop import Trainer
    from albert.train.settings import LoopConfig
    from albert.train.optimizers import create_optimizer

    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    strategy = tf.distribute.OneDeviceStrategy(device)
    with strategy.scope():
        model = AlbertClassifier(config, num_labels=2)
        optimizer = create_optimizer(1e-5, 1000, 0, "adamw", model=model)
    loop = LoopConfig(output_dir=output_dir, num_train_steps=1000, global_batch_size=batch_size,
                      length_boundaries=step_boundaries(max_seq_length, buckets))
    trainer = Trainer(strategy, model, optimizer, classification_loss, loop)
    bounds = boundaries(max_seq_length, buckets)
    warmup = len(batches[0]) if batches else 1 if len(bounds) == 1 else 3

    def dataset(ctx, batch):
        if not batches:
            return training_batches(record, max_seq_length, batch, grouped, ctx)
        joined = tf.data.Dataset.from_tensors(batches[0][0])
        for one in batches[0][1:] + batches[1]:
            joined = joined.concatenate(tf.data.Dataset.from_tensors(one))
        return joined

    iterator = trainer.feed.local_iterator(dataset, batch_size)
    trainer.train_steps(iterator, warmup)
    start = time.perf_counter()
    trainer.train_steps(iterator, steps)
    return steps * batch_size / (time.perf_counter() - start)


def eval_rate(model, record: str, max_seq_length: int, batch_size: int, bounds: tuple, count: int,
              passes: int = 1) -> float:
    """Examples/s of prediction over the first `count` records, the best of `passes` timed passes: fixed-length
    batches (`bounds` one length), or as evaluation batches them (albert.data.buckets.grouped_batches: sorted by
    length, each batch cut to the smallest of `bounds` holding its longest)."""
    import tensorflow as tf

    from albert.data.features import PACKED_INPUTS
    from albert.data.readers import classifier_decoder

    decode = classifier_decoder(max_seq_length)
    examples = tf.data.TFRecordDataset([record]).take(count).map(decode)
    if len(bounds) == 1:
        batches = examples.batch(batch_size)
    else:
        from albert.data.buckets import grouped_batches

        batches = grouped_batches(examples, batch_size, bounds)
    batches = list(batches)
    from throughput import timed

    step = tf.function(lambda features: model(features, training=False), reduce_retracing=True)

    def one_pass():  # its untimed first call traces, and makes the first call at each shape
        for batch in batches:
            step({k: batch[k] for k in PACKED_INPUTS}).numpy()

    return sum(int(b["input_ids"].shape[0]) for b in batches) / timed([one_pass], passes)[0]


def keras_hub_rates(texts, labels, spm: str, config, batch_size: int, fit_steps: int, count: int) -> tuple:
    """(fit examples/s in batches of `batch_size`, predict examples/s in batches of 32) of keras-hub's
    AlbertTextClassifier with its default preprocessor (sequence_length 512), a base-shaped backbone of random
    weights, on the same strings."""
    import keras
    import keras_hub

    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    tokenizer = keras_hub.models.AlbertTokenizer(proto=spm)
    preprocessor = keras_hub.models.AlbertTextClassifierPreprocessor(tokenizer)
    backbone = keras_hub.models.AlbertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers, num_heads=config.num_attention_heads,
        num_groups=1, num_inner_repetitions=1, embedding_dim=config.embedding_size, hidden_dim=config.hidden_size,
        intermediate_dim=config.intermediate_size, dropout=0.1, max_sequence_length=config.max_position_embeddings)
    model = keras_hub.models.AlbertTextClassifier(backbone, num_classes=2, preprocessor=preprocessor)
    model.compile(optimizer=keras.optimizers.AdamW(1e-5),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    first = slice(0, batch_size)
    model.fit(texts[first], labels[first], batch_size=batch_size, epochs=1, verbose=0)  # tracing
    n = fit_steps * batch_size
    start = time.perf_counter()
    model.fit(texts[:n], labels[:n], batch_size=batch_size, epochs=1, verbose=0)
    fit = n / (time.perf_counter() - start)
    model.predict(texts[:32], batch_size=32, verbose=0)
    start = time.perf_counter()
    model.predict(texts[:count], batch_size=32, verbose=0)
    return fit, count / (time.perf_counter() - start)


def serving_latency(config, spm: str, directory: str) -> tuple:
    """Seconds of one short query through the exported raw-string classifier at length 512: (buckets, fixed)."""
    import keras
    import tensorflow as tf

    from albert.data.features import boundaries
    from albert.tasks.classification.serving import export_classifier
    from albert.tasks.classification.model import AlbertClassifier

    keras.utils.set_random_seed(0)
    model = AlbertClassifier(config, num_labels=2)
    seconds = []
    for name, bounds in (("buckets", boundaries(512)), ("fixed", (512,))):
        path = os.path.join(directory, name)
        export_classifier(model, spm, True, ["0", "1"], False, 512, path, bounds)
        served = tf.saved_model.load(path)
        query = {"text_a": tf.constant(["A short query about the movie."])}
        served.serve(query)
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            served.serve(query)["logits"].numpy()
            best = min(best, time.perf_counter() - start)
        seconds.append(best)
    return tuple(seconds)


def main():
    from albert.ground.cpu import prefer_onednn

    prefer_onednn()  # before TensorFlow loads: what the command lines run (albert.ground.cpu)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--glue_dir", default=os.path.join(SHARED, "glue_real"))
    parser.add_argument("--spm_model_file", default=os.path.join(SHARED, "albert_30k_clean", "30k-clean.model"))
    parser.add_argument("--tasks", default="sst-2,cola,rte,qnli")
    parser.add_argument("--seq_lengths", default="512,128")
    parser.add_argument("--train_steps", type=int, default=6, help="timed training steps of the bucketed schemes")
    parser.add_argument("--fixed_steps", type=int, default=2, help="timed training steps with fixed padding")
    parser.add_argument("--eval_examples", type=int, default=512, help="examples evaluated by the bucketed schemes")
    parser.add_argument("--fixed_eval_examples", type=int, default=64)
    parser.add_argument("--fixed_batch_tokens", type=int, default=4096,
                        help="tokens per training batch with fixed padding at most (memory: see above)")
    parser.add_argument("--no_keras_hub", action="store_true")
    args = parser.parse_args()

    import numpy as np

    from albert.config import AlbertConfig
    from albert.data.features import boundaries, step_boundaries
    from albert.tasks.classification.model import AlbertClassifier
    from albert.tasks.classification.features import cached_features
    from albert.tasks.classification.glue import convert_example, get_task, read_examples
    from albert.text.tokenization import FullTokenizer

    print(f"# {cpu_name()}, {os.cpu_count()} CPUs; "
          f"python benchmarks/finetune.py {' '.join(sys.argv[1:])}")
    tokenizer = FullTokenizer(None, True, args.spm_model_file)
    config = AlbertConfig.preset("base_v2")
    work = tempfile.mkdtemp(prefix="albert-finetune-bench-")
    if "sst-2" in args.tasks:
        task = get_task("sst-2")
        examples = read_examples(task, args.glue_dir, "train")
        start = time.perf_counter()
        for example in examples:
            convert_example(example, task, 128, tokenizer)
        seconds = time.perf_counter() - start
        print(f"feature conversion, SST-2 train ({len(examples):,} sentences, FullTokenizer + packing): "
              f"{seconds:.1f} s, {len(examples) / seconds:,.0f} examples/s")
    rows = []
    for name in args.tasks.split(","):
        task = get_task(name)
        split = "dev" if name == "qnli" else "train"  # QNLI's train file is not in ../shared: its dev stands in
        examples = read_examples(task, args.glue_dir, split)
        texts = np.array([e.text_a for e in examples], dtype=object)  # keras-hub runs on SST-2 only
        labels = np.array([task.labels.index(e.label) for e in examples])
        for seq in (int(s) for s in args.seq_lengths.split(",")):
            record, _ = cached_features(task, args.glue_dir, split, tokenizer, seq, os.path.join(work, f"{name}{seq}"))
            lengths = [sum(convert_example(e, task, seq, tokenizer).input_mask) for e in examples]
            batch = BATCH[name]
            fixed, default = (seq,), boundaries(seq)
            row = {"task": name, "T": seq, "batch": batch,
                   "pad_fixed": epoch_padding(lengths, batch, fixed),
                   "pad_default": epoch_padding(lengths, batch, default, "none", step_boundaries(seq)),
                   "pad_grouped": epoch_padding(lengths, batch, default, "windows", step_boundaries(seq)),
                   "pad_eval": epoch_padding(lengths, 32, default, "windows", step_boundaries(seq))}
            out = os.path.join(work, "run")
            fixed_batch = min(batch, max(1, args.fixed_batch_tokens // seq))
            row["fixed_batch"] = fixed_batch
            row["train_fixed"] = train_rate(config, record, seq, fixed_batch, "none", False, args.fixed_steps,
                                            out + "1")
            if name == "sst-2" and seq == 128 and fixed_batch > 8:  # fixed padding's rate does not depend on the batch
                row["train_fixed_b8"] = train_rate(config, record, seq, 8, "none", False, args.fixed_steps * 2,
                                                   out + "4")
            row["train_default"] = train_rate(config, record, seq, batch, "default", False, args.train_steps, out + "2")
            row["train_grouped"] = train_rate(config, record, seq, batch, "default", True, args.train_steps, out + "3")
            model = AlbertClassifier(config, num_labels=2)
            row["eval_fixed"] = eval_rate(model, record, seq, 32, fixed, args.fixed_eval_examples)
            row["eval_grouped"] = eval_rate(model, record, seq, 32, step_boundaries(seq), args.eval_examples)
            if not args.no_keras_hub and seq == 512 and name == "sst-2":
                row["kh_fit"], row["kh_predict"] = keras_hub_rates(
                    texts, labels, args.spm_model_file, config, min(batch, max(1, args.fixed_batch_tokens // 512)),
                    args.fixed_steps, args.fixed_eval_examples)
            rows.append(row)
            print(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
                  flush=True)
    latency = serving_latency(config, args.spm_model_file, work)
    for r in rows:
        if "train_fixed_b8" in r:
            print(f"\nfixed padding, {r['task']} at T={r['T']}: {r['train_fixed']:.1f} ex/s in batches of "
                  f"{r['fixed_batch']}, {r['train_fixed_b8']:.1f} in batches of 8")
    print("\n| task | T | batch | train ex/s fixed / buckets / grouped | speed-up buckets, grouped | eval ex/s fixed / "
          "grouped | speed-up | padding computed: fixed / buckets / grouped / evaluation |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['task']} | {r['T']} | {r['batch']} (fixed: {r['fixed_batch']}) | {r['train_fixed']:.1f} / "
              f"{r['train_default']:.1f} / {r['train_grouped']:.1f} | {r['train_default'] / r['train_fixed']:.1f}x, "
              f"{r['train_grouped'] / r['train_fixed']:.1f}x | {r['eval_fixed']:.1f} / {r['eval_grouped']:.1f} | "
              f"{r['eval_grouped'] / r['eval_fixed']:.1f}x | {r['pad_fixed']:.0%} / {r['pad_default']:.0%} / "
              f"{r['pad_grouped']:.0%} / {r['pad_eval']:.0%} |")
    for r in rows:
        if "kh_fit" in r:
            print(f"\nkeras-hub AlbertTextClassifier (default preprocessor, sequence_length 512), {r['task']}: fit "
                  f"{r['kh_fit']:.1f} ex/s, predict {r['kh_predict']:.1f} ex/s; ours with the default buckets "
                  f"{r['train_default'] / r['kh_fit']:.1f}x its fit, grouped prediction "
                  f"{r['eval_grouped'] / r['kh_predict']:.1f}x its predict")
    print(f"\none short query through the exported raw-string classifier at --max_seq_length=512: "
          f"{latency[0] * 1e3:.1f} ms with buckets, {latency[1] * 1e3:.1f} ms fixed ({latency[1] / latency[0]:.1f}x)")


if __name__ == "__main__":
    main()
