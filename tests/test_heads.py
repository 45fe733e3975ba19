"""Each head against a NumPy re-statement of the original's formula (spec §5.2, §9.3, §10.3, §10.4, §11.3)."""

import numpy as np
import pytest

from albert import AlbertClassifier, AlbertMultipleChoice, AlbertPretrainer, AlbertSquadV1, AlbertSquadV2
from tests.helpers import padded_batch, tiny_config


def w(variable):
    return np.asarray(variable, np.float64)


def layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w(gamma) + w(beta)


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_mlm_head_scores_only_the_masked_positions_with_tied_embeddings():
    config = tiny_config()
    model = AlbertPretrainer(config)
    batch = padded_batch(config, predictions=3)
    out = model(batch)
    assert sorted(out) == ["mlm_logits", "sop_logits"]
    hidden = model.encoder(batch)
    seq = np.asarray(hidden["sequence_output"], np.float64)
    head = model.mlm_head
    assert out["mlm_logits"].shape == (3, 3, config.vocab_size)  # [B,P,V], never [B,T,V]
    x = gelu(seq @ w(head.dense.kernel) + w(head.dense.bias))
    x = layer_norm(x, head.layer_norm.gamma, head.layer_norm.beta)
    full = x @ w(model.encoder.embeddings.word_embeddings).T + w(head.output_bias)
    expected = np.take_along_axis(full, batch["masked_lm_positions"][:, :, None], axis=1)
    np.testing.assert_allclose(np.asarray(out["mlm_logits"]), expected, atol=2e-5)
    pooled = np.asarray(hidden["pooled_output"], np.float64)
    sop = pooled @ w(model.sop_head.output_weights).T + w(model.sop_head.output_bias)  # weights are [2, H]
    np.testing.assert_allclose(np.asarray(out["sop_logits"]), sop, atol=2e-5)


@pytest.mark.parametrize("num_labels", [1, 3])
def test_classifier_head_and_dropout(num_labels):
    config = tiny_config()
    model = AlbertClassifier(config, num_labels=num_labels, dropout_prob=0.5)
    batch = padded_batch(config)
    logits = model(batch)  # the task output only; the hidden states are model.encoder's
    head = model.classifier_head
    assert head.output_weights.shape == (num_labels, config.hidden_size)
    pooled = model.encoder(batch)["pooled_output"]
    expected = np.asarray(pooled, np.float64) @ w(head.output_weights).T + w(head.output_bias)
    np.testing.assert_allclose(np.asarray(logits), expected, atol=2e-5)
    trained = np.asarray(model(batch, training=True))
    assert np.abs(trained - expected).max() > 1e-4  # the head's dropout acts in training only


def test_squad_v1_head():
    config = tiny_config()
    model = AlbertSquadV1(config)
    out = model(padded_batch(config))
    assert sorted(out) == ["end_logits", "start_logits"]
    seq = np.asarray(model.encoder(padded_batch(config))["sequence_output"], np.float64)
    logits = seq @ w(model.squad_head.output_weights).T + w(model.squad_head.output_bias)
    np.testing.assert_allclose(np.asarray(out["start_logits"]), logits[..., 0], atol=2e-5)
    np.testing.assert_allclose(np.asarray(out["end_logits"]), logits[..., 1], atol=2e-5)


def test_multiple_choice_head_scores_each_option():
    config = tiny_config()
    model = AlbertMultipleChoice(config, num_choices=4)
    batch = padded_batch(config, batch=8)
    inputs = {k: batch[k].reshape(2, 4, -1) for k in ("input_ids", "input_mask", "segment_ids")}
    logits = model(inputs)
    assert logits.shape == (2, 4)
    single = model.encoder({k: batch[k][5:6] for k in ("input_ids", "input_mask", "segment_ids")})
    head = model.choice_head
    expected = np.asarray(single["pooled_output"], np.float64) @ w(head.output_weights).T + w(head.output_bias)
    np.testing.assert_allclose(np.asarray(logits)[1, 1], expected[0, 0], atol=2e-5)


def squad_v2_reference(head, seq, p_mask, start_positions=None, start_n_top=2, end_n_top=3):
    """The original XLNet-style head, step by step in NumPy."""
    def dense(layer, x, act=None):
        y = x @ w(layer.kernel) + (w(layer.bias) if layer.use_bias else 0)
        return np.tanh(y) if act == "tanh" else y

    def end_logits(hidden, start_hidden):
        x = dense(head.end_dense_0, np.concatenate([hidden, np.broadcast_to(start_hidden, hidden.shape)], -1), "tanh")
        x = layer_norm(x, head.end_layer_norm.gamma, head.end_layer_norm.beta)
        return dense(head.end_dense_1, x)[..., 0]

    start = dense(head.start_dense, seq)[..., 0]
    start = start * (1 - p_mask) - 1e30 * p_mask
    start_log_probs = log_softmax(start)
    out = {}
    if start_positions is not None:
        start_hidden = seq[np.arange(len(seq)), start_positions][:, None, :]
        end = end_logits(seq, start_hidden) * (1 - p_mask) - 1e30 * p_mask
        out["start_log_probs"], out["end_log_probs"] = start_log_probs, log_softmax(end)
    else:
        top = np.argsort(-start_log_probs, axis=-1, kind="stable")[:, :start_n_top]
        out["start_top_index"] = top
        out["start_top_log_probs"] = np.take_along_axis(start_log_probs, top, -1)
        ends_lp, ends_idx = [], []
        for b in range(len(seq)):
            rows = []
            for k in range(start_n_top):
                e = end_logits(seq[b], seq[b, top[b, k]][None, :]) * (1 - p_mask[b]) - 1e30 * p_mask[b]
                rows.append(log_softmax(e))
            rows = np.stack(rows)
            idx = np.argsort(-rows, axis=-1, kind="stable")[:, :end_n_top]
            ends_idx.append(idx.reshape(-1))
            ends_lp.append(np.take_along_axis(rows, idx, -1).reshape(-1))
        out["end_top_log_probs"], out["end_top_index"] = np.stack(ends_lp), np.stack(ends_idx)
    probs = np.exp(log_softmax(start))
    features = np.concatenate([np.einsum("bt,bth->bh", probs, seq), seq[:, 0]], -1)
    out["cls_logits"] = dense(head.answer_dense_1, dense(head.answer_dense_0, features, "tanh"))[..., 0]
    return out


@pytest.mark.parametrize("training_outputs", [False, True])
def test_squad_v2_head_matches_reference(training_outputs):
    config = tiny_config()
    model = AlbertSquadV2(config, start_n_top=2, end_n_top=3)
    batch = padded_batch(config)
    p_mask = (1 - batch["input_mask"]).astype(np.float32)
    p_mask[:, 1:3] = 1  # the "question"
    inputs = dict(batch, p_mask=p_mask)
    if training_outputs:
        inputs["start_positions"] = np.array([4, 3, 5], np.int32)
    out = model(inputs)
    assert model.squad_head.answer_dense_1.bias is None  # answer_class/dense_1 has no bias in the original
    sequence_output = model.encoder(batch)["sequence_output"]
    expected = squad_v2_reference(model.squad_head, np.asarray(sequence_output, np.float64), p_mask,
                                  inputs.get("start_positions"))
    assert sorted(expected) == sorted(out)  # the head's outputs, nothing else
    for key, value in expected.items():
        got = np.asarray(out[key])
        if key.endswith("index"):
            np.testing.assert_array_equal(got, value, err_msg=key)
        else:
            finite = value > -1e20
            np.testing.assert_allclose(got[finite], value[finite], atol=5e-5, err_msg=key)
    if training_outputs:
        masked = np.asarray(out["start_log_probs"])[p_mask == 1]
        assert (masked < -1e20).all()  # no answer may start in the question or the padding
