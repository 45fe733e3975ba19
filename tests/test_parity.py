"""Numerical parity with an independent implementation (Hugging Face's PyTorch ALBERT).

The fixtures were made once by tools/make_golden_fixtures.py: random non-trivial weights (every bias and LayerNorm
parameter too) written under the ORIGINAL TF1 variable names by TF1's own Saver, and the PyTorch model's outputs
on a padded batch.
"""

import os

import numpy as np
import pytest

from albert import AlbertConfig, AlbertEncoder, AlbertPretrainer, load_original_checkpoint
from tests.helpers import FIXTURES, PARITY_CASES

INPUTS = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")


def load_case(case):
    directory = os.path.join(FIXTURES, case)
    config = AlbertConfig.from_json_file(os.path.join(directory, "albert_config.json"))
    golden = dict(np.load(os.path.join(directory, "golden.npz")))
    return directory, config, golden


@pytest.mark.parametrize("case", PARITY_CASES)
def test_pretrainer_matches_pytorch_reference(case):
    directory, config, golden = load_case(case)
    model = AlbertPretrainer(config)
    report = load_original_checkpoint(model, os.path.join(directory, "model.ckpt"))
    assert report.missing == []
    assert report.unused == []
    assert report.ignored == ["bert/pooler/dense/kernel/adam_m", "global_step"]
    outputs = model.with_hidden_states({k: golden[k] for k in INPUTS}, training=False)
    for key in ("sequence_output", "pooled_output", "mlm_logits", "sop_logits"):
        np.testing.assert_allclose(np.asarray(outputs[key]), golden[key], atol=1e-5, rtol=0, err_msg=key)
    # The check is not vacuous: the outputs are far from zero and differ between examples.
    assert np.abs(golden["sequence_output"]).max() > 1.0
    assert np.abs(golden["mlm_logits"][0] - golden["mlm_logits"][1]).max() > 0.1


@pytest.mark.parametrize("case", PARITY_CASES)
def test_encoder_alone_matches_and_exposes_every_block_output(case):
    directory, config, golden = load_case(case)
    encoder = AlbertEncoder(config)
    report = load_original_checkpoint(encoder, os.path.join(directory, "model.ckpt"))
    assert [n for n in report.unused if not n.startswith("cls/")] == []
    outputs = encoder({k: golden[k] for k in INPUTS[:3]})
    np.testing.assert_allclose(np.asarray(outputs["sequence_output"]), golden["sequence_output"], atol=1e-5)
    blocks = outputs["encoder_outputs"]
    assert len(blocks) == config.num_hidden_layers * config.inner_group_num
    np.testing.assert_array_equal(np.asarray(blocks[-1]), np.asarray(outputs["sequence_output"]))
    assert outputs["embedding_output"].shape == (3, 12, config.embedding_size)
    has_projection = config.embedding_size != config.hidden_size
    assert (encoder.embedding_projection is not None) == has_projection
    assert any("embedding_hidden_mapping_in" in n for n in report.loaded) == has_projection


def test_wrong_attention_mask_would_be_caught():
    """Guard on the fixture itself: the padded positions change the outputs, so a missing mask fails parity."""
    directory, config, golden = load_case("e_lt_h_shared")
    model = AlbertPretrainer(config)
    load_original_checkpoint(model, os.path.join(directory, "model.ckpt"))
    inputs = {k: golden[k] for k in INPUTS}
    inputs["input_mask"] = np.ones_like(inputs["input_mask"])
    outputs = model.with_hidden_states(inputs)
    assert np.abs(np.asarray(outputs["sequence_output"])[2] - golden["sequence_output"][2]).max() > 1e-2
