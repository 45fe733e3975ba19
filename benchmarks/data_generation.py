"""Throughput and peak memory of create_pretraining_data.py against corpus size, dupe factor and workers.

The reference point is the original script on this machine kind: a 1.2 M-character English corpus (2,232
documents, one sentence per line), a 2,000-piece SentencePiece model, max_seq_length 128, dupe_factor 5 ->
16,965 instances in 23 s, about 730 instances/s, peak 620 MiB. No corpus can be downloaded here, so this script
makes an English-like one of the same shape (tools/synthetic_corpus.py) and times the whole command, start-up
included, as the original was timed.

    python benchmarks/data_generation.py            # prints a Markdown table
"""

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from albert.tokenization import preprocess_text, train_sentencepiece  # noqa: E402
from tools import synthetic_corpus  # noqa: E402

ORIGINAL_INSTANCES_PER_S = 730


def make_corpus(directory: str, documents: int, copies: int = 1) -> tuple:
    docs = synthetic_corpus.documents(documents, seed=1, max_sentences=8) * copies
    path = os.path.join(directory, f"corpus-{documents}x{copies}.txt")
    synthetic_corpus.write(path, docs)
    return path, os.path.getsize(path)


def run(corpus, model, output, dupe_factor, workers, max_seq_length=128):
    cmd = [sys.executable, os.path.join(ROOT, "create_pretraining_data.py"), f"--input_file={corpus}",
           f"--output_file={output}", f"--spm_model_file={model}", f"--max_seq_length={max_seq_length}",
           f"--dupe_factor={dupe_factor}", f"--num_workers={workers}", "--noprogress"]
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    seconds = time.time() - start
    instances = int(re.search(r"instances ([\d,]+)", proc.stdout).group(1).replace(",", ""))
    return instances, seconds


def peak_rss_mib(corpus, model, output, dupe_factor, workers):
    """Peak RSS of the largest process of a fresh run (the main process: workers hold only their tasks)."""
    code = (f"import resource, subprocess, sys; subprocess.run({[sys.executable, os.path.join(ROOT, 'create_pretraining_data.py'), f'--input_file={corpus}', f'--output_file={output}', f'--spm_model_file={model}', '--max_seq_length=128', f'--dupe_factor={dupe_factor}', f'--num_workers={workers}', '--noprogress']!r}, "
            "check=True, capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return int(out.strip().splitlines()[-1]) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="only the reference-shaped row")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus, chars = make_corpus(tmp, 2232)
        lowered = os.path.join(tmp, "lower.txt")
        with open(corpus, encoding="utf-8") as f, open(lowered, "w", encoding="utf-8") as out:
            out.writelines(preprocess_text(line, lower=True) + "\n" for line in f if line.strip())
        model = train_sentencepiece([lowered], os.path.join(tmp, "sp2000"), vocab_size=2000)
        output = os.path.join(tmp, "out.tfrecord")
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
