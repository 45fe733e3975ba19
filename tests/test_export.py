"""export_to_tfhub.py, export_checkpoints.py and run_classifier.py --export_dir: every SavedModel is checked in a
fresh Python process that imports only tensorflow, tensorflow_text (and keras / tensorflow_hub where the check is
about them) -- never this package."""

import json
import os
import random
import re

import numpy as np
import pytest

from tests.export_helpers import fresh, random_strings, run_script, train_sentencepiece_with_numbers
from tests.helpers import ROOT

@pytest.fixture(scope="module")
def albert_dir(tmp_path_factory):
    """A model directory laid out as the released tarballs, with random weights (original names), exported."""
    import keras

    from albert import AlbertConfig, AlbertPretrainer
    from albert.weights.tf_checkpoints import save_original_checkpoint
    from albert.text.tokenization import load_sentencepiece

    directory = tmp_path_factory.mktemp("albert_dir")
    spm = train_sentencepiece_with_numbers(directory)
    sp = load_sentencepiece(spm)
    config = AlbertConfig(vocab_size=sp.GetPieceSize(), embedding_size=16, hidden_size=32, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=64, max_position_embeddings=32,
                          initializer_range=0.5)
    (directory / "albert_config.json").write_text(config.to_json_string())
    keras.utils.set_random_seed(0)
    keras.mixed_precision.set_global_policy("float32")
    save_original_checkpoint(AlbertPretrainer(config), str(directory / "model.ckpt-best"), global_step=7)
    hub = directory.parent / f"{directory.name}_hub"
    # No --seq_length: the default packing length is min(128, max_position_embeddings) = 32 ("default32" below).
    result = run_script("export_to_tfhub.py", f"--albert_directory={directory}", f"--export_path={hub}")
    assert result.returncode == 0, result.stderr[-3000:]
    return directory, hub


def keras_pretrainer(directory):
    from albert import AlbertConfig, AlbertPretrainer
    from albert.weights.loader import load_original_checkpoint

    model = AlbertPretrainer(AlbertConfig.from_json_file(str(directory / "albert_config.json")))
    assert not load_original_checkpoint(model, str(directory / "model.ckpt-best")).missing
    return model


def test_digit_comma_pieces_exist(albert_dir):
    from albert.text.tokenization import load_sentencepiece

    sp = load_sentencepiece(str(albert_dir[0] / "sp.model"))
    pieces = [sp.IdToPiece(i) for i in range(sp.GetPieceSize())]
    assert any(len(p) > 1 and p[-1] == "," and p[-2].isdigit() for p in pieces)


def test_encoder_and_mlm_match_the_keras_model(albert_dir, tmp_path):
    directory, hub = albert_dir
    rng = np.random.default_rng(0)
    lengths = [11, 7, 3]
    ids = rng.integers(5, 300, (3, 11)).astype(np.int32)
    mask = (np.arange(11)[None] < np.array(lengths)[:, None]).astype(np.int32)
    types = ((np.arange(11)[None] >= 4) & (mask == 1)).astype(np.int32)
    positions = np.array([[1, 5], [2, 3], [0, 1]], np.int32)
    np.savez(tmp_path / "inputs.npz", ids=ids * mask, mask=mask, types=types, positions=positions)
    fresh(f"""
        import numpy as np, tensorflow as tf
        x = np.load("inputs.npz")
        inputs = dict(input_word_ids=x["ids"], input_mask=x["mask"], input_type_ids=x["types"])
        encoder = tf.saved_model.load("{hub / 'encoder'}")
        out = encoder(inputs, training=False)
        sig = encoder.signatures["serving_default"](**{{k: tf.constant(v) for k, v in inputs.items()}})
        mlm = tf.saved_model.load("{hub / 'mlm'}")(dict(inputs, masked_lm_positions=x["positions"]), training=False)
        np.savez("outputs.npz", pooled=out["pooled_output"], sequence=out["sequence_output"],
                 layers=np.stack(out["encoder_outputs"]), default=out["default"], sig_pooled=sig["pooled_output"],
                 sig_layer1=sig["encoder_outputs_1"], mlm=mlm["mlm_logits"], sop=mlm["sop_logits"],
                 trainable=len(encoder.trainable_variables))
    """, tmp_path)
    got = np.load(tmp_path / "outputs.npz")
    model = keras_pretrainer(directory)
    want = model.with_hidden_states({"input_ids": ids * mask, "input_mask": mask, "segment_ids": types,
                                     "masked_lm_positions": positions}, training=False)
    np.testing.assert_allclose(got["pooled"], want["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(got["default"], want["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(got["sig_pooled"], want["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(got["sequence"], want["sequence_output"], atol=1e-5)
    np.testing.assert_allclose(got["layers"], np.stack(want["encoder_outputs"]), atol=1e-5)
    np.testing.assert_allclose(got["sig_layer1"], want["encoder_outputs"][1], atol=1e-5)
    np.testing.assert_allclose(got["mlm"], want["mlm_logits"], atol=1e-5)
    np.testing.assert_allclose(got["sop"], want["sop_logits"], atol=1e-5)
    assert int(got["trainable"]) == len(model.encoder.trainable_variables)
    # encoder/model.tflite: LiteRT, at the export's length (32 here), batch 3 and 1.
    from ai_edge_litert.interpreter import Interpreter

    lite = Interpreter(model_path=str(hub / "encoder" / "model.tflite")).get_signature_runner("serve")
    padded = {name: np.pad(value, ((0, 0), (0, 32 - 11))) for name, value in
              (("input_word_ids", ids * mask), ("input_mask", mask), ("input_type_ids", types))}
    for rows in (slice(0, 3), slice(1, 2)):
        out = lite(**{k: v[rows] for k, v in padded.items()})
        want = model.encoder({"input_ids": padded["input_word_ids"][rows], "input_mask": padded["input_mask"][rows],
                              "segment_ids": padded["input_type_ids"][rows]}, training=False)
        assert sorted(out) == ["pooled_output", "sequence_output"]
        np.testing.assert_allclose(out["pooled_output"], want["pooled_output"], atol=1e-5)
        np.testing.assert_allclose(out["sequence_output"], want["sequence_output"], atol=1e-5)
    # The file's sequence axis is fixed (MediaPipe's TextEmbedder reads only that): a batch of 11 positions is padded
    # by albert.export.litert.tflite_runner, its per-position outputs cut back.
    assert [list(d["shape_signature"]) for d in lite.get_input_details().values()] == [[-1, 32]] * 3
    from albert.export.litert import tflite_runner

    out = tflite_runner(str(hub / "encoder" / "model.tflite"))({k: v[:, :11] for k, v in padded.items()})
    want = model.encoder({"input_ids": padded["input_word_ids"], "input_mask": padded["input_mask"],
                          "segment_ids": padded["input_type_ids"]}, training=False)
    np.testing.assert_allclose(out["pooled_output"], want["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(out["sequence_output"], want["sequence_output"][:, :11], atol=1e-5)


@pytest.mark.slow
def test_preprocessor_ids_equal_the_python_tokenizer(albert_dir, tmp_path):
    from albert.tasks.classification.glue import InputExample, convert_example, get_task
    from albert.text.tokenization import FullTokenizer

    directory, hub = albert_dir
    rng = random.Random(11)
    texts = random_strings(rng, 300)
    pairs = [(rng.choice(texts), rng.choice(texts)) for _ in range(150)]
    (tmp_path / "texts.json").write_text(json.dumps({"texts": texts, "pairs": pairs}))
    fresh(f"""
        import json, tensorflow as tf, tensorflow_text
        data = json.load(open("texts.json"))
        pre = tf.saved_model.load("{hub / 'preprocessor'}")
        ids = pre.tokenize(tf.constant(data["texts"])).to_list()
        default = pre(tf.constant(data["texts"]))
        a = pre.tokenize(tf.constant([p[0] for p in data["pairs"]]))
        b = pre.tokenize(tf.constant([p[1] for p in data["pairs"]]))
        # 32 is the export's --seq_length (a Python int); other lengths go in as tensors.
        packed = {{name: {{k: v.numpy().tolist() for k, v in pre.bert_pack_inputs(segs, seq_length=n).items()}}
                  for name, n, segs in (("pair32", 32, [a, b]), ("pair9", tf.constant(9), [a, b]),
                                        ("single12", tf.constant(12), [a]))}}
        packed["default32"] = {{k: v.numpy().tolist() for k, v in default.items()}}
        json.dump({{"ids": ids, "packed": packed, "sp": pre.sp_model_file.asset_path.numpy().decode()}},
                  open("ids.json", "w"))
    """, tmp_path)
    got = json.loads((tmp_path / "ids.json").read_text())
    tokenizer = FullTokenizer(None, True, str(directory / "sp.model"))
    assert got["ids"] == [tokenizer.tokenize_to_ids(t) for t in texts]
    assert any(sum(p.endswith(",") for p in tokenizer.tokenize(t)) for t in texts)  # the rule was exercised
    task = get_task("rte")

    def python_packing(pairs_or_texts, length):
        features = [convert_example(InputExample("g", a, b, "entailment"), task, length, tokenizer)
                    for a, b in pairs_or_texts]
        return {"input_word_ids": [f.input_ids for f in features], "input_mask": [f.input_mask for f in features],
                "input_type_ids": [f.segment_ids for f in features]}

    assert got["packed"]["pair32"] == python_packing(pairs, 32)
    assert got["packed"]["pair9"] == python_packing(pairs, 9)
    assert got["packed"]["single12"] == python_packing([(a, None) for a, _ in pairs], 12)
    assert got["packed"]["default32"] == python_packing([(t, None) for t in texts], 32)
    assert sum(1 for a, b in pairs if len(tokenizer.tokenize(a)) + len(tokenizer.tokenize(b)) > 29) > 20
    assert sum(1 for a, b in pairs if len(tokenizer.tokenize(a)) + len(tokenizer.tokenize(b)) > 6) > 50
    assert os.path.basename(got["sp"]) == "sp.model"


@pytest.mark.slow
def test_hub_layer_fine_tunes_the_encoder_with_adam(albert_dir, tmp_path):
    """albert.export.hub.HubLayer: TFSMLayer without the ':0' variable names, so Adam works (plain TFSMLayer fails)."""
    _, hub = albert_dir
    result = fresh(f"""
        import json, numpy as np, tensorflow as tf, keras
        from albert.export.hub import HubLayer
        inputs = {{k: keras.Input((12,), dtype="int32", name=k) for k in
                  ("input_word_ids", "input_mask", "input_type_ids")}}
        layer = HubLayer("{hub / 'encoder'}")
        model = keras.Model(inputs, keras.layers.Dense(2)(layer(inputs)["pooled_output"]))
        model.compile(optimizer=keras.optimizers.Adam(1e-3),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        before = [v.numpy().copy() for v in layer.trainable_variables]
        rng = np.random.default_rng(0)
        x = dict(input_word_ids=rng.integers(5, 300, (8, 12)).astype("int32"),
                 input_mask=np.ones((8, 12), "int32"), input_type_ids=np.zeros((8, 12), "int32"))
        y = np.arange(8) % 2
        losses = model.fit(x, y, epochs=8, batch_size=8, verbose=0).history["loss"]
        changed = sum(not np.array_equal(a, v.numpy()) for a, v in zip(before, layer.trainable_variables))
        print(json.dumps(dict(changed=int(changed), total=len(before), first=losses[0], last=losses[-1],
                              colons=sum(":" in v.name for v in layer.weights))))
    """, tmp_path, env_extra={"PYTHONPATH": ROOT})
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["total"] > 10
    assert got["changed"] == got["total"]
    assert got["last"] < got["first"]
    assert got["colons"] == 0


def test_keras3_fine_tunes_the_encoder_through_tfsmlayer(albert_dir, tmp_path):
    _, hub = albert_dir
    result = fresh(f"""
        import json, numpy as np, tensorflow as tf, keras
        layer = keras.layers.TFSMLayer("{hub / 'encoder'}", call_endpoint="serve", call_training_endpoint="serve_train",
                                       trainable=True)
        inputs = {{k: keras.Input((12,), dtype="int32", name=k) for k in
                  ("input_word_ids", "input_mask", "input_type_ids")}}
        logits = keras.layers.Dense(2)(layer(inputs)["pooled_output"])
        model = keras.Model(inputs, logits)
        # SGD: in Keras 3.15 TFSMLayer names its variables "<name>:0", which optimizers with slots reject
        # ("... :0_momentum is not a valid scope name"); see the README.
        model.compile(optimizer=keras.optimizers.SGD(0.1),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        before = [v.numpy().copy() for v in layer.trainable_variables]
        rng = np.random.default_rng(0)
        x = dict(input_word_ids=rng.integers(5, 300, (4, 12)).astype("int32"),
                 input_mask=np.ones((4, 12), "int32"), input_type_ids=np.zeros((4, 12), "int32"))
        model.train_on_batch(x, np.array([0, 1, 0, 1]))
        changed = sum(not np.array_equal(a, v.numpy()) for a, v in zip(before, layer.trainable_variables))
        print(json.dumps(dict(changed=int(changed), total=len(before))))
    """, tmp_path)
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["total"] > 10
    assert got["changed"] == got["total"]


@pytest.mark.slow
def test_tensorflow_hub_keras_layer_loads_the_encoder_and_preprocessor(albert_dir, tmp_path):
    _, hub = albert_dir
    result = fresh(f"""
        import json, numpy as np, tensorflow as tf, tensorflow_text, tensorflow_hub as hub
        text = tf.keras.Input((), dtype=tf.string)
        inputs = hub.KerasLayer("{hub / 'preprocessor'}")(text)
        outputs = hub.KerasLayer("{hub / 'encoder'}", trainable=True)(inputs)
        model = tf.keras.Model(text, outputs["pooled_output"])
        sentences = tf.constant(["Hello WORLD, 1,000 times.", "naïve café"])
        direct = tf.saved_model.load("{hub / 'encoder'}")(
            tf.saved_model.load("{hub / 'preprocessor'}")(sentences), training=False)["pooled_output"]
        print(json.dumps(dict(diff=float(np.abs(model(sentences).numpy() - direct.numpy()).max()),
                              trainable=len(model.trainable_variables))))
    """, tmp_path, env_extra={"TF_USE_LEGACY_KERAS": "1"})
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["diff"] < 1e-6
    assert got["trainable"] > 10


@pytest.mark.slow
def test_the_tf_hub_tutorial_pattern_fine_tunes_saves_and_reloads(albert_dir, tmp_path):
    """TF Hub's "classify text with BERT" pattern, in a process that imports only tensorflow, tensorflow_text,
    tensorflow_hub and tf_keras: hub.KerasLayer(preprocessor) -> hub.KerasLayer(encoder, trainable=True) -> Dense,
    fit, save, reload; and the input pipeline that needs the preprocessor's fixed shape:
    dataset.batch(n).map(preprocessor).unbatch().shuffle().batch(m) over short and long texts."""
    _, hub = albert_dir
    result = fresh(f"""
        import json, numpy as np, tensorflow as tf, tensorflow_text, tensorflow_hub as hub, tf_keras
        texts = ["a b", "the cat sat on the mat and then ran far away from home with its friend " * 3] * 8
        labels = np.array([0, 1] * 8)
        preprocessor = hub.load("{hub / 'preprocessor'}")
        dataset = (tf.data.Dataset.from_tensor_slices(texts).batch(3).map(preprocessor).unbatch().shuffle(16)
                   .batch(5))
        shapes = sorted({{tuple(batch["input_word_ids"].shape) for batch in dataset}})
        text = tf_keras.Input((), dtype=tf.string)
        encoded = hub.KerasLayer("{hub / 'encoder'}", trainable=True)(hub.KerasLayer("{hub / 'preprocessor'}")(text))
        model = tf_keras.Model(text, tf_keras.layers.Dense(2)(encoded["pooled_output"]))
        model.compile(tf_keras.optimizers.Adam(1e-3),
                      tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        before = model(tf.constant(texts[:2])).numpy()
        history = model.fit(tf.constant(texts), labels, epochs=2, batch_size=4, verbose=0)
        after = model(tf.constant(texts[:2])).numpy()
        model.save("saved", include_optimizer=False)
        reloaded = tf.saved_model.load("saved")
        again = reloaded(tf.constant(texts[:2]), training=False).numpy()
        print(json.dumps({{"shapes": shapes, "moved": float(np.abs(after - before).max()),
                          "reload": float(np.abs(again - after).max()), "losses": len(history.history["loss"])}}))
    """, tmp_path, env_extra={"TF_USE_LEGACY_KERAS": "1"})
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["shapes"] == [[1, 32], [5, 32]]
    assert got["losses"] == 2
    assert got["moved"] > 1e-4
    assert got["reload"] < 1e-5


def rte_rows(rng, texts, n):
    """n RTE rows (index, sentence1, sentence2, label) of random text: tabs and newlines would break the TSV."""
    clean = lambda: rng.choice(texts).replace("\t", " ").replace("\n", " ")
    return [[str(i), clean(), clean(), rng.choice(["entailment", "not_entailment"])] for i in range(n)]


@pytest.mark.slow
def test_classifier_serving_model_reproduces_do_predict(albert_dir, tmp_path):
    from tests.test_classification_training import write_task

    directory, _ = albert_dir
    rng = random.Random(2)
    texts = random_strings(rng, 80)
    rows = lambda n: rte_rows(rng, texts, n)
    write_task(tmp_path, "RTE", ["index", "sentence1", "sentence2", "label"], {"train": rows(8), "dev": rows(8)})
    test_rows = [r[:3] for r in rows(40)]
    write_task(tmp_path, "RTE", ["index", "sentence1", "sentence2"], {"test": test_rows})
    out, export = tmp_path / "out", tmp_path / "serving"
    result = run_script("run_classifier.py", "--task_name=RTE", f"--data_dir={tmp_path}", f"--output_dir={out}",
                        f"--albert_config_file={directory / 'albert_config.json'}",
                        f"--spm_model_file={directory / 'sp.model'}", f"--init_checkpoint={directory / 'model.ckpt-best'}",
                        "--do_predict", "--max_seq_length=24", f"--export_dir={export}")
    assert result.returncode == 0, result.stderr[-3000:]
    (tmp_path / "test.json").write_text(json.dumps(test_rows))
    fresh(f"""
        import json, numpy as np, tensorflow as tf, tensorflow_text
        rows = json.load(open("test.json"))
        serve = tf.saved_model.load("{export}").signatures["serving_default"]
        out = serve(text_a=tf.constant([r[1] for r in rows]), text_b=tf.constant([r[2] for r in rows]))
        np.save("probabilities.npy", out["probabilities"].numpy())
        json.dump([p.decode() for p in out["predictions"].numpy()], open("predictions.json", "w"))
    """, tmp_path)
    expected = np.array([[float(x) for x in line.split("\t")]
                         for line in (out / "test_results.tsv").read_text().splitlines()])
    got = np.load(tmp_path / "probabilities.npy")
    np.testing.assert_allclose(got, expected, atol=2e-6)
    assert len(set(np.round(expected[:, 0], 4))) >= 35  # each text gives its own output: a token changes it
    submitted = [line.split("\t")[1] for line in (out / "submit_results.tsv").read_text().splitlines()[1:]]
    assert json.loads((tmp_path / "predictions.json").read_text()) == submitted
    # model.tflite beside it takes the packed ids (tokenized in Python: SentencePiece has no LiteRT op) -> logits.
    from ai_edge_litert.interpreter import Interpreter

    from albert.tasks.classification.glue import InputExample, convert_example, get_task
    from albert.text.tokenization import FullTokenizer

    tokenizer = FullTokenizer(None, True, str(directory / "sp.model"))
    features = [convert_example(InputExample(r[0], r[1], r[2], "entailment"), get_task("rte"), 24, tokenizer)
                for r in test_rows]
    lite = Interpreter(model_path=str(export / "model.tflite")).get_signature_runner("serve")
    logits = lite(input_ids=np.array([f.input_ids for f in features], np.int32),
                  input_mask=np.array([f.input_mask for f in features], np.int32),
                  segment_ids=np.array([f.segment_ids for f in features], np.int32))["logits"]
    probabilities = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.testing.assert_allclose(probabilities, expected, atol=1e-5)


def test_export_checkpoints_keeps_original_names_without_optimizer_slots(albert_dir, tmp_path):
    import shutil

    import tensorflow as tf

    from albert.train.optimizers import create_optimizer

    directory, _ = albert_dir
    model = keras_pretrainer(directory)
    optimizer = create_optimizer(1e-3, 10, 0, "lamb", model=model)
    optimizer.build(model.trainable_variables)
    source = tmp_path / "run"
    source.mkdir()
    for name in ("albert_config.json", "sp.model"):
        shutil.copy(directory / name, source / name)
    tf.train.Checkpoint(model=model, optimizer=optimizer).write(str(source / "model.ckpt-40"))
    result = run_script("export_checkpoints.py", f"--albert_directory={source}", "--checkpoint_name=model.ckpt-40",
                        f"--export_path={tmp_path / 'export' / 'model.ckpt-best'}")
    assert result.returncode == 0, result.stderr[-3000:]
    written = tf.train.load_checkpoint(str(tmp_path / "export" / "model.ckpt-best"))
    original = tf.train.load_checkpoint(str(directory / "model.ckpt-best"))
    names = written.get_variable_to_shape_map()
    assert sorted(names) == sorted(original.get_variable_to_shape_map())  # same names: no slots, no extras
    assert int(written.get_tensor("global_step")) == 40
    for name in names:
        if name != "global_step":
            np.testing.assert_array_equal(written.get_tensor(name), original.get_tensor(name))


@pytest.mark.slow
@pytest.mark.parametrize("case", ["no config", "no spm", "two spm", "no checkpoint", "vocab mismatch",
                                  "fine-tuned checkpoint"])
def test_bad_model_directories(albert_dir, tmp_path, case):
    import shutil

    directory, _ = albert_dir
    source = tmp_path / "albert"
    shutil.copytree(directory, source, ignore=shutil.ignore_patterns("text.txt"))
    if case == "no config":
        (source / "albert_config.json").unlink()
        message = (f"{source}/albert_config.json: not found; --albert_directory must hold albert_config.json, the "
                   "SentencePiece .model and the checkpoint")
    elif case == "no spm":
        (source / "sp.model").unlink()
        message = f"{source}: no SentencePiece .model file; pass --spm_model_file"
    elif case == "two spm":
        shutil.copy(source / "sp.model", source / "other.model")
        message = f"{source}: 2 SentencePiece .model files (other.model, sp.model); pass --spm_model_file"
    elif case == "no checkpoint":
        for f in source.glob("model.ckpt-best.*"):
            f.rename(source / f.name.replace("best", "5"))
        message = f"{source}/model.ckpt-best.index: checkpoint not found; pass --checkpoint_name (found: model.ckpt-5)"
    elif case == "vocab mismatch":
        config = json.loads((source / "albert_config.json").read_text())
        config["vocab_size"] += 1
        (source / "albert_config.json").write_text(json.dumps(config))
        message = (f"{source}/sp.model has 300 pieces but {source}/albert_config.json says vocab_size 301: they "
                   "are not from the same model")
    else:
        from albert import AlbertClassifier, AlbertConfig
        from albert.weights.tf_checkpoints import save_original_checkpoint

        config = AlbertConfig.from_json_file(str(source / "albert_config.json"))
        save_original_checkpoint(AlbertClassifier(config, num_labels=2), str(source / "model.ckpt-best"))
        message = (f"{source}/model.ckpt-best: lacks 7 variables of the pretraining model (first: "
                   "cls/predictions/output_bias); export a pretraining checkpoint, not a fine-tuned one")
    out = tmp_path / "hub"
    result = run_script("export_to_tfhub.py", f"--albert_directory={source}", f"--export_path={out}",
                        "--seq_length=32")
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip().splitlines()[-1].startswith(f"export_to_tfhub.py: error: {message}")
    assert sorted(os.listdir(tmp_path)) == ["albert"]  # no export, no temporary directory


@pytest.mark.slow
def test_classifier_export_reports_the_quantized_files_dev_metric(albert_dir, tmp_path):
    """--export_dir with --do_eval: the model.tflite (here dynamic_int8) is scored on dev next to the float model,
    in tflite_results.txt."""
    from tests.test_classification_training import write_task

    directory, _ = albert_dir
    rng = random.Random(3)
    texts = random_strings(rng, 40)
    rows = lambda n: rte_rows(rng, texts, n)
    write_task(tmp_path, "RTE", ["index", "sentence1", "sentence2", "label"], {"train": rows(8), "dev": rows(16)})
    out, export = tmp_path / "out", tmp_path / "serving"
    result = run_script("run_classifier.py", "--task_name=RTE", f"--data_dir={tmp_path}", f"--output_dir={out}",
                        f"--albert_config_file={directory / 'albert_config.json'}",
                        f"--spm_model_file={directory / 'sp.model'}", f"--init_checkpoint={directory / 'model.ckpt-best'}",
                        "--do_train", "--train_step=2", "--save_checkpoints_steps=2", "--do_eval",
                        "--max_seq_length=24", f"--export_dir={export}", "--tflite_quantization=dynamic_int8")
    assert result.returncode == 0, result.stderr[-3000:]
    line = (out / "tflite_results.txt").read_text().strip()
    match = re.fullmatch(rf"{re.escape(str(export))}/model\.tflite \(dynamic_int8, ([0-9.]+) MiB\): dev eval_accuracy "
                         r"([0-9.]+), float model ([0-9.]+) \(([-+][0-9.]+)\)", line)
    assert match, line
    evaluated = dict(l.split(" = ") for l in (out / "eval_results.txt").read_text().splitlines())
    assert float(match.group(3)) == round(float(evaluated["eval_accuracy"]), 4)  # the float model: model.ckpt-best
    assert abs(float(match.group(2)) - float(match.group(3))) <= 0.125  # at most 2 of 16 dev pairs flip
    assert float(match.group(1)) == round((export / "model.tflite").stat().st_size / 2**20, 1)
    assert line in result.stdout
