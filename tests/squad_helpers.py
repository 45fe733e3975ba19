"""A synthetic, learnable extractive task in the SQuAD JSON layout, and the tiny model and SentencePiece model that
learn it: the answer is the word right after `code` (2.0: a third of the paragraphs have no code)."""

import json
import os
import subprocess
import sys

from tests.helpers import ROOT

# The tiny answering models of tests/test_answers.py and tests/test_squad_serving.py (over the released 30k-clean
# SentencePiece model), and their long context: ~90 pieces, seven windows at max_seq_length 40 and doc_stride 12;
# accents, a curly quote and a run of spaces for the piece-to-character alignment.
ANSWERING_CONFIG = dict(vocab_size=30000, embedding_size=8, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=24, max_position_embeddings=64,
                        initializer_range=1.0)
LONG_CONTEXT = ("The river Moselle rises in the Vosges and flows north  through Lorraine, past Metz and Thionville, "
                "into Luxembourg and Germany. At Koblenz it meets the Rhine. Its valley is famous for Riesling "
                "wine, terraced vineyards, Roman ruins at Trier and the “Porta Nigra”, castles at Cochem and Eltz, "
                "and the café towns of the Mittelmosel, where boats carry visitors between Bernkastel-Kues and "
                "Traben-Trarbach.")

FILLER = ["red", "blue", "green", "tree", "house", "river", "stone", "cloud", "bird", "lamp", "door", "road"]
ANSWERS = ["apple", "mango", "lemon", "peach", "grape", "melon", "olive", "plum"]


def make_squad(path, rng, paragraphs: int, version_2: bool):
    data = []
    for p in range(paragraphs):
        words = [rng.choice(FILLER) for _ in range(rng.randrange(6, 14))]
        impossible = version_2 and p % 3 == 0
        qa = {"id": f"q{p}", "question": "what is the code?"}
        if impossible:
            qa.update(answers=[], is_impossible=True)
        else:
            answer = rng.choice(ANSWERS)
            at = rng.randrange(len(words) + 1)
            words[at:at] = ["code", answer]
            start = len(" ".join(words[:at + 1])) + 1
            qa["answers"] = [{"text": answer, "answer_start": start}]
            if version_2:
                qa["is_impossible"] = False
        data.append({"title": f"t{p}", "paragraphs": [{"context": " ".join(words).capitalize() + ".",
                                                       "qas": [qa]}]})
    with open(path, "w") as f:
        json.dump({"version": "v2.0" if version_2 else "1.1", "data": data}, f)


def make_sentencepiece(directory, rng) -> str:
    from albert.text.tokenization import train_sentencepiece

    text = directory / "sp.txt"
    lines = [" ".join(rng.choice(FILLER + ANSWERS + ["code", "what", "is", "the"]) for _ in range(12))
             for _ in range(600)]
    text.write_text("\n".join(lines) + "\n")
    return train_sentencepiece([str(text)], str(directory / "sp"), vocab_size=56)


def tiny_config(directory) -> str:
    path = directory / "albert_config.json"
    path.write_text(json.dumps({"vocab_size": 60, "embedding_size": 16, "hidden_size": 32, "num_hidden_layers": 2,
                                "num_attention_heads": 2, "intermediate_size": 64, "max_position_embeddings": 48}))
    return str(path)


def run_squad(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, os.path.join(ROOT, "run_squad.py"), *args], capture_output=True,
                          text=True, timeout=timeout, env=env)
