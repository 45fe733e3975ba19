"""Activation recomputation (--recompute) changes memory, not numbers: the same loss, gradients and dropout draws
on one device (graph and XLA) and under MirroredStrategy (2 logical CPUs), and the blocks really run again."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert import AlbertConfig, AlbertPretrainer
from albert.model.encoder import AttentionBlock, FeedForwardBlock, set_recompute
from albert.model.recompute import seed_generators
from albert.tasks.pretraining.objective import pretraining_loss
from tests.pretraining_helpers import run_on_two_cpus

# Dropout on, two groups with two inner blocks each over three layers: shared blocks are applied several times.
CONFIG = AlbertConfig(vocab_size=60, embedding_size=8, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=32, num_hidden_groups=2, inner_group_num=2,
                      hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)


def batch(seed=0):
    rng = np.random.default_rng(seed)
    b, t, p = 4, 24, 4
    return {"input_ids": tf.constant(rng.integers(5, 60, (b, t)), tf.int32),
            "input_mask": tf.constant((np.arange(t)[None] < rng.integers(12, t + 1, (b, 1))).astype(np.int32)),
            "segment_ids": tf.constant((np.arange(t)[None] >= t // 2).repeat(b, 0).astype(np.int32)),
            "masked_lm_positions": tf.constant(np.sort(rng.choice(np.arange(1, 12), (b, p)), axis=1), tf.int32),
            "masked_lm_ids": tf.constant(rng.integers(5, 60, (b, p)), tf.int32),
            "masked_lm_weights": tf.ones((b, p)),
            "next_sentence_labels": tf.constant(rng.integers(0, 2, (b, 1)), tf.int32)}


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(3)
    return AlbertPretrainer(CONFIG)


def loss_and_gradients(model, recompute: bool, jit: bool, calls: list):
    """Loss, gradients and the dropout seed states after one step, from the same seed states; `calls` counts
    block calls while the step is traced."""
    generators = seed_generators([model])
    before = [g.state.numpy().copy() for g in generators]
    set_recompute(model, recompute)

    def step():
        with tf.GradientTape() as tape:
            terms, _ = pretraining_loss(model, batch(), True)
            loss = tf.add_n([n / (d + e) for n, d, e in terms])
        return loss, tape.gradient(loss, model.trainable_variables)

    loss, grads = tf.function(step, jit_compile=jit)()
    after = [g.state.numpy().copy() for g in generators]
    for g, state in zip(generators, before):
        g.state.assign(state)
    set_recompute(model, False)
    return float(loss), [tf.convert_to_tensor(g).numpy() for g in grads], after


@pytest.mark.parametrize("jit", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["graph", "xla"])
def test_recompute_gives_the_same_loss_gradients_and_dropout_draws(model, jit, monkeypatch):
    calls = []
    for cls in (AttentionBlock, FeedForwardBlock):
        original = cls.call
        monkeypatch.setattr(cls, "call", lambda self, *a, _o=original, **k: (calls.append(1), _o(self, *a, **k))[1])
    loss, grads, seeds = loss_and_gradients(model, False, jit, calls)
    plain_calls = len(calls)
    loss_r, grads_r, seeds_r = loss_and_gradients(model, True, jit, calls)
    # 3 layers x 2 inner blocks x (attention, ffn) = 12 calls traced; recomputation traces each again
    assert plain_calls == 12
    assert len(calls) - plain_calls == 24
    assert abs(loss - loss_r) < 1e-5
    assert len(grads) == len(grads_r) == len(model.trainable_variables)
    for name, g, g_r in zip([v.path for v in model.trainable_variables], grads, grads_r):
        np.testing.assert_allclose(g_r, g, atol=1e-5, rtol=0, err_msg=name)
    assert sum(float(np.abs(g).sum()) > 0 for g in grads_r) > 30  # the encoder's gradients are not all zero
    # the step after it draws the same dropout masks: every seed generator ends where it ends without it
    assert len(seeds) >= 8
    assert all(np.array_equal(a, b) for a, b in zip(seeds, seeds_r))


def test_recompute_under_mixed_bfloat16_gives_the_same_loss_and_gradients():
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        keras.utils.set_random_seed(5)
        bf16_model = AlbertPretrainer(CONFIG)
        loss, grads, seeds = loss_and_gradients(bf16_model, False, False, [])
        loss_r, grads_r, seeds_r = loss_and_gradients(bf16_model, True, False, [])
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert abs(loss - loss_r) < 1e-5
    assert all(np.array_equal(a, b) for a, b in zip(seeds, seeds_r))
    for g, g_r in zip(grads, grads_r):
        np.testing.assert_allclose(g_r, g, atol=1e-5, rtol=0)


def peak_step_bytes(layers: int) -> int:
    """Peak tensor memory of a mixed_bfloat16 recompute step of an encoder whose one big block (its weights
    dominate: 1 x 8 tokens) is applied `layers` times."""
    from albert import AlbertEncoder

    config = AlbertConfig(vocab_size=60, embedding_size=8, hidden_size=128, num_hidden_layers=layers,
                          num_attention_heads=2, intermediate_size=2048, max_position_embeddings=8)
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        encoder = AlbertEncoder(config)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    encoder.recompute = True
    inputs = {"input_ids": tf.ones((1, 8), tf.int32)}

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.cast(encoder(inputs, training=True)["sequence_output"], tf.float32))
        return tape.gradient(loss, encoder.trainable_variables)

    step()
    tf.config.experimental.reset_memory_stats("CPU:0")
    step()
    return tf.config.experimental.get_memory_info("CPU:0")["peak"]


def test_recompute_casts_a_blocks_weights_when_its_application_runs_not_all_at_once():
    # bf16 copy of the block: (4 H^2 + 2 H I) x 2 bytes = 1.2 MB. Before the casts waited for their application's
    # input, 12 applications held 17 MB more than 2 (each cast of the forward and of the backward's recomputation
    # at the start); now the peak does not grow with the applications (allocator rounding: about 1 MB)
    copy = (4 * 128 * 128 + 2 * 128 * 2048) * 2
    assert peak_step_bytes(12) - peak_step_bytes(2) < 4 * copy


def test_set_recompute_reaches_every_encoder_and_only_training_recomputes(model):
    assert set_recompute(model, True) == 1
    assert model.encoder.recompute
    inputs = {k: batch()[k] for k in ("input_ids", "input_mask", "segment_ids")}
    np.testing.assert_array_equal(model.encoder(inputs)["sequence_output"].numpy(),
                                  (set_recompute(model, False), model.encoder(inputs))[1]["sequence_output"].numpy())


MIRRORED = r"""
losses = {}
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
for recompute in (False, True):
    losses[str(recompute)], model = train_losses(strategy, f"{out}/{recompute}", 4, recompute=recompute)
    losses["set"] = model.encoder.recompute
print("RESULT " + json.dumps(losses))
"""


@pytest.mark.slow
def test_recompute_under_mirrored_gives_the_same_losses(tmp_path):
    result = run_on_two_cpus(MIRRORED, tmp_path, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                             inner_group_num=2)
    assert result["set"] is True
    assert len(result["False"]) == len(result["True"]) == 4
    np.testing.assert_allclose(result["True"], result["False"], atol=1e-5, rtol=0)
    assert abs(result["False"][0] - result["False"][-1]) > 1e-3  # the weights did move
