"""A real-English corpus from the docstrings of the Python standard library and the installed packages.

Nothing is downloaded and nothing is imported: every .py file under the standard library and site-packages is
parsed with `ast`, and each module, class or function docstring of at least `--min_sentences` prose sentences
becomes a document (one sentence per line, a blank line between documents). Code examples, parameter tables and
other non-prose lines are dropped. About 1 in `--heldout_every` documents (chosen by a hash of its source, so the
split is stable) goes to the held-out file.

    python tools/demo_corpus.py --output_dir out/demo
"""

import argparse
import ast
import hashlib
import multiprocessing
import os
import re
import sys
import sysconfig

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")
_PROSE = re.compile(r"^[A-Za-z(\"'][^\n]*[.!?]$")


def source_roots() -> list:
    paths = sysconfig.get_paths()
    roots = [paths["stdlib"], paths["purelib"], paths["platlib"]]
    return sorted({os.path.realpath(r) for r in roots if r and os.path.isdir(r)})


def python_files(root: str):
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in ("test", "tests", "__pycache__", "idle_test"))
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(directory, name)


def sentences_of(docstring: str) -> list:
    """Prose sentences of a docstring: paragraphs joined, split at sentence ends, code and tables dropped."""
    out = []
    for paragraph in re.split(r"\n\s*\n", docstring):
        lines = [l.strip() for l in paragraph.splitlines()]
        if not lines or any(l.startswith((">>>", "...", "$", "|", "+-", "-", "*", ":", "..")) for l in lines):
            continue
        if any(re.search(r"[{}\[\]=<>]|::|__|\w\(", l) for l in lines):
            continue
        text = " ".join(l for l in lines if l)
        for sentence in _SENTENCE_END.split(text):
            sentence = sentence.strip()
            if 4 <= len(sentence.split()) <= 60 and _PROSE.match(sentence):
                out.append(sentence)
    return out


def file_documents(path: str) -> list:
    """The prose docstrings of one file, as lists of sentences (empty when it does not parse)."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (SyntaxError, UnicodeDecodeError, ValueError, OSError, RecursionError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            if doc:
                out.append(sentences_of(doc))
    return out


def documents(min_sentences: int):
    """Documents in file order (files parsed by two processes; the order, and so the corpus, is the same)."""
    seen = set()
    paths = [path for root in source_roots() for path in python_files(root)]
    with multiprocessing.Pool(2) as pool:
        for docs in pool.imap(file_documents, paths, chunksize=32):
            for sentences in docs:
                key = "\n".join(sentences)
                if len(sentences) >= min_sentences and key not in seen:
                    seen.add(key)
                    yield key


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--min_sentences", type=int, default=2)
    parser.add_argument("--heldout_every", type=int, default=20)
    parser.add_argument("--max_bytes", type=int, default=4_000_000, help="stop after this much training text")
    args = parser.parse_args(argv)
    os.makedirs(args.output_dir, exist_ok=True)
    train_path = os.path.join(args.output_dir, "corpus_train.txt")
    heldout_path = os.path.join(args.output_dir, "corpus_heldout.txt")
    counts = {"train": 0, "heldout": 0}
    with open(train_path + ".tmp", "w", encoding="utf-8") as train, \
            open(heldout_path + ".tmp", "w", encoding="utf-8") as heldout:
        for doc in documents(args.min_sentences):
            digest = int(hashlib.sha1(doc.encode()).hexdigest(), 16)
            split = "heldout" if digest % args.heldout_every == 0 else "train"
            (heldout if split == "heldout" else train).write(doc + "\n\n")
            counts[split] += 1
            if train.tell() >= args.max_bytes:
                break
    os.replace(train_path + ".tmp", train_path)
    os.replace(heldout_path + ".tmp", heldout_path)
    sizes = {k: os.path.getsize(p) for k, p in (("train", train_path), ("heldout", heldout_path))}
    print(f"corpus: {counts['train']:,} training documents ({sizes['train']:,} bytes), {counts['heldout']:,} "
          f"held-out documents ({sizes['heldout']:,} bytes) from {', '.join(source_roots())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
