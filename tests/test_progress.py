"""albert/train/progress.py: the training loop's progress line prints the learning rate in scientific notation (a
fine-tuning rate of 2e-5 printed as `learning_rate 0.0000` with four decimals), the metrics with four decimals."""

from types import SimpleNamespace

from albert.train.progress import ProgressMeter, number
from albert.train.settings import LoopConfig


def meter() -> ProgressMeter:
    trainer = SimpleNamespace(feed=SimpleNamespace(topology=lambda: (1, 1)),
                              strategy=SimpleNamespace(num_replicas_in_sync=1))
    return ProgressMeter(trainer, LoopConfig(output_dir="unused", num_train_steps=6, global_batch_size=4))


def test_the_learning_rate_prints_in_scientific_notation():
    results = {"loss": 1.5, "accuracy": 0.25, "grad_norm": 0.5, "learning_rate": 2e-5}
    line = meter().line(1, 1, 2.0, results)
    assert line == ("step 1/6 loss 1.50000000 accuracy 0.2500 grad_norm 0.5000 learning_rate 2.00e-05 "
                    "| first call (tracing, compiling): 2.0 s")
    assert number("learning_rate", 0.00176) == "1.76e-03"
    assert number("learning_rate", 0.0) == "0.00e+00"
    assert number("accuracy", 0.00176) == "0.0018"
