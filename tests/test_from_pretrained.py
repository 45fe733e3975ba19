"""`Model.from_pretrained` on a directory laid out as the released tarballs (written by save_original_checkpoint,
or one of our TF2 checkpoints): weights loaded and reported, the preprocessor attached, `fit`/`predict` on raw
strings, the `.keras` round trip keeping the preprocessor, and the bad inputs."""

import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest

import albert
from tests.helpers import ROOT

PRETRAINED = dict(vocab_size=300, embedding_size=8, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=32, num_hidden_groups=2, inner_group_num=1)


@pytest.fixture(scope="module")
def released(spm_model, tmp_path_factory):
    """A directory laid out as the released tarballs: albert_config.json, the .model/.vocab and model.ckpt-best
    written with the original TF1 names from a pretraining model (MLM and SOP heads included)."""
    import json
    import shutil

    directory = tmp_path_factory.mktemp("albert_tiny")
    for suffix in (".model", ".vocab"):
        shutil.copy(spm_model[:-len(".model")] + suffix, directory / f"30k-clean{suffix}")
    config = albert.AlbertConfig(**PRETRAINED)
    (directory / "albert_config.json").write_text(json.dumps(config.to_dict()))
    keras.utils.set_random_seed(8)
    source = albert.AlbertPretrainer(config)
    albert.save_original_checkpoint(source, str(directory / "model.ckpt-best"))
    return str(directory), source


def keyword_task(rng, rows):
    """Label 1 when the first text holds "cat"/"mat" (three times), 0 for "home"/"friend"; the second text is
    filler: learnable from raw strings by a tiny model in a few epochs."""
    from tests.export_helpers import WORDS

    filler = [w for w in WORDS if w not in ("cat", "mat", "home", "friend")]
    first, second, labels = [], [], []
    for _ in range(rows):
        label = rng.randrange(2)
        words = [rng.choice(filler) for _ in range(6)]
        for _ in range(3):
            words.insert(rng.randrange(len(words) + 1), rng.choice(["cat", "mat"] if label else ["home", "friend"]))
        first.append(" ".join(words).capitalize() + ".")
        second.append(" ".join(rng.choice(filler) for _ in range(4)))
        labels.append(label)
    return first, second, np.array(labels)


@pytest.mark.slow
def test_from_pretrained_fine_tunes_on_raw_strings_and_the_keras_file_keeps_the_preprocessor(released, tmp_path):
    import random
    import shutil

    from albert.tasks.classification.glue import InputExample, convert_example, get_task
    from albert.text.tokenization import FullTokenizer

    directory, source = released
    keras.utils.set_random_seed(0)
    model = albert.AlbertClassifier.from_pretrained(directory, num_labels=2, seq_length=24)
    assert sorted(model.load_report.missing) == ["output_bias", "output_weights"]  # the fresh head, reported
    for got, want in zip(model.encoder.weights, source.encoder.weights):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    rng = random.Random(0)
    a, b, y = keyword_task(rng, 400)
    test_a, test_b, test_y = keyword_task(rng, 200)
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x=(a, b), y=y, batch_size=32, epochs=8, validation_data=((test_a, test_b), test_y),
                        verbose=0).history
    loss, accuracy = model.evaluate((test_a, test_b), test_y, verbose=0)
    assert accuracy >= 0.8 and history["val_accuracy"][-1] == pytest.approx(accuracy), history  # chance: 0.5
    assert loss < 0.6 * history["loss"][0]

    # predict on raw strings: only the logits, equal to the Python tokenizer + GLUE features path
    texts = ["The cat sat on the MAT.", "Naïve café, 1,024 times", "home"]
    predictions = model.predict(texts, verbose=0)
    assert predictions.shape == (3, 2)
    tokenizer, task = FullTokenizer(None, True, os.path.join(directory, "30k-clean.model")), get_task("mrpc")
    features = [convert_example(InputExample("p", t, None, "0"), task, 24, tokenizer) for t in texts]
    x = {k: np.array([getattr(f, k) for f in features], "int32") for k in ("input_ids", "input_mask", "segment_ids")}
    np.testing.assert_allclose(predictions, np.asarray(model(x)), atol=1e-5)

    # the .keras file carries the preprocessor (and its SentencePiece model: the directory is gone)
    model.save(str(tmp_path / "fine_tuned.keras"))
    np.save(tmp_path / "expected.npy", model.predict((test_a[:5], test_b[:5]), verbose=0))
    moved = directory + ".moved"
    shutil.move(directory, moved)
    try:
        code = textwrap.dedent(f"""
            import albert, numpy as np
            model = albert.load_model("fine_tuned.keras")
            assert model.preprocessor.seq_length == 24
            np.save("reloaded.npy", model.predict(({test_a[:5]!r}, {test_b[:5]!r}), verbose=0))
        """)
        result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                                env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"), timeout=300)
    finally:
        shutil.move(moved, directory)
    assert result.returncode == 0, result.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "reloaded.npy"), np.load(tmp_path / "expected.npy"), atol=1e-6)


@pytest.mark.slow
def test_from_pretrained_on_every_model_loads_what_the_checkpoint_holds(released, tmp_path):
    import tensorflow as tf

    directory, source = released
    encoder = albert.AlbertEncoder.from_pretrained(directory, seq_length=16)
    assert encoder.load_report.missing == []
    assert encoder.predict(["the cat sat", "a mat"], verbose=0)["pooled_output"].shape == (2, 16)

    pretrainer = albert.AlbertPretrainer.from_pretrained(directory, seq_length=16)
    assert pretrainer.load_report.missing == []  # the MLM and SOP heads come from the checkpoint too
    logits = pretrainer.predict(["the cat sat on the mat"], verbose=0)  # every position is an MLM position
    features = dict(pretrainer.preprocessor(tf.constant(["the cat sat on the mat"])))
    features["masked_lm_positions"] = np.arange(16, dtype="int32")[None]
    np.testing.assert_allclose(logits["mlm_logits"], np.asarray(source(features)["mlm_logits"]), atol=1e-5)
    assert logits["mlm_logits"].shape == (1, 16, 300)

    squad = albert.AlbertSquadV2.from_pretrained(directory, seq_length=20, start_n_top=2, end_n_top=2)
    assert len(squad.load_report.missing) == 11
    assert (all(  # the XLNet-style head: 11 fresh variables
        n.split("/")[0] in ("start_logits", "end_logits", "answer_class") for n in squad.load_report.missing))
    features = squad.features_from_text((tf.constant(["who sat?"]), tf.constant(["the cat sat on the mat"])))
    segments, mask = features["segment_ids"].numpy()[0], features["input_mask"].numpy()[0]
    last = int(mask.sum()) - 1
    # the original's p_mask: [CLS] 0, question and its [SEP] 1, context 0, final [SEP] 1, padding 1
    want = [0 if i == 0 or (segments[i] == 1 and i < last) else 1 for i in range(20)]
    assert features["p_mask"].numpy()[0].tolist() == want
    assert 0 < segments.sum() < last
    outputs = squad.predict((["who sat?"], ["the cat sat on the mat"]), verbose=0)
    assert outputs["start_top_index"].shape == (1, 2)
    assert outputs["cls_logits"].shape == (1,)

    choice = albert.AlbertMultipleChoice.from_pretrained(directory, num_choices=3, seq_length=16)
    contexts, endings = ["the cat sat", "a mat"], [["on it", "far away", "home"], ["x", "y", "then ran"]]
    logits = choice.predict((contexts, endings), verbose=0)
    pairs = choice.preprocessor((tf.constant([c for c in contexts for _ in range(3)]),
                                 tf.constant([e for row in endings for e in row])))
    flat = {k: tf.reshape(v, (2, 3, 16)) for k, v in pairs.items()}
    np.testing.assert_allclose(logits, np.asarray(choice(flat)), atol=1e-5)

    # a checkpoint of ours (TF2, object-based): the same task's head is restored, another task's is reported
    classifier = albert.AlbertClassifier.from_pretrained(directory, num_labels=2, seq_length=16)
    ours = tmp_path / "ours"
    ours.mkdir()
    for name in ("albert_config.json", "30k-clean.model"):
        os.link(os.path.join(directory, name), ours / name)
    tf.train.Checkpoint(model=classifier).write(str(ours / "model.ckpt-best"))
    again = albert.AlbertClassifier.from_pretrained(str(ours), num_labels=2, seq_length=16)
    assert again.load_report.missing == []
    np.testing.assert_allclose(again.predict(["a cat"], verbose=0), classifier.predict(["a cat"], verbose=0),
                               atol=1e-6)
    v1 = albert.AlbertSquadV1.from_pretrained(str(ours), seq_length=16)
    assert sorted(n.rsplit("/", 1)[1] for n in v1.load_report.missing) == ["output_bias", "output_weights"]


def test_from_pretrained_and_strings_reject_bad_input_with_one_line(released, tmp_path):
    import json
    import shutil

    from albert.ground.errors import AlbertError

    directory, _ = released
    with pytest.raises(AlbertError, match=r"nowhere: the model directory not found"):
        albert.AlbertClassifier.from_pretrained(str(tmp_path / "nowhere"), num_labels=2)
    with pytest.raises(AlbertError, match=r"model.ckpt-9.index: checkpoint not found; pass checkpoint_name= "
                                          r"\(found: model.ckpt-best\)"):
        albert.AlbertClassifier.from_pretrained(directory, num_labels=2, checkpoint_name="model.ckpt-9")
    with pytest.raises(AlbertError, match=r"AlbertClassifier.from_pretrained: seq_length 64 exceeds "
                                          r"max_position_embeddings \(32\) of .*albert_config.json$"):
        albert.AlbertClassifier.from_pretrained(directory, num_labels=2, seq_length=64)
    with pytest.raises(AlbertError, match=r"seq_length 2 leaves no room for a piece between \[CLS\] and \[SEP\]"):
        albert.AlbertClassifier.from_pretrained(directory, num_labels=2, seq_length=2)
    other = tmp_path / "other"
    shutil.copytree(directory, other)
    (other / "albert_config.json").write_text(json.dumps(dict(PRETRAINED, vocab_size=30000)))
    with pytest.raises(AlbertError, match=r"30k-clean.model has 300 pieces but .*albert_config.json says "
                                          r"vocab_size 30000: they are not from the same model"):
        albert.AlbertEncoder.from_pretrained(str(other))
    with pytest.raises(AlbertError, match=r"AlbertClassifier got strings but has no preprocessor: make it with "
                                          r"from_pretrained\(directory\)"):
        albert.AlbertClassifier(albert.AlbertConfig(**PRETRAINED), num_labels=2).predict(["text"], verbose=0)
