"""Behaviour of the encoder beyond parity: dropout only in training, lengths, defaults, mixed precision."""

import keras
import numpy as np
import pytest

from albert import AlbertEncoder, AlbertError
from tests.helpers import padded_batch, tiny_config


def test_dropout_only_when_training():
    config = tiny_config(hidden_dropout_prob=0.3, attention_probs_dropout_prob=0.3)
    encoder = AlbertEncoder(config)
    batch = padded_batch(config)
    inputs = {k: batch[k] for k in ("input_ids", "input_mask", "segment_ids")}
    a = np.asarray(encoder(inputs)["sequence_output"])
    b = np.asarray(encoder(inputs, training=False)["sequence_output"])
    c = np.asarray(encoder(inputs, training=True)["sequence_output"])
    np.testing.assert_array_equal(a, b)
    assert np.abs(a - c).max() > 1e-3


def test_default_mask_and_segments_and_any_length():
    config = tiny_config()
    encoder = AlbertEncoder(config)
    ids = np.random.default_rng(0).integers(1, 40, size=(2, 16)).astype(np.int32)
    explicit = encoder({"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": np.zeros_like(ids)})
    implicit = encoder({"input_ids": ids})
    np.testing.assert_array_equal(np.asarray(explicit["sequence_output"]), np.asarray(implicit["sequence_output"]))
    for length in (1, 5, 16):
        out = encoder({"input_ids": ids[:, :length]})
        assert out["sequence_output"].shape == (2, length, 16)
        assert out["pooled_output"].shape == (2, 16)
    with pytest.raises(AlbertError, match=r"sequence length 17 exceeds max_position_embeddings \(16\)"):
        encoder({"input_ids": np.ones((1, 17), np.int32)})


@pytest.mark.parametrize("recompute", [False, True], ids=["stored", "recomputed"])
def test_pooled_only_gives_the_whole_encoders_pooled_output_and_gradients(recompute):
    import tensorflow as tf

    from albert.model.encoder import set_recompute

    # two groups, two blocks each: the last application is group 1's second block
    config = tiny_config(num_hidden_layers=4, num_hidden_groups=2, inner_group_num=2)
    encoder = AlbertEncoder(config)
    set_recompute(encoder, recompute)
    batch = padded_batch(config, batch=4, seq=12)
    inputs = {k: tf.constant(batch[k]) for k in ("input_ids", "input_mask", "segment_ids")}
    with tf.GradientTape(persistent=True) as tape:
        whole = encoder(inputs, training=True)["pooled_output"]  # no dropout in tiny_config: deterministic
        fast = encoder(inputs, training=True, pooled_only=True)
        whole_loss, fast_loss = (tf.reduce_sum(tf.sin(3.0 * p)) for p in (whole, fast["pooled_output"]))
    assert sorted(fast) == ["pooled_output"]
    np.testing.assert_allclose(fast["pooled_output"].numpy(), whole.numpy(), atol=1e-6)
    variables = encoder.trainable_variables
    checked = 0
    for variable, a, b in zip(variables, tape.gradient(whole_loss, variables), tape.gradient(fast_loss, variables)):
        a, b = tf.convert_to_tensor(a).numpy(), tf.convert_to_tensor(b).numpy()
        if variable.path.endswith("key/bias"):  # softmax ignores a bias shared by every key: both ~0
            assert np.abs(a).max() < 1e-5 and np.abs(b).max() < 1e-5
            continue
        assert np.abs(a).max() > 1e-4, variable.path
        np.testing.assert_allclose(b, a, atol=1e-5 * np.abs(a).max(), err_msg=variable.path)
        checked += 1
    assert checked == len(variables) - 4  # every weight but the four blocks' key biases


def test_initialization_is_the_originals():
    config = tiny_config(vocab_size=2000, embedding_size=64, initializer_range=0.02)
    encoder = AlbertEncoder(config)
    table = np.asarray(encoder.embeddings.word_embeddings)
    assert np.abs(table).max() <= 0.04 + 1e-6  # truncated at 2 standard deviations
    assert 0.015 < table.std() < 0.02  # a 2-sigma truncated normal has std 0.88 sigma
    block = next(iter(encoder.ffn_blocks.values()))
    np.testing.assert_array_equal(np.asarray(block.intermediate.bias), 0)
    np.testing.assert_array_equal(np.asarray(block.layer_norm.gamma), 1)


def test_mixed_bfloat16_keeps_layer_norm_and_losses_in_float32():
    from albert import AlbertPretrainer

    keras.utils.set_random_seed(1)
    config = tiny_config(initializer_range=0.02)
    batch = padded_batch(config)
    reference = AlbertPretrainer(config)
    expected = reference.with_hidden_states(batch)
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = AlbertPretrainer(config)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    for ours, theirs in zip(model.weights, reference.weights):
        ours.assign(theirs)
    assert all(w.dtype == "float32" for w in model.weights)
    outputs = model.with_hidden_states(batch)
    assert outputs["encoder_outputs"][0].dtype == "float32"  # a LayerNorm output
    assert outputs["embedding_output"].dtype == "float32"
    for key in ("sequence_output", "mlm_logits", "sop_logits"):
        assert outputs[key].dtype == "float32", key
    layer_norms = [l for l in model._flatten_layers() if isinstance(l, keras.layers.LayerNormalization)]
    assert layer_norms
    assert all(l.compute_dtype == "float32" for l in layer_norms)
    dense = next(l for l in model._flatten_layers() if isinstance(l, keras.layers.Dense))
    assert dense.compute_dtype == "bfloat16"
    for key in ("sequence_output", "pooled_output", "mlm_logits", "sop_logits"):
        diff = np.abs(np.asarray(outputs[key], np.float32) - np.asarray(expected[key])).max()
        assert diff < 2e-2, (key, diff)
        assert diff > 0, key  # bf16 really ran
