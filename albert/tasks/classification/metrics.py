"""GLUE metrics and a user's own task's from scikit-learn / scipy, and the best-checkpoint rule of the original
(spec §9.4)."""

import numpy as np
from scipy import stats
from sklearn import metrics as skm

# The metric the original keeps model.ckpt-best by: MCC for CoLA, Pearson for STS-B, accuracy elsewhere.
BEST_KEY = {"cola": "matthew_corr", "sts-b": "pearson", "own-regression": "pearson"}
F1_TASKS = ("mrpc", "qqp")


def best_key(task_name: str) -> str:
    return BEST_KEY.get(task_name, "eval_accuracy")


def glue_metrics(task_name: str, predictions, labels) -> dict:
    """Dev metrics of one task: predictions are class ids (or floats for STS-B)."""
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    if task_name == "sts-b":
        return {"pearson": float(stats.pearsonr(predictions, labels)[0]),
                "spearman": float(stats.spearmanr(predictions, labels)[0]),
                "MSE": float(skm.mean_squared_error(labels, predictions))}
    out = {"eval_accuracy": float(skm.accuracy_score(labels, predictions))}
    if task_name == "cola":
        out["matthew_corr"] = float(skm.matthews_corrcoef(labels, predictions))
    if task_name in F1_TASKS:
        out["f1"] = float(skm.f1_score(labels, predictions, pos_label=1, zero_division=0))
    return out


def task_metrics(task, predictions, labels) -> dict:
    """Dev metrics of a GLUE task (glue_metrics) or of a task on a user's files (albert.tasks.classification.own_data:
    STS-B's for a regression, own_metrics for classes)."""
    if task.name == "own-regression":
        return glue_metrics("sts-b", predictions, labels)
    if task.name == "own":
        return own_metrics(predictions, labels, task.labels)
    return glue_metrics(task.name, predictions, labels)


def own_metrics(predictions, labels, names) -> dict:
    """Accuracy, macro-F1 over every class of `names`, and each class's precision / recall / support (keys
    `precision[<name>]`, ...): predictions and labels are class ids."""
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    ids = list(range(len(names)))
    precision, recall, f1, support = skm.precision_recall_fscore_support(labels, predictions, labels=ids,
                                                                         zero_division=0)
    out = {"eval_accuracy": float(skm.accuracy_score(labels, predictions)), "macro_f1": float(np.mean(f1))}
    for i, name in enumerate(names):
        out[f"precision[{name}]"] = float(precision[i])
        out[f"recall[{name}]"] = float(recall[i])
        out[f"support[{name}]"] = int(support[i])
    return out


def best_step(history: dict, task_name: str) -> int:
    """The step whose metrics are best by the task's key (the earliest on ties). history: {step: metrics}."""
    key = best_key(task_name)
    return max(sorted(history), key=lambda step: (history[step][key], -step))
