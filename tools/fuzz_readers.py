"""A fuzz campaign over the readers of a user's files (not a test; the fast tier is tests/test_reader_fuzz.py).

For each reader of tests/reader_targets.py, for a time budget: random bytes and mutations of the seed corpus
(slices of ../shared/glue_real and ../shared/conll2003, files the tests write), each read with a per-input time
bound. An input whose refusal is of a kind not seen before (its message with numbers and quoted values taken out)
joins the reader's pool, so the campaign walks deeper into the readers' rules. A failure is any exception but
AlbertError, a message of several lines, over the length bound or naming no file, or a hang; failures are kept
by (exception type, innermost place in albert/), one reproducer file each (the input's bytes, and beside it a
.txt saying what happened). Prints per reader: inputs tried, results, refusals, distinct failures.

    python tools/fuzz_readers.py                              # 10 minutes per reader, every reader
    python tools/fuzz_readers.py --minutes 1 --readers own-csv,conll --out /tmp/fuzz
    python tools/fuzz_readers.py --replay /tmp/fuzz            # re-read saved reproducers (after a fix)
    python tools/fuzz_readers.py --properties 20               # the property tests with 20 times their examples
    python tools/fuzz_readers.py --arguments 40                # the public entry points' and the tools' argument
                                                               # properties (tests/test_arguments.py), 40 times

The entry points on raw text (`fill_mask`, `answer`, `choose`, `predict`) and the tools take Python values and
command-line bytes, not files, so their campaign is a property campaign (`--arguments`: Hypothesis, freshly
seeded): any wrong type or value out of range is one AlbertError line, any argument bytes read or refused in one
line.
"""

import argparse
import hashlib
import json
import os
import random
import re
import sys
import tempfile
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests.reader_targets import PER_INPUT_SECONDS, TARGETS, judge, mutate, seeds  # noqa: E402

_VARYING = re.compile(r"0x[0-9a-fA-F]+|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\d+|/\S+")


def template(message: str) -> str:
    """A refusal's kind: its message with quoted values, numbers and paths taken out."""
    return _VARYING.sub("_", message)


def save(out: str, name: str, key: str, data: bytes, detail: str) -> str:
    directory = os.path.join(out, name)
    os.makedirs(directory, exist_ok=True)
    stem = hashlib.sha1(key.encode() + data).hexdigest()[:12]
    with open(os.path.join(directory, stem + ".bin"), "wb") as f:
        f.write(data)
    with open(os.path.join(directory, stem + ".txt"), "w", encoding="utf-8") as f:
        f.write(f"reader: {name}\nfailure: {key}\ninput: {data[:2000]!r} ({len(data)} bytes)\n\n{detail}\n")
    return os.path.join(directory, stem + ".bin")


def campaign(name: str, seconds: float, out: str, seed: int, bound: float, pool_limit: int = 400) -> dict:
    rng = random.Random(seed ^ zlib.crc32(name.encode()))
    base = list(seeds()[name])
    pool = list(base)
    kinds, failures, counts = set(), {}, {"result": 0, "refused": 0, "failure": 0}
    deadline = time.monotonic() + seconds
    with tempfile.TemporaryDirectory() as work:
        queue = list(pool)
        while time.monotonic() < deadline:
            data = queue.pop() if queue else mutate(rng, base if rng.random() < 0.6 else pool)
            outcome = judge(name, data, work, bound)
            counts[outcome.kind] += 1
            if outcome.kind == "failure":
                if outcome.key not in failures:
                    failures[outcome.key] = save(out, name, outcome.key, data, outcome.detail)
                    print(f"  {name}: NEW {outcome.key} -> {failures[outcome.key]}", flush=True)
            elif outcome.kind == "refused":
                kind = template(outcome.detail)
                if kind not in kinds:
                    kinds.add(kind)
                    if len(pool) < pool_limit and len(data) < 20000:
                        pool.append(data)
    return {"inputs": sum(counts.values()), **counts, "refusal kinds": len(kinds), "failures": failures}


def replay(directory: str, bound: float) -> int:
    """Read every saved reproducer again; the number still failing."""
    failing = 0
    with tempfile.TemporaryDirectory() as work:
        for name in sorted(os.listdir(directory)):
            if name not in TARGETS:
                continue
            for file in sorted(os.listdir(os.path.join(directory, name))):
                if file.endswith(".bin"):
                    with open(os.path.join(directory, name, file), "rb") as f:
                        outcome = judge(name, f.read(), work, bound)
                    failing += outcome.kind == "failure"
                    print(f"{name}/{file}: {outcome.kind} {outcome.key or outcome.detail[:120]}")
    return failing


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="time budget per reader (default 10)")
    parser.add_argument("--readers", default=",".join(TARGETS), help="comma-separated readers (default: all): "
                        + ", ".join(TARGETS))
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "albert-fuzz"),
                        help="directory for reproducers (one folder per reader)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bound", type=float, default=PER_INPUT_SECONDS, help="seconds per input before a hang")
    parser.add_argument("--replay", metavar="DIR", help="re-read the reproducers saved under DIR and stop")
    parser.add_argument("--properties", type=int, metavar="SCALE", help="run tests/test_reader_properties*.py with "
                        "SCALE times its examples, randomly seeded (Hypothesis), and stop")
    parser.add_argument("--arguments", type=int, metavar="SCALE", help="run tests/test_arguments.py's properties (the "
                        "public entry points' and the tools' arguments) with SCALE times their examples, randomly "
                        "seeded, and stop")
    args = parser.parse_args(argv)
    if args.replay:
        return 1 if replay(args.replay, args.bound) else 0
    if args.properties or args.arguments:
        import subprocess
        environment = dict(os.environ, ALBERT_PROPERTY_SCALE=str(args.properties or args.arguments))
        tests = [os.path.join(ROOT, "tests", f"test_reader_properties{part}.py") for part in ("", "_tasks", "_text")]
        if args.arguments:
            tests = [os.path.join(ROOT, "tests", "test_arguments.py"), "-k", "any_"]
        return subprocess.call([sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "-q",
                                "--hypothesis-show-statistics", *tests],
                               cwd=ROOT, env=environment)
    names = [n.strip() for n in args.readers.split(",") if n.strip()]
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        parser.error(f"unknown reader(s) {', '.join(unknown)}; use {', '.join(TARGETS)}")
    rows = []
    for name in names:
        print(f"{name}: {args.minutes:g} min ...", flush=True)
        report = campaign(name, args.minutes * 60, args.out, args.seed, args.bound)
        rows.append((name, report))
        print(f"{name}: {report['inputs']} inputs ({report['result']} read, {report['refused']} refused in one line, "
              f"{report['refusal kinds']} kinds of refusal), {len(report['failures'])} distinct failure(s)", flush=True)
        for key, path in report["failures"].items():
            print(f"    {key}: {path}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump({"minutes": args.minutes, "seed": args.seed, "readers": dict(rows)}, f, indent=1)
    print("\n| reader | inputs | read | refused | distinct failures |\n|---|---:|---:|---:|---:|")
    for name, report in rows:
        print(f"| {name} | {report['inputs']} | {report['result']} | {report['refused']} | "
              f"{len(report['failures'])} |")
    return 1 if any(report["failures"] for _, report in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
