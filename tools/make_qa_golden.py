"""Make tests/fixtures/qa/golden.json: transformers' `pipeline("question-answering")` on a tiny random ALBERT SQuAD 1.1
model (run once), and print how often its answers differ from `AlbertSquadV1.answer`'s.

The model is `tiny_squad()` -- a tiny AlbertSquadV1 over the released 30k-clean SentencePiece model (read in place)
whose every weight is drawn from a fixed seed (make_fill_mask_golden.draw_weights) -- written in the release layout
and converted with `python -m albert.convert --to=huggingface`; transformers loads the converted directory as
`AlbertForQuestionAnswering`. The questions and contexts are real SQuAD-derived text: QNLI's dev questions with their
Wikipedia sentences (../shared/glue_real, read in place), as one-window cases, and paragraphs of several such
sentences, as several-window cases.

The two post-processings pick the same span in one window: the original keeps the best start + end logit sum of the
valid spans, transformers the best product of start and end probabilities, and in one window the softmax denominators
are the same for every span. Across windows they differ by design: transformers compares probabilities normalised per
window, the original logit sums, and only from the window where the start has its most context. tests/test_qa_peer.py
holds the one-window answers equal (text and character offsets) where the two tokenizers give the same pieces.

transformers 5 removed the question-answering pipeline; this script needs transformers 4.57.1 (PyTorch, not its
TensorFlow models, which want tf-keras). Usage, from the repository root, in a venv of
tools/requirements-reference.txt with transformers 4.57.1 put in front of its transformers 5:
    python -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install -r tools/requirements-reference.txt
    /tmp/refvenv/bin/pip install --target /tmp/tf4 transformers==4.57.1 && rm -rf /tmp/tf4/numpy*
    USE_TF=0 PYTHONPATH=/tmp/tf4:. /tmp/refvenv/bin/python tools/make_qa_golden.py
It printed (2026-12-03): one window: 60 questions, answers differ on 10; of the 47 tokenized alike, on 1
(n_best_size 20) and 0 (n_best_size 96: every span a candidate); several windows: 20 questions, answers differ on 18;
of the 1 tokenized alike, on 1 and 1.
"""

import csv
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import make_fill_mask_golden as fill_mask_tool  # noqa: E402

OUT = os.path.join(ROOT, "tests", "fixtures", "qa", "golden.json")
SPM = fill_mask_tool.SPM
QNLI = os.path.join(ROOT, "..", "shared", "glue_real", "QNLI", "dev.tsv")
CONFIG = dict(fill_mask_tool.CONFIG, max_position_embeddings=96)
SEED = 1168
SEQ_LENGTH, DOC_STRIDE, MAX_QUERY_LENGTH, MAX_ANSWER_LENGTH = 96, 24, 32, 30
ONE_WINDOW, SEVERAL_WINDOWS = 60, 20  # cases of each kind
PARAGRAPH = 4  # sentences per several-window context


def cases(qnli: str = QNLI) -> list:
    """(question, context, kind) pairs from QNLI's dev file: its first ONE_WINDOW rows whose sentence fits one
    window, then SEVERAL_WINDOWS paragraphs of PARAGRAPH consecutive sentences, each asked its first row's question."""
    with open(qnli, encoding="utf-8", newline="") as f:
        rows = [(r["question"], r["sentence"]) for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]
    short = [(q, s, "one window") for q, s in rows if len(s) < 160][:ONE_WINDOW]
    rest = rows[len(rows) // 2:]
    long = [(rest[i][0], " ".join(s for _, s in rest[i:i + PARAGRAPH]), "several windows")
            for i in range(0, PARAGRAPH * SEVERAL_WINDOWS, PARAGRAPH)]
    return short + long


def tiny_squad(spm=SPM):
    """The tiny AlbertSquadV1 of the fixture, with its preprocessor (`spm`: 30k-clean.model)."""
    import keras
    import numpy as np

    from albert.config import AlbertConfig
    from albert.model.preprocessor import AlbertPreprocessor
    from albert.tasks.squad.model import AlbertSquadV1

    keras.mixed_precision.set_global_policy("float32")
    model = AlbertSquadV1(AlbertConfig(**CONFIG))
    ones = np.ones((1, 8), np.int32)
    model({"input_ids": ones, "input_mask": ones, "segment_ids": ones * 0}, training=False)  # builds the weights
    fill_mask_tool.draw_weights(model, SEED)
    model.preprocessor = AlbertPreprocessor(spm, seq_length=SEQ_LENGTH)
    return model


def ours(model, pairs: list, n_best_size: int = 20) -> list:
    """AlbertSquadV1.answer on the pairs with the fixture's settings. The original looks for the best span among the
    `n_best_size` best starts and ends only; transformers among all: at `n_best_size=SEQ_LENGTH` the candidates are
    the same."""
    return model.answer([q for q, _, _ in pairs], [c for _, c, _ in pairs], max_seq_length=SEQ_LENGTH,
                        doc_stride=DOC_STRIDE, max_query_length=MAX_QUERY_LENGTH, n_best_size=n_best_size,
                        max_answer_length=MAX_ANSWER_LENGTH)


def same_pieces(sp, case: dict) -> bool:
    """transformers' tokenizer gave the case's question and context the original's pieces (it makes the model's
    user-defined symbols ( ) " - . tokens of their own), and the question was not cut."""
    from albert.text.tokenization import encode_ids, preprocess_text

    ids = lambda text: encode_ids(sp, preprocess_text(text, lower=True))  # noqa: E731
    return (case["question_ids"] == ids(case["question"]) and case["context_ids"] == ids(case["context"])
            and len(case["question_ids"]) <= MAX_QUERY_LENGTH)


def main():
    import torch
    import transformers

    pairs = cases()
    with tempfile.TemporaryDirectory() as work:
        model = tiny_squad()
        directory = fill_mask_tool.converted(work, model)
        qa = transformers.pipeline("question-answering", model=directory, tokenizer=directory)
        print(type(qa.model).__name__, type(qa.tokenizer).__name__)
        records = []
        for question, context, kind in pairs:
            query = qa.tokenizer(question, add_special_tokens=False)["input_ids"]  # transformers does not cut it
            # transformers' doc_stride is the overlap of two windows; the original's the step between their starts
            overlap = max(0, SEQ_LENGTH - min(len(query), MAX_QUERY_LENGTH) - 3 - DOC_STRIDE)
            result = qa(question=question, context=context, max_seq_len=SEQ_LENGTH, doc_stride=overlap,
                        max_question_len=MAX_QUERY_LENGTH, max_answer_len=MAX_ANSWER_LENGTH, align_to_words=False,
                        top_k=1)
            records.append({"question": question, "context": context, "kind": kind,
                            "question_ids": list(map(int, query)),
                            "context_ids": list(map(int, qa.tokenizer(context, add_special_tokens=False)["input_ids"])),
                            "answer": result["answer"], "start": int(result["start"]), "end": int(result["end"]),
                            "score": float(result["score"])})
        default, every_span = ours(model, pairs), ours(model, pairs, n_best_size=SEQ_LENGTH)
    from albert.text.tokenization import load_sentencepiece

    sp = load_sentencepiece(SPM)
    for kind in ("one window", "several windows"):
        rows = [(r, a, b) for r, a, b in zip(records, default, every_span) if r["kind"] == kind]
        alike = [(r, a, b) for r, a, b in rows if same_pieces(sp, r)]
        print(f"{kind}: {len(rows)} questions, answers differ on {sum(r['answer'].strip() != a['answer'] for r, a, _ in rows)}; "
              f"of the {len(alike)} tokenized alike, on {sum(r['answer'].strip() != a['answer'] for r, a, _ in alike)} "
              f"(n_best_size 20) and {sum(r['answer'].strip() != b['answer'] for r, _, b in alike)} "
              f"(n_best_size {SEQ_LENGTH}: every span a candidate)")
    golden = {"made_by": f"transformers {transformers.__version__}, torch {torch.__version__}: "
                         "pipeline('question-answering', align_to_words=False) on the converted directory",
              "seed": SEED, "config": CONFIG, "seq_length": SEQ_LENGTH, "doc_stride": DOC_STRIDE,
              "max_query_length": MAX_QUERY_LENGTH, "max_answer_length": MAX_ANSWER_LENGTH, "cases": records}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(json.dumps(golden, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
