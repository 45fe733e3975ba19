"""A GLUE-format pair task from the demo corpus, in MRPC's real layout (Quality, #1 ID, #2 ID, #1 String,
#2 String), half of each label. `--task order` (default): two consecutive sentences of a docstring, label 1 when
they are in their order, 0 when swapped. `--task follow`: label 1 when #2 is the sentence that follows #1, 0 when
#2 comes from another docstring. Train pairs come from the training documents, dev pairs from the held-out ones.

    python tools/demo_glue_task.py --corpus_dir out/demo --output_dir out/demo/glue
"""

import argparse
import os
import random


def documents(path):
    with open(path, encoding="utf-8") as f:
        return [d.splitlines() for d in f.read().split("\n\n") if len(d.splitlines()) >= 2]


def pairs(docs, count, rng, task):
    rows = []
    for i in range(count):
        doc = rng.randrange(len(docs))
        k = rng.randrange(len(docs[doc]) - 1)
        first = docs[doc][k]
        if i % 2 == 0:
            second, label = docs[doc][k + 1], "1"
        elif task == "order":
            first, second, label = docs[doc][k + 1], first, "0"
        else:
            other = rng.randrange(len(docs) - 1)
            other += other >= doc
            second, label = rng.choice(docs[other]), "0"
        rows.append([label, str(2 * i), str(2 * i + 1), first.replace("\t", " "), second.replace("\t", " ")])
    rng.shuffle(rows)
    return rows


def write(path, header, rows):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\t".join(header) + "\n" + "".join("\t".join(r) + "\n" for r in rows))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus_dir", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--train_pairs", type=int, default=8000)
    parser.add_argument("--dev_pairs", type=int, default=1000)
    parser.add_argument("--task", choices=("order", "follow"), default="order")
    args = parser.parse_args()
    rng = random.Random(0)
    directory = os.path.join(args.output_dir, "MRPC")
    os.makedirs(directory, exist_ok=True)
    header = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
    train = pairs(documents(os.path.join(args.corpus_dir, "corpus_train.txt")), args.train_pairs, rng, args.task)
    dev = pairs(documents(os.path.join(args.corpus_dir, "corpus_heldout.txt")), args.dev_pairs, rng, args.task)
    write(os.path.join(directory, "train.tsv"), header, train)
    write(os.path.join(directory, "dev.tsv"), header, dev)
    write(os.path.join(directory, "test.tsv"), ["index"] + header[1:], [[str(i)] + r[1:] for i, r in
                                                                        enumerate(dev[:200])])
    print(f"pair task ({args.task}): {len(train):,} train / {len(dev):,} dev pairs in {directory} (chance 0.5)")


if __name__ == "__main__":
    main()
