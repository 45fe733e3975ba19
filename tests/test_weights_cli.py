"""Weights of every format through the command lines: `python -m albert.convert`'s bad inputs (one line, exit 2,
nothing written), export_to_tfhub.py on a Hugging Face directory (checked in a fresh process against the
reference's outputs) and run_classifier.py --init_checkpoint=<Hugging Face directory> --export_dir."""

import functools
import json
import os
import random
import shutil

import numpy as np
import pytest

from tests.export_helpers import fresh, run_script
from tests.helpers import golden, ROOT, run_command
from tests.helpers import WEIGHT_FIXTURES as FIXTURES


run_convert = functools.partial(run_command, "albert.convert", cwd=ROOT, timeout=300)


def edit_json(path, **changes):
    values = json.loads(path.read_text())
    values.update(changes)
    path.write_text(json.dumps(values))


def drop_tensor(path, name):
    from safetensors.numpy import load_file, save_file

    tensors = load_file(str(path))
    del tensors[name]
    save_file(tensors, str(path), metadata={"format": "pt"})


QUERY = "encoder.albert_layer_groups.1.albert_layers.0.attention.query.weight"
BAD_INPUTS = {
    "bert": ("hf_model", lambda d: edit_json(d / "config.json", model_type="bert"),
             "{d}/config.json: a Hugging Face `bert` config, not ALBERT (model_type must be \"albert\"); pass an "
             "ALBERT model's directory"),
    "missing tensor": ("hf_model", lambda d: drop_tensor(d / "model.safetensors", QUERY),
                       "{d}/model.safetensors: the model needs bert/encoder/transformer/group_1/inner_group_0/"
                       f"attention_1/self/query/kernel (Hugging Face: {QUERY}) but the checkpoint lacks it: the "
                       "checkpoint has block group_1/inner_group_0 but not this tensor: it is incomplete or damaged"),
    "shape": ("hf_classifier", lambda d: edit_json(d / "config.json", intermediate_size=32),
              "{d}/model.safetensors: variable bert/encoder/transformer/group_0/inner_group_0/ffn_1/intermediate/"
              "dense/bias (Hugging Face: albert.encoder.albert_layer_groups.0.albert_layers.0.ffn.bias) has shape "
              "[24] in the checkpoint but [32] in the model: the checkpoint was made with another intermediate_size "
              "/ hidden_size; use the config.json that came with the checkpoint"),
    "activation": ("hf_model", lambda d: edit_json(d / "config.json", hidden_act="gelu"),
                   "{d}/config.json: `hidden_act` 'gelu' is not implemented (ALBERT's GELU is the tanh "
                   "approximation, Hugging Face's \"gelu_new\"); supported: gelu_new, gelu_pytorch_tanh, relu, tanh, "
                   "linear"),
    "not a PyTorch file": ("hf_model", lambda d: (d / "model.safetensors").rename(d / "pytorch_model.bin"),
                           "{d}/pytorch_model.bin: not a PyTorch zip checkpoint (the legacy format of PyTorch < 1.6, "
                           "or damaged); save the weights as model.safetensors"),
    "no weights": ("hf_model", lambda d: (d / "model.safetensors").unlink(),
                   "{d}: no model.safetensors, pytorch_model.bin or tf_model.h5 (a Hugging Face model directory holds "
                   "config.json, model.safetensors and spiece.model)"),
    "keras-hub bert": ("kh_backbone", lambda d: edit_json(d / "config.json", class_name="BertBackbone"),
                       "{d}/config.json: a keras-hub BertBackbone preset, not ALBERT (class_name must be "
                       "AlbertBackbone); pass an ALBERT preset directory"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_convert_rejects_bad_inputs_with_one_line(case, tmp_path):
    fixture, damage, message = BAD_INPUTS[case]
    source = tmp_path / "model"
    shutil.copytree(os.path.join(FIXTURES, fixture), source)
    damage(source)
    result = run_convert(f"--input={source}", f"--output={tmp_path / 'out'}", "--to=release")
    assert result.returncode == 2, result.stderr[-2000:]
    lines = [line for line in result.stderr.strip().splitlines() if line.startswith("convert.py: error:")]
    assert lines == [f"convert.py: error: {message.format(d=source)}"], result.stderr[-2000:]
    assert sorted(os.listdir(tmp_path)) == ["model"]  # no output, no temporary directory


@pytest.mark.slow
def test_export_to_tfhub_from_a_huggingface_directory(tmp_path):
    """The encoder and MLM SavedModels of an HF AlbertForPreTraining give transformers' outputs (fresh process)."""
    source = os.path.join(FIXTURES, "hf_pretraining")
    result = run_script("export_to_tfhub.py", f"--albert_directory={source}", f"--export_path={tmp_path / 'hub'}",
                        "--seq_length=12")
    assert result.returncode == 0, result.stderr[-3000:]
    expected = golden("hf_pretraining")
    np.savez(tmp_path / "inputs.npz", **{k: expected[k] for k in ("input_ids", "input_mask", "segment_ids")})
    fresh(f"""
        import numpy as np, tensorflow as tf
        x = np.load("inputs.npz")
        inputs = dict(input_word_ids=x["input_ids"], input_mask=x["input_mask"], input_type_ids=x["segment_ids"])
        out = tf.saved_model.load("{tmp_path / 'hub' / 'encoder'}")(inputs, training=False)
        positions = np.tile(np.arange(12, dtype=np.int32), (3, 1))
        mlm = tf.saved_model.load("{tmp_path / 'hub' / 'mlm'}")(dict(inputs, masked_lm_positions=positions),
                                                                 training=False)
        np.savez("outputs.npz", sequence_output=out["sequence_output"], pooled_output=out["pooled_output"],
                 mlm_logits=mlm["mlm_logits"], sop_logits=mlm["sop_logits"])
    """, tmp_path)
    got = np.load(tmp_path / "outputs.npz")
    for key in ("sequence_output", "pooled_output", "mlm_logits", "sop_logits"):
        np.testing.assert_allclose(got[key], expected[key], atol=1e-5, rtol=0, err_msg=key)


@pytest.mark.slow
def test_run_classifier_serves_a_huggingface_classifier(tmp_path):
    """A Hugging Face AlbertForSequenceClassification (written by albert.convert from a random classifier)
    becomes a serving model on raw strings in one command: config and SentencePiece model from the directory."""
    from albert import AlbertClassifier
    from albert.config import AlbertConfig
    from albert.tasks.conversion import convert
    from albert.weights.tf_checkpoints import save_original_checkpoint
    from tests.task_data_helpers import write_task

    release = tmp_path / "release"
    release.mkdir()
    config = AlbertConfig.from_json_file(os.path.join(FIXTURES, "hf_classifier", "config.json"))
    config.to_json_file(str(release / "albert_config.json"))
    shutil.copy(os.path.join(FIXTURES, "hf_classifier", "spiece.model"), release / "30k-clean.model")
    source = AlbertClassifier(config, num_labels=2)
    noise = np.random.default_rng(5)
    for variable in source.weights:  # large enough that every text gets its own output
        variable.assign(noise.normal(1.0 if "gamma" in variable.path else 0.0, 0.3, variable.shape))
    save_original_checkpoint(source, str(release / "model.ckpt-best"))
    convert(str(release), str(tmp_path / "hf"), "huggingface")
    rng = random.Random(4)
    words = "the a of and to in is was for on that with as by at from his her it".split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randrange(2, 9))) for _ in range(24)]
    rows = [[str(i), texts[i], texts[-i - 1], "entailment"] for i in range(12)]
    write_task(tmp_path, "RTE", ["index", "sentence1", "sentence2"], {"test": [r[:3] for r in rows]})
    out, export = tmp_path / "out", tmp_path / "serving"
    result = run_script("run_classifier.py", "--task_name=RTE", f"--data_dir={tmp_path}", f"--output_dir={out}",
                        f"--init_checkpoint={tmp_path / 'hf'}", "--do_predict", "--max_seq_length=16",
                        f"--export_dir={export}")
    assert result.returncode == 0, result.stderr[-3000:]
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    fresh(f"""
        import json, numpy as np, tensorflow as tf, tensorflow_text
        rows = json.load(open("rows.json"))
        serve = tf.saved_model.load("{export}").signatures["serving_default"]
        out = serve(text_a=tf.constant([r[1] for r in rows]), text_b=tf.constant([r[2] for r in rows]))
        np.save("probabilities.npy", out["probabilities"].numpy())
    """, tmp_path)
    served = np.load(tmp_path / "probabilities.npy")
    predicted = np.array([[float(x) for x in line.split("\t")]
                          for line in (out / "test_results.tsv").read_text().splitlines()])
    np.testing.assert_allclose(served, predicted, atol=2e-6)
    model = AlbertClassifier.from_pretrained(str(tmp_path / "hf"), seq_length=16, num_labels=2)
    logits = np.asarray(model.predict(([r[1] for r in rows], [r[2] for r in rows]), verbose=0))
    expected = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.testing.assert_allclose(served, expected, atol=1e-5)
    assert len(set(np.round(expected[:, 0], 5))) >= 8  # the inputs reach the outputs
