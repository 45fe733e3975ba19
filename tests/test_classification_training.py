"""A tiny classifier learns a synthetic pair task and a regression target through the shared training loop."""

import json
import os
import random

import keras
import pytest
import tensorflow as tf

from albert import AlbertClassifier, AlbertConfig, AlbertError
from albert.data.readers import classifier_dataset, classifier_decoder, prediction_batches
from albert.tasks.classification.features import cached_features, classification_loss, predict
from albert.tasks.classification.glue import get_task
from albert.tasks.classification.metrics import glue_metrics
from albert.train.loop import Trainer
from albert.train.settings import LoopConfig
from albert.train.optimizers import create_optimizer
from tests.task_data_helpers import WORDS, make_rte_like, write_task


class WordTokenizer:
    def __init__(self):
        self.vocab = {p: i for i, p in enumerate(["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]", "alpha", "beta", "up"]
                                                 + WORDS)}

    def tokenize(self, text):
        return text.split()

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab[t] for t in tokens]


def make_sts_like(root, rng):
    """Score = how many of the 8 words are `up` (0..4), as a float."""
    def row(i):
        count = rng.randint(0, 4)
        words = ["up"] * count + [rng.choice(WORDS) for _ in range(8 - count)]
        rng.shuffle(words)
        return [str(i), "main", "f", "2012", "0", "none", "none", " ".join(words[:4]), " ".join(words[4:]),
                f"{count:.1f}"]
    header = ["index", "genre", "filename", "year", "old_index", "source1", "source2", "sentence1", "sentence2",
              "score"]
    write_task(root, "STS-B", header, {"train": [row(i) for i in range(256)], "dev": [row(i) for i in range(128)]})


def train_and_score(tmp_path, task_name, steps, learning_rate):
    keras.utils.set_random_seed(0)
    task = get_task(task_name)
    tokenizer = WordTokenizer()
    train_file, _ = cached_features(task, str(tmp_path), "train", tokenizer, 16, str(tmp_path / "cache"))
    dev_file, dev_examples = cached_features(task, str(tmp_path), "dev", tokenizer, 16, str(tmp_path / "cache"))
    config = AlbertConfig(vocab_size=len(tokenizer.vocab), embedding_size=16, hidden_size=32, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=64, max_position_embeddings=16)
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    labels = 1 if task.is_regression else len(task.labels)
    with strategy.scope():
        model = AlbertClassifier(config, num_labels=labels)
        optimizer = create_optimizer(learning_rate, steps, steps // 10, "adamw", model=model)
    loop = LoopConfig(output_dir=str(tmp_path / "model"), num_train_steps=steps, global_batch_size=32,
                      steps_per_loop=steps, save_checkpoints_steps=steps)
    trainer = Trainer(strategy, model, optimizer, classification_loss, loop)
    trainer.train(lambda ctx, batch: classifier_dataset([train_file], 16, task.is_regression, batch, True, ctx),
                  log=lambda line: None)
    batches = prediction_batches([dev_file], classifier_decoder(16, task.is_regression), 32, (8, 16))
    logits = predict(model, batches)  # grouped by length, back in the examples' order
    gold = [e.label if task.is_regression else task.labels.index(e.label) for e in dev_examples]
    predictions = logits[:, 0] if task.is_regression else logits.argmax(-1)
    return glue_metrics(task_name, predictions, gold)


@pytest.mark.slow
def test_tiny_classifier_learns_a_pair_task(tmp_path):
    make_rte_like(tmp_path, random.Random(0))
    assert train_and_score(tmp_path, "rte", 300, 3e-3)["eval_accuracy"] >= 0.95


@pytest.mark.slow
def test_tiny_regressor_learns_a_score(tmp_path):
    make_sts_like(tmp_path, random.Random(1))
    assert train_and_score(tmp_path, "sts-b", 400, 3e-3)["pearson"] >= 0.9


def test_features_are_cached_and_rebuilt_when_the_length_changes(tmp_path):
    make_rte_like(tmp_path, random.Random(2))
    task, tokenizer = get_task("rte"), WordTokenizer()
    path, examples = cached_features(task, str(tmp_path), "dev", tokenizer, 16, str(tmp_path / "c"))
    assert path.endswith("c/rte_eval.tf_record")
    assert len(examples) == 128
    stamp = (tmp_path / "c" / "rte_eval.tf_record").stat().st_mtime_ns
    cached_features(task, str(tmp_path), "dev", tokenizer, 16, str(tmp_path / "c"))
    assert (tmp_path / "c" / "rte_eval.tf_record").stat().st_mtime_ns == stamp  # reused
    cached_features(task, str(tmp_path), "dev", tokenizer, 20, str(tmp_path / "c"))
    record = next(iter(tf.data.TFRecordDataset(path)))
    parsed = tf.train.Example.FromString(record.numpy()).features.feature
    assert len(parsed["input_ids"].int64_list.value) == 20
    assert parsed["label_ids"].int64_list.value[0] in (0, 1)


def test_a_nan_metric_is_never_best(tmp_path):
    """As the original: the best starts at -1 and must be beaten strictly (STS-B Pearson of constant predictions is
    NaN and must not become a best that nothing beats)."""
    from albert.weights.run_checkpoints import record_best

    model = AlbertClassifier(AlbertConfig(vocab_size=20, embedding_size=8, hidden_size=16, num_hidden_layers=1,
                                          num_attention_heads=2, intermediate_size=32), num_labels=1)
    best = tmp_path / "best_trial.txt"
    assert record_best(model, str(tmp_path), 100, float("nan")) == (0, -1.0)
    assert best.read_text() == "100:0:-1.0"
    assert not (tmp_path / "model.ckpt-best.index").exists()
    assert record_best(model, str(tmp_path), 200, 0.25) == (200, 0.25)
    assert best.read_text() == "200:200:0.25"
    assert (tmp_path / "model.ckpt-best.index").exists()
    assert record_best(model, str(tmp_path), 300, float("nan")) == (200, 0.25)
    assert record_best(model, str(tmp_path), 400, 0.25) == (200, 0.25)  # strictly better only
    assert best.read_text() == "400:200:0.25"


def test_the_feature_cache_is_rebuilt_when_labels_text_or_tokenizer_change(tmp_path):
    make_rte_like(tmp_path, random.Random(2))
    task, tokenizer = get_task("rte"), WordTokenizer()
    path, _ = cached_features(task, str(tmp_path), "train", tokenizer, 16, str(tmp_path / "c"))

    def labels():
        return [tf.train.Example.FromString(r.numpy()).features.feature["label_ids"].int64_list.value[0]
                for r in tf.data.TFRecordDataset(path)]

    before = labels()
    tsv = tmp_path / "RTE" / "train.tsv"
    lines = tsv.read_text().splitlines()
    flip = {"entailment": "not_entailment", "not_entailment": "entailment"}
    tsv.write_text("\n".join([lines[0]] + ["\t".join(r.split("\t")[:-1] + [flip[r.split("\t")[-1]]])
                                           for r in lines[1:]]) + "\n")
    cached_features(task, str(tmp_path), "train", tokenizer, 16, str(tmp_path / "c"))
    assert labels() == [1 - label for label in before]  # every label flipped: rebuilt, not reused
    stamp = os.stat(path).st_mtime_ns
    cached_features(task, str(tmp_path), "train", tokenizer, 16, str(tmp_path / "c"))
    assert os.stat(path).st_mtime_ns == stamp  # the same inputs: reused
    tokenizer.vocab["alpha"], tokenizer.vocab["beta"] = tokenizer.vocab["beta"], tokenizer.vocab["alpha"]
    cached_features(task, str(tmp_path), "train", tokenizer, 16, str(tmp_path / "c"))
    assert os.stat(path).st_mtime_ns != stamp  # another vocabulary: rebuilt


def test_a_truncated_feature_cache_is_rebuilt(tmp_path):
    """A cache record cut short (a full disk, a copy interrupted) no longer matches the size its key recorded: it is
    rebuilt rather than trained on with half the examples."""
    make_rte_like(tmp_path, random.Random(2))
    task, tokenizer = get_task("rte"), WordTokenizer()
    path, examples = cached_features(task, str(tmp_path), "train", tokenizer, 16, str(tmp_path / "c"))
    whole = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(whole[:len(whole) // 2])
    cached_features(task, str(tmp_path), "train", tokenizer, 16, str(tmp_path / "c"))
    assert open(path, "rb").read() == whole
    assert sum(1 for _ in tf.data.TFRecordDataset(path)) == len(examples)


def test_a_file_named_as_the_feature_key_that_the_cache_did_not_write_stays_and_is_refused(tmp_path):
    """albert.data.cache removes a stale `<record>.json` only when it is a key it wrote: a user's own file of that
    name is left as it was, and the run stops in one line naming it (nothing rebuilt over it)."""
    make_rte_like(tmp_path, random.Random(2))
    task, tokenizer = get_task("rte"), WordTokenizer()
    cached = tmp_path / "c"
    cached.mkdir()
    theirs = cached / "rte_train.tf_record.json"
    theirs.write_text('{"my": "notes"}\n')
    with pytest.raises(AlbertError) as caught:
        cached_features(task, str(tmp_path), "train", tokenizer, 16, str(cached))
    assert str(caught.value) == (f"{cached}/rte_train.tf_record.json: not a feature key of this project, and the "
                                 "features' key would replace it; move it, or write the features elsewhere "
                                 "(--cached_dir, --output_dir)")
    assert theirs.read_text() == '{"my": "notes"}\n' and sorted(os.listdir(cached)) == ["rte_train.tf_record.json"]
    theirs.unlink()
    record = cached / "rte_train.tf_record"
    record.write_bytes(b"a record made elsewhere")  # no key of this project beside it: not written over
    with pytest.raises(AlbertError) as caught:
        cached_features(task, str(tmp_path), "train", tokenizer, 16, str(cached))
    assert str(caught.value) == (f"{record}: a file this project did not write as features (no key "
                                 "rte_train.tf_record.json beside it) is where they would go; move it, or write the "
                                 "features elsewhere")
    assert record.read_bytes() == b"a record made elsewhere" and sorted(os.listdir(cached)) == ["rte_train.tf_record"]
    path, _ = cached_features(task, str(tmp_path), "train", tokenizer, 16, str(tmp_path / "other"))
    assert os.path.exists(path + ".json")  # a key this module wrote: replaced when stale, as before
    with open(path + ".json", encoding="utf-8") as f:
        stamped = json.load(f)
    with open(path + ".json", "w", encoding="utf-8") as f:  # as a kill while writing leaves it: the key, no size
        json.dump(dict(stamped, record_bytes=None), f)
    cached_features(task, str(tmp_path), "train", tokenizer, 16, str(tmp_path / "other"))  # rebuilt, not refused
    with open(path + ".json", encoding="utf-8") as f:
        assert json.load(f) == stamped
