"""export_to_tfhub.py's OUT/fill_mask (albert.tasks.pretraining.serving), served in a fresh process that imports only
tensorflow and tensorflow_text, against `AlbertPretrainer.fill_mask` on the same weights (the tiny model of
tests/test_fill_mask.py over the released 30k-clean SentencePiece model), and tools/fill_mask.py on it."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from tests.export_helpers import fresh, run_script
from tests.helpers import ROOT, shared_directory

sys.path.insert(0, os.path.join(ROOT, "tools"))
try:
    import make_fill_mask_golden as golden_tool
finally:
    sys.path.pop(0)

SPM = os.path.join(shared_directory(), "albert_30k_clean", "30k-clean.model")
TEXTS = golden_tool.TEXTS + ["Zoë’s café in São Paulo is [MASK], naïve [MASK]!", "\t[MASK]"]
BAD = {"no mask at all": "no [MASK] in the text; write [MASK] where the word to fill is",
       " \u2003\n": "empty text; give a text with [MASK] where a word is missing",
       "x [MASK]" * 21: "21 masks, more than the 20 masked positions the model was built for "
                        "(max_predictions_per_seq); use at most 20",
       "word " * 29 + "[MASK]": "32 pieces with [CLS] and [SEP], more than the export's seq_length 31; shorten the "
                                "text"}
SEQ_LENGTH = 31  # one less than the model's positions: the export's limit, not the model's, is what is checked

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The tiny pretrainer in the release layout, exported by export_to_tfhub.py; (model, OUT)."""
    from albert.weights.tf_checkpoints import save_original_checkpoint

    from albert.model.preprocessor import AlbertPreprocessor

    model = golden_tool.tiny_pretrainer(SPM)
    model.preprocessor = AlbertPreprocessor(SPM, seq_length=SEQ_LENGTH)
    directory = tmp_path_factory.mktemp("release")
    model.config.to_json_file(str(directory / "albert_config.json"))
    save_original_checkpoint(model, str(directory / "model.ckpt-best"))
    out = directory.parent / "hub"
    result = run_script("export_to_tfhub.py", f"--albert_directory={directory}", f"--spm_model_file={SPM}",
                        f"--export_path={out}", f"--seq_length={SEQ_LENGTH}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith(f"{out}/preprocessor, {out}/mlm and {out}/fill_mask from "
                                          f"{directory}/model.ckpt-best")
    return model, out


def per_mask(result):
    return [result] if isinstance(result[0], dict) else result


def test_served_top_k_equals_fill_mask_and_bad_texts_are_flagged(exported, tmp_path):
    model, out = exported
    served_texts = TEXTS[:3] + list(BAD) + TEXTS[3:]  # bad texts inside a batch of good ones
    (tmp_path / "texts.json").write_text(json.dumps(served_texts), encoding="utf-8")
    result = fresh(f"""
        import json, sys, numpy as np, tensorflow as tf, tensorflow_text
        served = tf.saved_model.load("{out / 'fill_mask'}")
        texts = tf.constant(json.load(open("texts.json", encoding="utf-8")))
        five = served.signatures["serving_default"](text=texts)
        three = served.signatures["top_k"](text=texts, top_k=tf.constant(3))
        plain = lambda v: np.char.decode(v.numpy().astype(bytes), "utf-8") if v.dtype == tf.string else v.numpy()
        np.savez("served.npz", **{{k: plain(v) for k, v in five.items()}},
                 **{{"three_" + k: plain(v) for k, v in three.items()}})
        try:
            served.top_k(texts, tf.constant(0))
        except tf.errors.InvalidArgumentError as e:
            print([line for line in e.message.splitlines() if line.startswith("assertion failed")][0])
        print(sorted(m for m in sys.modules if m.split(".")[0] == "albert"))
    """, tmp_path)
    assert result.stdout.splitlines() == [
        "assertion failed: [top_k must be at least 1] [Condition x >= y did not hold element-wise:] [x (top_k:0) = ] "
        "[0] [y (assert_greater_equal/y:0) = ] [1]", "[]"]
    got = np.load(tmp_path / "served.npz")
    expected = model.fill_mask(TEXTS, top_k=5)
    spans = [tuple(m.span() for m in re.finditer(re.escape("[MASK]"), text)) for text in TEXTS]
    rows = [served_texts.index(text) for text in TEXTS]
    assert got["errors"].astype(str).tolist() == [BAD.get(text, "") for text in served_texts]
    assert got["mask_counts"].tolist() == [len(spans[TEXTS.index(t)]) if t in TEXTS else 0 for t in served_texts]
    assert got["token_ids"].shape == (len(served_texts), 2, 5) and got["three_token_ids"].shape[2] == 3
    compared = 0
    for row, text, result, text_spans in zip(rows, TEXTS, expected, spans):
        masks = per_mask(result)
        assert [tuple(o) for o in got["mask_offsets"][row, :len(masks)]] == list(text_spans)
        assert all(text[a:b] == "[MASK]" for a, b in text_spans)
        for m, predictions in enumerate(masks):
            ids = [p["token"] for p in predictions]
            assert got["token_ids"][row, m].tolist() == ids, text
            assert got["token_strs"][row, m].astype(str).tolist() == [p["token_str"] for p in predictions]
            np.testing.assert_allclose(got["scores"][row, m], [p["score"] for p in predictions], rtol=0, atol=1e-5)
            assert got["three_token_ids"][row, m].tolist() == ids[:3]
            np.testing.assert_allclose(got["three_scores"][row, m], got["scores"][row, m, :3], rtol=0, atol=1e-7)
            compared += 1
        if len(masks) == 1:  # padding where a text has fewer masks than the batch's most
            assert got["token_ids"][row, 1].tolist() == [-1] * 5 and got["mask_offsets"][row, 1].tolist() == [-1, -1]
            assert got["token_strs"][row, 1].astype(str).tolist() == [""] * 5 and not got["scores"][row, 1].any()
    assert compared == 12
    for text in BAD:  # a text that is not filled has no predictions
        assert (got["token_ids"][served_texts.index(text)] == -1).all()


def test_the_command_line_tool_shows_each_masks_words(exported):
    model, out = exported
    text = "she [MASK] a book about [MASK] history"
    expected = model.fill_mask([text], top_k=2)[0]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "fill_mask.py"), str(out / "fill_mask"),
                             text, "no mask at all", "--top_k=2"], capture_output=True, text=True, env=env,
                            timeout=300, cwd="/")
    assert result.returncode == 2
    lines = [text] + [f"  [MASK] {m + 1} (characters {a}-{b}): " + "  ".join(
        f"{p['token_str'] or repr('')} {p['score']:.3f}" for p in predictions)
        for m, ((a, b), predictions) in enumerate(zip([(4, 10), (24, 30)], expected))]
    assert result.stdout.splitlines() == lines
    assert result.stderr.strip().splitlines()[-1] == ("fill_mask.py: error: text 2: no [MASK] in the text; write "
                                                      "[MASK] where the word to fill is")
    result = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "fill_mask.py"), str(out / "fill_mask"),
                             text, "--top_k=30001"], capture_output=True, text=True, env=env, timeout=300, cwd="/")
    assert (result.returncode, result.stderr.strip().splitlines()[-1]) == (
        2, "fill_mask.py: error: top_k must be at most the 30000 pieces")
