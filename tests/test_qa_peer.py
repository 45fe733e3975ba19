"""AlbertSquadV1.answer (run_squad.py's post-processing) against transformers' `pipeline("question-answering")`.

tests/fixtures/qa/golden.json was made once by tools/make_qa_golden.py: a tiny AlbertSquadV1 over the released
30k-clean SentencePiece model, every weight drawn from a fixed seed (`tiny_squad`, built here again), converted with
`python -m albert.convert --to=huggingface` and asked real SQuAD-derived questions (QNLI's dev questions and their
Wikipedia sentences) by transformers' pipeline (4.57: transformers 5 has no question-answering pipeline). In one
window the two post-processings define the same answer when every span is a candidate (`n_best_size` at the window's
length: the original keeps the best start + end logit sum, transformers the best product of the two probabilities,
the same order); there the answers are equal, text and character offsets, wherever the two tokenizers give the same
pieces. At the default n_best_size 20 the original looks only among the 20 best starts and ends (1 of the 47 one-window
questions tokenized alike answered otherwise); across windows the two differ by design (make_qa_golden.py's output).
transformers is not needed here.
"""

import json
import os
import sys

import pytest

from albert.text.tokenization import load_sentencepiece
from tests.helpers import FIXTURES, ROOT, shared_directory

sys.path.insert(0, os.path.join(ROOT, "tools"))
try:
    import make_qa_golden as golden_tool
finally:
    sys.path.pop(0)

SPM = os.path.join(shared_directory(), "albert_30k_clean", "30k-clean.model")
with open(os.path.join(FIXTURES, "qa", "golden.json"), encoding="utf-8") as _f:
    GOLDEN = json.load(_f)


@pytest.fixture(scope="module")
def answers():
    model = golden_tool.tiny_squad(SPM)
    pairs = [(c["question"], c["context"], c["kind"]) for c in GOLDEN["cases"]]
    return golden_tool.ours(model, pairs, n_best_size=golden_tool.SEQ_LENGTH)


def test_the_fixture_is_the_tools():
    assert (GOLDEN["seed"], GOLDEN["seq_length"], GOLDEN["doc_stride"], GOLDEN["max_query_length"],
            GOLDEN["max_answer_length"]) == (golden_tool.SEED, golden_tool.SEQ_LENGTH, golden_tool.DOC_STRIDE,
                                             golden_tool.MAX_QUERY_LENGTH, golden_tool.MAX_ANSWER_LENGTH)
    assert GOLDEN["config"] == golden_tool.CONFIG
    qnli = os.path.join(shared_directory(), "glue_real", "QNLI", "dev.tsv")
    assert [(c["question"], c["context"], c["kind"]) for c in GOLDEN["cases"]] == golden_tool.cases(qnli)


def test_one_window_answers_equal_the_pipelines(answers):
    sp = load_sentencepiece(SPM)
    compared = 0
    for case, mine in zip(GOLDEN["cases"], answers):
        if case["kind"] != "one window" or not golden_tool.same_pieces(sp, case):
            continue
        compared += 1
        theirs = case["answer"]
        lead = len(theirs) - len(theirs.lstrip())  # the original strips the span's surrounding whitespace
        assert (mine["answer"], mine["start"], mine["end"]) == (
            theirs.strip(), case["start"] + lead, case["start"] + lead + len(theirs.strip())), case["question"]
        assert case["context"][mine["start"]:mine["end"]] == mine["answer"]
    assert compared >= 40, f"only {compared} one-window cases tokenized alike"


def test_the_python_api_page_states_the_conditions_of_each_pipeline_comparison():
    """docs/python-api.md said the answers were the pipeline's, "the same, text and offsets", without the conditions
    that make them so (transformers 4.57's pipeline with align_to_words=False, the leading space of its answer
    stripped, every span a candidate): the page names the versions the golden files were made with and each option."""
    with open(os.path.join(ROOT, "docs", "python-api.md"), encoding="utf-8") as f:
        page = " ".join(f.read().split())
    made_by = GOLDEN["made_by"]
    assert made_by.startswith("transformers 4.57.1, torch 2.13.0") and "align_to_words=False" in made_by
    for words in ("the file was made with transformers 4.57.1 on PyTorch 2.13.0",
                  "called with `align_to_words=False`, `top_k=1`",
                  "`answer` ran with the same settings and `n_best_size=96`, as large as the window",
                  "once the whitespace the pipeline's answer starts with is stripped and its `start` moved past it",
                  "`align_to_words=True` (4.57's default) widens each span to whole words and sums the probabilities "
                  "of spans with the same text",
                  "transformers 5.23.0 on PyTorch 2.13.0, `pipeline(\"fill-mask\", model=d, tokenizer=d)` with "
                  "`top_k=5`"):
        assert words in page, words
    with open(os.path.join(FIXTURES, "fill_mask", "golden.json"), encoding="utf-8") as f:
        assert json.load(f)["made_by"].startswith("transformers 5.23.0, torch 2.13.0")
    assert "the answers are the same, text and offsets" not in page
