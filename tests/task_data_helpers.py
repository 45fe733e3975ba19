"""The synthetic task data the tests write: a GLUE task folder (RTE-like: learnable), the RACE layout, a corpus
split over several input files."""

import gzip
import json
import random

WORDS = [f"w{i}" for i in range(20)]


def write_task(root, directory, header, rows):
    (root / directory).mkdir(parents=True, exist_ok=True)
    for split, split_rows in rows.items():
        with open(root / directory / f"{split}.tsv", "w") as f:
            f.write("\t".join(header) + "\n" + "".join("\t".join(r) + "\n" for r in split_rows))


def make_rte_like(root, rng):
    """Label `entailment` iff the second sentence carries the word alpha (the first never does)."""
    def row(i):
        marker = rng.choice(["alpha", "beta"])
        b = [rng.choice(WORDS) for _ in range(4)]
        b.insert(rng.randrange(5), marker)
        return [str(i), " ".join(rng.choice(WORDS) for _ in range(5)), " ".join(b),
                "entailment" if marker == "alpha" else "not_entailment"]
    write_task(root, "RTE", ["index", "sentence1", "sentence2", "label"],
               {"train": [row(i) for i in range(256)], "dev": [row(i) for i in range(128)]})


def setup_task(tmp_path):
    make_rte_like(tmp_path, random.Random(0))
    rng = random.Random(5)
    write_task(tmp_path, "RTE", ["index", "sentence1", "sentence2"],
               {"test": [[str(i), " ".join(rng.choice(WORDS) for _ in range(5)),
                          " ".join(rng.choice(WORDS) for _ in range(3)) + (" alpha" if i % 2 else " beta")]
                         for i in range(10)]})
    return [f"--data_dir={tmp_path}", *word_model_flags(tmp_path, "up", 16), "--max_seq_length=16"]


def word_model_flags(directory, last_word: str, max_position_embeddings: int) -> list:
    """--vocab_file and --albert_config_file of a tiny WordPiece model written in `directory`: the special pieces,
    alpha, beta, `last_word` and WORDS (28 pieces), 2 layers of width 32."""
    vocab = directory / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "alpha", "beta", last_word] + WORDS)
                     + "\n")
    config = directory / "albert_config.json"
    config.write_text(json.dumps({"vocab_size": 28, "embedding_size": 16, "hidden_size": 32, "num_hidden_layers": 2,
                                  "num_attention_heads": 2, "intermediate_size": 64,
                                  "max_position_embeddings": max_position_embeddings}))
    return [f"--vocab_file={vocab}", f"--albert_config_file={config}"]


def make_race(root, rng):
    """The right option is always the word `alpha`, at a random letter; the others are `beta` words."""
    for split, count in (("train", 40), ("dev", 12), ("test", 6)):
        for level in ("middle", "high"):
            directory = root / "RACE" / split / level
            directory.mkdir(parents=True)
            lines = []
            for a in range(count):
                questions, options, answers = [], [], []
                for q in range(2):
                    right = rng.randrange(4)
                    options.append(["alpha" if i == right else f"beta {rng.choice(WORDS)}" for i in range(4)])
                    questions.append(" ".join(rng.choice(WORDS) for _ in range(3)) + (" _" if q else ""))
                    answers.append("ABCD"[right])
                lines.append(json.dumps({"id": f"{level}{a}.txt", "article": " ".join(rng.choice(WORDS)
                                                                                      for _ in range(8)),
                                         "questions": questions, "options": options, "answers": answers}))
            (directory / "all.txt").write_text("\n".join(lines) + "\n")


def write_corpus_files(corpus_dir, directory) -> list:
    """The test corpus as three input files: plain text with runs of blank lines, gzip, and one with a one-line
    document; returns their paths (in an order that is not the sorted one)."""
    documents = open(corpus_dir / "corpus.txt", encoding="utf-8").read().strip().split("\n\n")
    a, b, c = documents[:120], documents[120:240], documents[240:]
    (directory / "a.txt").write_text("\n\n\n".join(a) + "\n\n", encoding="utf-8")
    with gzip.open(directory / "b.txt.gz", "wt", encoding="utf-8") as f:
        f.write("\n\n".join(b) + "\n")
    (directory / "c.txt").write_text("\n\n".join(c[:5] + ["A document of one line."] + c[5:]), encoding="utf-8")
    return [str(directory / name) for name in ("c.txt", "a.txt", "b.txt.gz")]
