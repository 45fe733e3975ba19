"""Throughput and peak memory of create_pretraining_data.py against corpus size, dupe factor and workers.

The reference point is the original script on this machine kind: a 1.2 M-character English corpus (2,232
documents, one sentence per line), a 2,000-piece SentencePiece model, max_seq_length 128, dupe_factor 5 ->
16,965 instances in 23 s, about 730 instances/s, peak 620 MiB. No corpus can be downloaded here, so this script
makes an English-like one of the same shape (tools/synthetic_corpus.py) and times the whole command, start-up
included, as the original was timed.

    python benchmarks/data_generation.py            # prints a Markdown table
    python benchmarks/data_generation.py --scale    # corpus size x1, x10, x30, x100 (files of the reference size)
"""

import argparse
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from albert.text.tokenization import preprocess_text, train_sentencepiece  # noqa: E402
from tools import synthetic_corpus  # noqa: E402

ORIGINAL_INSTANCES_PER_S = 730


def make_corpus(directory: str, documents: int, copies: int = 1) -> tuple:
    docs = synthetic_corpus.documents(documents, seed=1, max_sentences=8) * copies
    path = os.path.join(directory, f"corpus-{documents}x{copies}.txt")
    synthetic_corpus.write(path, docs)
    return path, os.path.getsize(path)


BEAM_TWO_WORKERS = ["--runner=DirectRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=2"]


def command(corpus, model, output, dupe_factor, workers, max_seq_length=128, beam=False) -> list:
    """create_pretraining_data.py: local with `workers` processes, on Beam's DirectRunner with 2 processes
    (`beam=True`), or with these runner flags (`beam` a list)."""
    cmd = [sys.executable, os.path.join(ROOT, "create_pretraining_data.py"), f"--input_file={corpus}",
           f"--output_file={output}", f"--spm_model_file={model}", f"--max_seq_length={max_seq_length}",
           f"--dupe_factor={dupe_factor}", "--noprogress"]
    if isinstance(beam, list):
        return cmd + beam
    return cmd + (BEAM_TWO_WORKERS if beam else [f"--num_workers={workers}"])


def run(corpus, model, output, dupe_factor, workers, max_seq_length=128, beam=False):
    cmd = command(corpus, model, output, dupe_factor, workers, max_seq_length, beam)
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    seconds = time.time() - start
    instances = int(re.search(r"instances ([\d,]+)", proc.stdout).group(1).replace(",", ""))
    return instances, seconds


def peak_rss_mib(corpus, model, output, dupe_factor, workers):
    """Peak RSS of the largest process of a fresh run (the main process: workers hold only their tasks)."""
    code = (f"import resource, subprocess; subprocess.run({command(corpus, model, output, dupe_factor, workers)!r}, "
            "check=True, capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return int(out.strip().splitlines()[-1]) / 1024


def tree_peak_rss_mib(cmd: list) -> float:
    """Peak of the summed RSS of a command and all its descendants (sampled every 20 ms from /proc)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0
    while proc.poll() is None:
        parents = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    pass
        tree, frontier = {proc.pid}, [proc.pid]
        while frontier:
            children = [pid for pid, parent in parents.items() if parent in frontier and pid not in tree]
            tree.update(children)
            frontier = children
        total = 0
        for pid in tree:
            try:
                with open(f"/proc/{pid}/status") as f:
                    total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
            except (OSError, StopIteration):
                pass
        peak = max(peak, total)
        time.sleep(0.02)
    if proc.returncode:
        raise RuntimeError(proc.stderr.read()[-2000:])
    return peak / 1024


def dask_row(pattern: str, model: str, tmp: str, dupe_factor: int) -> tuple:
    """(instances, seconds, client's peak RSS MiB, each worker's peak RSS MiB) of a run on Beam's DaskRunner
    against a fresh dask.distributed cluster of 2 single-threaded worker processes on 127.0.0.1."""
    from tools.dask_cluster import LocalProcessCluster

    output = os.path.join(tmp, "beam", "train")
    with LocalProcessCluster(os.path.join(tmp, "dask"), workers=2) as cluster:
        flags = ["--runner=DaskRunner", f"--dask_client_address={cluster.address}"]
        instances, seconds = run(pattern, model, output, dupe_factor, 2, beam=flags)
        shutil.rmtree(os.path.join(tmp, "beam"), ignore_errors=True)
        client = tree_peak_rss_mib(command(pattern, model, output, dupe_factor, 2, beam=flags))
        workers = cluster.peak_rss_mib()
    shutil.rmtree(os.path.join(tmp, "beam"), ignore_errors=True)
    shutil.rmtree(os.path.join(tmp, "dask"), ignore_errors=True)
    return instances, seconds, client, workers


def scale_table(tmp: str, corpus: str, model: str, dupe_factor: int = 2, sizes=(1, 10, 30, 100)):
    """Corpus x1, x10, x30, x100 as that many files of the reference corpus's size (how a user shards a corpus),
    1 and 2 workers, DirectRunner and DaskRunner: instances/s and the peak RSS of the whole process tree (for Dask:
    of the client's tree, and of each worker process)."""
    print(f"\nCorpus size (files of {os.path.getsize(corpus) / 1e6:.2f} MB each), dupe_factor {dupe_factor}, "
          "max_seq_length 128; peak RSS of the process tree (workers included)\n")
    modes = [(1, False), (2, False)]
    try:
        logging.getLogger().setLevel(logging.ERROR)  # Beam's import-time notice (apitools)
        import apache_beam  # noqa: F401

        modes.append((2, True))
        import distributed  # noqa: F401

        modes.append((2, "dask"))
    except ImportError:
        print("(apache-beam or dask is not installed: no DirectRunner / DaskRunner rows; pip install -r "
              "requirements-beam.txt)")
    print("| corpus | files | MB | run | instances | seconds | instances/s | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for copies in sizes:
        directory = os.path.join(tmp, f"x{copies}")
        os.makedirs(directory, exist_ok=True)
        for i in range(copies):
            link = os.path.join(directory, f"part-{i:05d}.txt")
            if not os.path.exists(link):
                os.symlink(corpus, link)
        pattern = os.path.join(directory, "part-*.txt")
        for workers, beam in modes:
            if beam == "dask":
                instances, seconds, client, peaks = dask_row(pattern, model, tmp, dupe_factor)
                print(f"| x{copies} | {copies} | {copies * os.path.getsize(corpus) / 1e6:,.1f} | DaskRunner, 2 "
                      f"workers | {instances:,} | {seconds:.2f} | {instances / seconds:,.0f} | client {client:,.0f}, "
                      f"workers {' / '.join(f'{p:,.0f}' for p in peaks)} |", flush=True)
                continue
            output = os.path.join(tmp, "beam", "train") if beam else os.path.join(tmp, "scale.tfrecord")
            shutil.rmtree(os.path.join(tmp, "beam"), ignore_errors=True)
            instances, seconds = run(pattern, model, output, dupe_factor, workers, beam=beam)
            shutil.rmtree(os.path.join(tmp, "beam"), ignore_errors=True)
            rss = tree_peak_rss_mib(command(pattern, model, output, dupe_factor, workers, beam=beam))
            name = "DirectRunner, 2 processes" if beam else f"local, {workers} worker{'s' if workers > 1 else ''}"
            print(f"| x{copies} | {copies} | {copies * os.path.getsize(corpus) / 1e6:,.1f} | {name} | "
                  f"{instances:,} | {seconds:.2f} | {instances / seconds:,.0f} | {rss:,.0f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="only the reference-shaped row")
    parser.add_argument("--scale", action="store_true", help="only the corpus-size table")
    parser.add_argument("--sizes", default="1,10,30,100", help="with --scale: the corpus sizes (copies)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus, chars = make_corpus(tmp, 2232)
        lowered = os.path.join(tmp, "lower.txt")
        with open(corpus, encoding="utf-8") as f, open(lowered, "w", encoding="utf-8") as out:
            out.writelines(preprocess_text(line, lower=True) + "\n" for line in f if line.strip())
        model = train_sentencepiece([lowered], os.path.join(tmp, "sp2000"), vocab_size=2000)
        output = os.path.join(tmp, "out.tfrecord")
        if args.scale:
            scale_table(tmp, corpus, model, sizes=[int(n) for n in args.sizes.split(",")])
            return
        rows = [(1, 5, 1), (1, 5, 2)]
        if not args.quick:
            rows += [(1, 20, 1), (1, 20, 2), (1, 40, 1), (1, 40, 2), (4, 5, 1), (4, 5, 2)]
        print(f"corpus: {chars:,} characters, 2,232 documents (x copies); SentencePiece 2,000 pieces; "
              "max_seq_length 128; CPU cores: " + str(os.cpu_count()))
        print("| corpus copies | dupe_factor | workers | instances | seconds | instances/s | x original | "
              "peak RSS MiB |")
        print("|---|---|---|---|---|---|---|---|")
        for copies, dupe, workers in rows:
            path = corpus if copies == 1 else make_corpus(tmp, 2232, copies)[0]
            instances, seconds = min((run(path, model, output, dupe, workers) for _ in range(2)),
                                     key=lambda r: r[1])
            rss = peak_rss_mib(path, model, output, dupe, workers)
            rate = instances / seconds
            print(f"| {copies} | {dupe} | {workers} | {instances:,} | {seconds:.2f} | {rate:,.0f} | "
                  f"{rate / ORIGINAL_INSTANCES_PER_S:.1f} | {rss:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
