"""Make tests/fixtures/fill_mask/golden.json: transformers' `pipeline("fill-mask")` on a tiny random ALBERT (run once).

The model is `tiny_pretrainer()` -- a tiny AlbertPretrainer over the released 30k-clean SentencePiece model (read in
place) whose every weight is drawn from a fixed seed -- written in the release layout and converted with
`python -m albert.convert --to=huggingface`; transformers 5.23.0 (PyTorch 2.13.0) loads the converted directory as
`AlbertForMaskedLM` and fills the masks of TEXTS. tests/test_fill_mask.py builds the same model (this module's
`tiny_pretrainer`, TensorFlow only) and holds `AlbertPretrainer.fill_mask` to the pipeline's tokens and scores.

Usage (in a venv of tools/requirements-reference.txt, from the repository root):
    python -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install -r tools/requirements-reference.txt
    PYTHONPATH=. /tmp/refvenv/bin/python tools/make_fill_mask_golden.py
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "fixtures", "fill_mask", "golden.json")
SPM = os.path.join(ROOT, "..", "shared", "albert_30k_clean", "30k-clean.model")
CONFIG = dict(vocab_size=30000, embedding_size=8, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
              intermediate_size=32, max_position_embeddings=32, hidden_act="gelu", hidden_dropout_prob=0.0,
              attention_probs_dropout_prob=0.0)
SEQ_LENGTH = 32
SEED = 68
TOP_K = 5
TEXTS = [
    "the capital of france is [MASK] .",
    "The quick brown [MASK] jumps over the lazy dog.",
    "she [MASK] a book about [MASK] history",
    "[MASK] is a programming language",
    "numbers like 1,000 and [MASK], 2.5 and café [MASK]",
    "a    lot   of  space [MASK]   here",
    "ends with the mask [MASK]",
]


def tiny_pretrainer(spm=SPM):
    """The tiny AlbertPretrainer of the fixture: gamma ~ 1 + 0.2 N, biases and beta ~ 0.1 N, the word embeddings
    ~ N (so the softmax over 30,000 pieces has clear winners), every other weight ~ 0.3 N, drawn in the order of the
    variables' paths; with its preprocessor (`spm`: 30k-clean.model, seq_length SEQ_LENGTH)."""
    import keras

    from albert.config import AlbertConfig
    from albert.model.preprocessor import AlbertPreprocessor
    from albert.tasks.pretraining.model import AlbertPretrainer

    keras.mixed_precision.set_global_policy("float32")
    model = AlbertPretrainer(AlbertConfig(**CONFIG))
    draw_weights(model, SEED)
    model.preprocessor = AlbertPreprocessor(spm, seq_length=SEQ_LENGTH)
    return model


def draw_weights(model, seed: int):
    """Every weight of `model` drawn from `seed`, in the order of the variables' paths: gamma ~ 1 + 0.2 N, biases
    and beta ~ 0.1 N, the word embeddings ~ N, every other weight ~ 0.3 N (tools/make_qa_golden.py draws its model
    so too)."""
    rng = np.random.default_rng(seed)
    for variable in sorted(model.weights, key=lambda v: v.path):
        noise = rng.standard_normal(tuple(variable.shape)).astype(np.float32)
        name = variable.path.rsplit("/", 1)[-1]
        if name == "gamma":
            noise = 1.0 + 0.2 * noise
        elif name in ("beta", "bias", "output_bias"):
            noise = 0.1 * noise
        elif "word_embeddings" not in variable.path:
            noise = 0.3 * noise
        variable.assign(noise)


def converted(directory, model=None):
    """`model` (default the fixture's tiny_pretrainer) in the release layout, then `python -m albert.convert
    --to=huggingface`: the converted directory."""
    from albert.weights.tf_checkpoints import save_original_checkpoint

    model = model if model is not None else tiny_pretrainer()
    release = os.path.join(directory, "release")
    os.makedirs(release)
    model.encoder.config.to_json_file(os.path.join(release, "albert_config.json"))
    save_original_checkpoint(model, os.path.join(release, "model.ckpt-best"))
    output = os.path.join(directory, "huggingface")
    subprocess.run([sys.executable, "-m", "albert.convert", f"--input={release}", f"--output={output}",
                    "--to=huggingface", f"--spm_model_file={SPM}"], check=True, cwd=ROOT)
    return output


def main():
    import torch
    import transformers

    with tempfile.TemporaryDirectory() as work:
        directory = converted(work)
        fill = transformers.pipeline("fill-mask", model=directory, tokenizer=directory)
        print(type(fill.model).__name__, type(fill.tokenizer).__name__)
        results = fill(TEXTS, top_k=TOP_K)
        ids = [fill.tokenizer(text)["input_ids"] for text in TEXTS]

    def per_mask(result):  # a text with one mask gives a list of dicts, with several a list of lists
        return [result] if isinstance(result[0], dict) else result

    golden = {"made_by": f"transformers {transformers.__version__}, torch {torch.__version__}: "
                         "pipeline('fill-mask') on the converted directory",
              "seed": SEED, "top_k": TOP_K, "seq_length": SEQ_LENGTH, "config": CONFIG,
              "cases": [{"text": text, "input_ids": list(map(int, row)),
                         "masks": [[{"token": int(p["token"]), "token_str": p["token_str"],
                                     "score": float(p["score"]), "sequence": p["sequence"]} for p in mask]
                                   for mask in per_mask(result)]}
                        for text, row, result in zip(TEXTS, ids, results)]}
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(json.dumps(golden, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
