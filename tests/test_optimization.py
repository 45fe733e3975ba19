"""ALBERT's AdamW / LAMB and schedule against a NumPy statement of the original (spec §8)."""

import re

import keras
import numpy as np
import pytest

from albert import AlbertError
from albert.train.optimizers import AlbertOptimizer, WarmupPolynomialDecay, create_optimizer


def reference_schedule(step, lr, total, warmup, power=1.0, start=0):
    decayed = lr * (1 - min(step, total) / total) ** power
    if warmup and step - start < warmup:
        return lr * max(step - start, 0) / warmup
    return decayed


@pytest.mark.parametrize("step, expected", [(0, 0.0), (1, 0.1 * 1 / 4), (3, 0.1 * 3 / 4),
                                            (4, 0.1 * (1 - 4 / 10)), (7, 0.1 * (1 - 7 / 10)), (10, 0.0),
                                            (15, 0.0)])
def test_warmup_then_linear_decay(step, expected):
    schedule = WarmupPolynomialDecay(0.1, num_train_steps=10, num_warmup_steps=4)
    assert float(schedule(step)) == pytest.approx(expected, abs=1e-8)


def test_polynomial_power_and_delayed_warmup():
    schedule = WarmupPolynomialDecay(0.5, num_train_steps=20, num_warmup_steps=5, poly_power=2.0,
                                     start_warmup_step=3)
    for step in range(25):
        assert float(schedule(step)) == pytest.approx(reference_schedule(step, 0.5, 20, 5, 2.0, 3), abs=1e-7)


def reference_steps(weights, grads_per_step, names, lrs, lamb):
    """The original's update, variable by variable, in float64."""
    excluded = [any(re.search(p, n) for p in ("LayerNorm", "layer_norm", "bias")) for n in names]
    w = [x.astype(np.float64) for x in weights]
    m = [np.zeros_like(x) for x in w]
    v = [np.zeros_like(x) for x in w]
    for grads, lr in zip(grads_per_step, lrs):
        for i, g in enumerate(grads):
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            update = m[i] / (np.sqrt(v[i]) + 1e-6)
            if not excluded[i]:
                update = update + 0.01 * w[i]
            ratio = 1.0
            if lamb and not excluded[i]:
                wn, un = np.linalg.norm(w[i]), np.linalg.norm(update)
                ratio = wn / un if wn > 0 and un > 0 else 1.0
            w[i] = w[i] - ratio * lr * update
    return w


@pytest.mark.parametrize("lamb", [False, True])
def test_optimizer_matches_reference_for_several_steps(lamb):
    rng = np.random.default_rng(0)
    names = ["bert/encoder/dense/kernel", "bert/encoder/dense/bias", "bert/embeddings/LayerNorm/gamma",
             "cls/seq_relationship/output_weights", "zero/kernel"]
    shapes = [(4, 3), (3,), (5,), (2, 4), (3, 2)]
    weights = [rng.normal(size=s).astype(np.float32) for s in shapes]
    weights[4] = np.zeros((3, 2), np.float32)  # ||w|| = 0 -> trust ratio 1
    variables = [keras.Variable(w) for w in weights]
    schedule = WarmupPolynomialDecay(0.05, num_train_steps=8, num_warmup_steps=3)
    optimizer = AlbertOptimizer(schedule, layer_adaptation=lamb,
                                variable_names={id(v): n for v, n in zip(variables, names)})
    grads_per_step = [[rng.normal(size=s).astype(np.float32) for s in shapes] for _ in range(6)]
    for grads in grads_per_step:
        optimizer.apply(grads, variables)
    lrs = [reference_schedule(step, 0.05, 8, 3) for step in range(6)]
    expected = reference_steps(weights, grads_per_step, names, lrs, lamb)
    for variable, want, name in zip(variables, expected, names):
        np.testing.assert_allclose(np.asarray(variable), want, atol=2e-6, err_msg=name)
    assert int(optimizer.iterations) == 6
    assert not np.allclose(np.asarray(variables[0]), weights[0])  # warmup over, the weights moved


def test_exclusions_follow_the_original_names():
    from albert import AlbertPretrainer
    from tests.helpers import tiny_config

    model = AlbertPretrainer(tiny_config())
    optimizer = create_optimizer(1e-3, 10, 2, "lamb", model=model)
    optimizer.build(model.trainable_variables)
    from albert import original_variable_map

    names = {id(v): n for n, v in original_variable_map(model).items()}
    decayed = {names[id(v)] for v, d in zip(model.trainable_variables, optimizer._decays) if d}
    assert "bert/embeddings/word_embeddings" in decayed
    assert "cls/seq_relationship/output_weights" in decayed
    assert "cls/predictions/output_bias" not in decayed
    assert "bert/embeddings/LayerNorm/gamma" not in decayed
    assert not any("LayerNorm" in n or "bias" in n for n in decayed)
    assert optimizer._decays == optimizer._adapts
    with pytest.raises(AlbertError, match="--optimizer 'sgd' is unknown; use adamw or lamb"):
        create_optimizer(1e-3, 10, 2, "sgd")
