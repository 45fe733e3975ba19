"""Shared by the export tests and others: varied strings, a small SentencePiece model with digit+comma pieces, and
running a script or an app-style snippet in a new interpreter."""

import os
import random
import subprocess
import sys
import textwrap

from tests.helpers import ROOT

FRAGMENTS = ["Hello", "WORLD", "Café", "naïve", "Zoë’s", "“quoted”", '"plain"', "1,024", "12,345,678", "3,5",
             "a,1,", "東京", "中文字", "São Paulo", "ÉTÉ", "don't", "ﬁne", "①", "½", "$2,500.00", "(parens)", "-",
             "–", "—", "€5", "£3", "Straße", "ΟΔΟΣ", "x\u00a0y", "résumé", "7,", "NASA", "İstanbul", "e\u0301t\u00e9"]
SEPARATORS = [" ", " ", " ", "", "  ", "\t", "\n ", "\u2003"]
WORDS = ["the", "cat", "sat", "on", "a", "mat", "and", "then", "ran", "far", "away", "from", "home", "with", "its",
         "friend", "number", "million", "paid", "about"]


# No run of one repeated digit ("000"): where SentencePiece's best segmentations tie exactly ("0"+"00" or "00"+"0",
# same score), tensorflow-text's bundled SentencePiece and sentencepiece 0.2.3 break the tie differently (README).
def random_strings(rng, count):
    out = ["", " ", "\t\n"]
    while len(out) < count:
        parts = [rng.choice(FRAGMENTS + WORDS + WORDS) for _ in range(rng.randrange(1, 14))]
        text = "".join(p + rng.choice(SEPARATORS) for p in parts)
        out.append(rng.choice(["", " ", "  "]) + text)
    return out


def train_sentencepiece_with_numbers(directory) -> str:
    """A small ALBERT-style SentencePiece model whose vocabulary has digit+comma pieces (so the digit-comma rule is
    exercised)."""
    from albert.text.tokenization import preprocess_text, train_sentencepiece

    rng = random.Random(3)
    lines = []
    for _ in range(3000):
        words = [rng.choice(WORDS + [f"{rng.randrange(1, 99)},{rng.randrange(100, 999)}", "1,", "2,", "10,"])
                 for _ in range(10)]
        lines.append(preprocess_text(" ".join(words) + " " + rng.choice(FRAGMENTS), lower=True))
    (directory / "text.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return train_sentencepiece([str(directory / "text.txt")], str(directory / "sp"), vocab_size=300)


def fresh(code: str, cwd, env_extra=None, timeout=300, python=sys.executable):
    """Run `code` in a new interpreter (`python`) that cannot import this package (no PYTHONPATH, cwd outside the
    repo), as an app developer's script would."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", **(env_extra or {}))
    result = subprocess.run([python, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=cwd,
                            env=env, timeout=timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def run_script(name, *args):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, os.path.join(ROOT, name), *args], capture_output=True, text=True,
                          timeout=600, env=env)
