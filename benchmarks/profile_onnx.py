"""Where a query's time goes in ONNX Runtime, for two model.onnx files side by side (ours from
`--onnx_export`, and Hugging Face's from `torch.onnx.export`, as benchmarks/serving.py writes them): ONNX Runtime's
own profiler (`SessionOptions.enable_profiling`), node times summed by operator type, ms per query, 2 threads.

    python benchmarks/profile_onnx.py WORK/serving/model.onnx WORK/hf.onnx        # WORK: serving.py's directory
    python benchmarks/profile_onnx.py ours.onnx theirs.onnx --queries 100 --length 24
    python benchmarks/profile_onnx.py ours.onnx theirs.onnx --queries 20 --batch 32     # a batch job's batch

Each query is `--batch` rows (default 1) of [CLS] + `--length` - 2 random ids + [SEP] (SST-2's median is about 24
pieces). Also prints each graph's node count once ONNX Runtime has optimized it, and each file's p50 wall time a
query unprofiled, the two files taking turns in blocks on the same ids in this one process. Needs only onnxruntime,
onnx and NumPy.
"""

import argparse
import collections
import json
import os
import tempfile

import numpy as np


def session_of(path: str, threads: int, **settings):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3  # its warning that an optimized file is for this machine only: it is
    for name, value in settings.items():
        setattr(options, name, value)
    return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def queries_for(session, count: int, length: int, batch: int) -> list:
    """`count` feeds of `batch` rows of [CLS] + `length` - 2 random ids + [SEP] (seed 0: the same ids for every
    file), in the session's input names and integer type."""
    rng = np.random.default_rng(0)
    inputs = session.get_inputs()
    dtype = np.int64 if "int64" in inputs[0].type else np.int32
    feeds = []
    for _ in range(count):
        ids = np.concatenate([np.full((batch, 1), 2), rng.integers(5, 30000, (batch, length - 2)),
                              np.full((batch, 1), 3)], axis=1).astype(dtype)
        feeds.append({i.name: ids if "ids" in i.name and "type" not in i.name and "segment" not in i.name
                      else np.ones_like(ids) if "mask" in i.name else np.zeros_like(ids) for i in inputs})
    return feeds


def profile(path: str, queries: int, length: int, threads: int = 2, batch: int = 1) -> tuple:
    """({operator type: ms per query}, nodes once ONNX Runtime has optimized the graph) of `path`, `batch` rows of
    `length` pieces a query."""
    import onnx

    directory = tempfile.mkdtemp(prefix="albert-ort-profile-")
    session = session_of(path, threads, enable_profiling=True, profile_file_prefix=os.path.join(directory, "p"),
                         optimized_model_filepath=os.path.join(directory, "optimized.onnx"))
    feeds = queries_for(session, queries, length, batch)
    for feed in [feeds[0]] + feeds:
        session.run(None, feed)
    with open(session.end_profiling()) as f:
        events = json.load(f)
    by_op = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time"):
            by_op[event["args"]["op_name"]] += event["dur"] / 1e3
    nodes = len(onnx.load(os.path.join(directory, "optimized.onnx"), load_external_data=False).graph.node)
    return {op: ms / (queries + 1) for op, ms in by_op.items()}, nodes


def alternated(paths: list, queries: int, length: int, threads: int = 2, batch: int = 1, blocks: int = 6) -> list:
    """p50 wall ms a query of each file, unprofiled, the files taking turns in `blocks` blocks each of
    `queries` // `blocks` queries on the same ids (the order reversed every other round): one process, so the
    machine's drift falls on every file alike."""
    import time

    sessions = [session_of(path, threads) for path in paths]
    feeds = [queries_for(session, max(1, queries // blocks), length, batch) for session in sessions]
    times = [[] for _ in paths]
    for round_ in range(blocks):
        for k in (range(len(paths)) if round_ % 2 == 0 else reversed(range(len(paths)))):
            sessions[k].run(None, feeds[k][0])  # the block's warm-up: its weights back in the caches
            for feed in feeds[k]:
                start = time.perf_counter()
                sessions[k].run(None, feed)
                times[k].append(time.perf_counter() - start)
    return [float(np.median(t)) * 1e3 for t in times]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ours")
    parser.add_argument("theirs")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--length", type=int, default=24)
    parser.add_argument("--batch", type=int, default=1, help="rows a query (the batch job's: 32)")
    args = parser.parse_args(argv)
    ours, ours_nodes = profile(args.ours, args.queries, args.length, batch=args.batch)
    theirs, theirs_nodes = profile(args.theirs, args.queries, args.length, batch=args.batch)
    ours_wall, theirs_wall = alternated([args.ours, args.theirs], args.queries, args.length, batch=args.batch)
    print(f"# python benchmarks/profile_onnx.py {args.ours} {args.theirs} --queries {args.queries} "
          f"--length {args.length} --batch {args.batch}")
    print(f"wall ms per query (p50, unprofiled, the two taking turns in blocks on the same ids): ours "
          f"{ours_wall:.2f}, theirs {theirs_wall:.2f}; node time: ours {sum(ours.values()):.2f}, theirs "
          f"{sum(theirs.values()):.2f}; nodes after ONNX Runtime's optimization: ours {ours_nodes}, theirs "
          f"{theirs_nodes}")
    print("| operator | ours ms | theirs ms |")
    print("|---|---:|---:|")
    for op in sorted(set(ours) | set(theirs), key=lambda o: -max(ours.get(o, 0), theirs.get(o, 0))):
        print(f"| {op} | {ours.get(op, 0):.3f} | {theirs.get(op, 0):.3f} |")


if __name__ == "__main__":
    main()
