"""A deterministic English-like corpus for tests and benchmarks (no data set can be downloaded here).

Words are built from syllables with a Zipf-like frequency; sentences have capitals, commas, numbers with
thousands separators, an occasional accented or quoted word; one sentence per line, a blank line between
documents -- the input format of create_pretraining_data.py.
"""

import random

_SYLLABLES = ("ka", "lo", "mi", "ter", "san", "dor", "pe", "ri", "chu", "vel", "mon", "tha", "gre", "ble", "str",
              "ou", "in", "ex", "pro", "ment", "ing", "ed", "al", "ly", "est", "ion", "ber", "quin", "zo", "wha")
_EXTRA = ("café", "naïve", "Zürich", "“quoted”", "'tis", "São", "élan", "北京", "e-mail", "(aside)")


def make_words(count: int, rng: random.Random) -> list:
    words = set()
    while len(words) < count:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((1, 1, 2, 2, 2, 3, 3, 4)))))
    return sorted(words)


def sentence(words: list, weights: list, rng: random.Random) -> str:
    out = []
    for k in range(rng.randint(6, 22)):
        r = rng.random()
        if r < 0.03:
            out.append(f"{rng.randint(1, 99)},{rng.randint(0, 999):03d}")
        elif r < 0.05:
            out.append(rng.choice(_EXTRA))
        else:
            out.append(rng.choices(words, weights)[0])
        if k and rng.random() < 0.07:
            out[-1] += ","
    out[0] = out[0][0].upper() + out[0][1:]
    return " ".join(out) + rng.choice((".", ".", ".", "?", "!"))


def documents(num_documents: int, seed: int = 0, vocabulary: int = 3000, max_sentences: int = 14) -> list:
    """A list of documents, each a list of sentences."""
    rng = random.Random(seed)
    words = make_words(vocabulary, rng)
    weights = [1.0 / (rank + 10) for rank in range(len(words))]
    return [[sentence(words, weights, rng) for _ in range(rng.randint(2, max_sentences))]
            for _ in range(num_documents)]


def write(path: str, docs: list):
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n\n".join("\n".join(doc) for doc in docs) + "\n")
