import math

import numpy as np
import pytest

from albert.tasks.classification.metrics import best_key, best_step, glue_metrics


def test_classification_metrics_against_hand_counts():
    labels = [1, 1, 1, 1, 0, 0, 0, 0, 0, 1]
    preds = [1, 1, 1, 0, 0, 0, 1, 0, 0, 1]
    tp, tn, fp, fn = 4, 4, 1, 1
    cola = glue_metrics("cola", preds, labels)
    assert cola["eval_accuracy"] == pytest.approx(0.8)
    assert cola["matthew_corr"] == pytest.approx((tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) *
                                                                                  (tn + fn)))
    mrpc = glue_metrics("mrpc", preds, labels)
    assert mrpc["f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    assert "matthew_corr" not in mrpc
    assert set(glue_metrics("qqp", preds, labels)) == {"eval_accuracy", "f1"}
    assert glue_metrics("mnli", [0, 2, 1], [0, 1, 1]) == {"eval_accuracy": pytest.approx(2 / 3)}


def test_regression_metrics_against_numpy():
    rng = np.random.default_rng(0)
    labels = rng.uniform(0, 5, 50)
    preds = labels + rng.normal(0, 0.5, 50)
    out = glue_metrics("sts-b", preds, labels)
    assert out["pearson"] == pytest.approx(np.corrcoef(preds, labels)[0, 1])
    ranks = lambda x: np.argsort(np.argsort(x))  # noqa: E731
    assert out["spearman"] == pytest.approx(np.corrcoef(ranks(preds), ranks(labels))[0, 1])
    assert out["MSE"] == pytest.approx(np.mean((preds - labels) ** 2))


def test_best_checkpoint_selection_uses_the_task_key():
    history = {100: {"eval_accuracy": 0.80, "matthew_corr": 0.30}, 200: {"eval_accuracy": 0.78, "matthew_corr": 0.41},
               300: {"eval_accuracy": 0.82, "matthew_corr": 0.41}}
    assert best_key("cola") == "matthew_corr"
    assert best_step(history, "cola") == 200  # earliest of the tie
    assert best_step(history, "rte") == 300
    assert best_step({1: {"pearson": 0.5}, 2: {"pearson": 0.9}}, "sts-b") == 2
