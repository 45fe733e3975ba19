"""How many answers of a SQuAD file `run_squad.py` places in the SentencePiece pieces of their contexts.

    python tools/squad_alignment.py FILE.json [--spm_model_file=MODEL] [--cased]

For each question's first answer (every answer of a training file): `placed` when its characters map to pieces (so
training has a target for it, and a predicted span can give it back), and `exact` when the text of those pieces, as
predictions give it back, is the answer itself (less than `placed` where a piece is wider than the answer: an
unknown run of Hangul or CJK is one piece). Prints one line:

    FILE.json: 24 answers; placed in the pieces 24 (100.0%); given back exactly 9 (37.5%)
"""

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from albert.tasks.squad.windows import align, answer_pieces  # noqa: E402
from albert.text.tokenization import load_sentencepiece  # noqa: E402

SPM = os.path.join(os.path.dirname(ROOT), "shared", "albert_30k_clean", "30k-clean.model")


def answers(path: str):
    """(context, answer text, answer_start) of each question's first answer."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                if qa.get("answers"):
                    yield paragraph["context"], qa["answers"][0]["text"], qa["answers"][0]["answer_start"]


def placement(sp_model, cases, lower: bool = True) -> tuple:
    """(answers, placed, exact) over `cases`: (context, answer text, answer_start)."""
    total = placed = exact = 0
    alignments = {}
    for context, text, start in cases:
        total += 1
        if context not in alignments:
            alignments[context] = align(sp_model, context, lower)
        alignment = alignments[context]
        pieces = answer_pieces(alignment, start, text) if getattr(alignment, "ok", True) else None
        if pieces is None:
            continue
        placed += 1
        exact += alignment.text(pieces[0], pieces[1], context) == text.strip()
    return total, placed, exact


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", help="a SQuAD 1.1 / 2.0 JSON file")
    parser.add_argument("--spm_model_file", default=SPM, help="the SentencePiece model (default: the released one)")
    parser.add_argument("--cased", action="store_true", help="no lower-casing (--do_lower_case=false)")
    args = parser.parse_args(argv)
    total, placed, exact = placement(load_sentencepiece(args.spm_model_file), answers(args.file), not args.cased)
    share = lambda n: f"{100 * n / total:.1f}%" if total else "-"  # noqa: E731
    print(f"{args.file}: {total} answers; placed in the pieces {placed} ({share(placed)}); given back exactly {exact} "
          f"({share(exact)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
