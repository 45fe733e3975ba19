"""Hugging Face and keras-hub weights in, Hugging Face out, against the fixtures that transformers 5.23.0 and
keras-hub 0.32.0 made (tools/make_weight_fixtures.py): every output within 1e-5 of theirs, HF -> ours -> HF bit
for bit, and the written config.json equal to transformers' own -- all checked here without PyTorch or
keras-hub."""

import json
import os
import shutil

import numpy as np
import pytest

from albert.ground.errors import AlbertError
from tests.helpers import ROOT, WEIGHT_FIXTURES, golden

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "weights")
HF_CASES = {"hf_model": "AlbertEncoder", "hf_model_e_eq_h": "AlbertEncoder", "hf_pretraining": "AlbertPretrainer",
            "hf_masked_lm": "AlbertPretrainer", "hf_classifier": "AlbertClassifier", "hf_qa": "AlbertSquadV1",
            "hf_choice": "AlbertMultipleChoice", "hf_token": "AlbertTokenClassifier"}
KERAS_HUB_CASES = {"kh_backbone": "AlbertEncoder", "kh_classifier": "AlbertClassifier",
                   "kh_masked_lm": "AlbertPretrainer"}
ARGUMENTS = {"AlbertClassifier": {"num_labels": 3}, "AlbertMultipleChoice": {"num_choices": 2},
             "AlbertTokenClassifier": {"num_labels": 5}}


def outputs_of(model, expected):
    """Our model's outputs under the fixture's names, on the fixture's padded batch."""
    import albert

    features = {k: expected[k] for k in ("input_ids", "input_mask", "segment_ids")}
    flat = {k: v.reshape(-1, v.shape[-1]) for k, v in features.items()}
    encoder = model if isinstance(model, albert.AlbertEncoder) else model.encoder
    hidden = encoder(flat)
    out = {"sequence_output": hidden["sequence_output"], "pooled_output": hidden["pooled_output"]}
    if isinstance(model, albert.AlbertPretrainer):
        positions = np.tile(np.arange(features["input_ids"].shape[1], dtype=np.int32), (len(flat["input_ids"]), 1))
        out.update(model(dict(features, masked_lm_positions=positions)))
    elif isinstance(model, albert.AlbertSquadV1):
        out.update(model(features))
    elif not isinstance(model, albert.AlbertEncoder):
        out["logits"] = model(features)
    return {k: np.asarray(v) for k, v in out.items()}


@pytest.mark.parametrize("case", sorted(HF_CASES) + sorted(KERAS_HUB_CASES))
def test_outputs_equal_the_reference(case):
    import albert

    model_class = getattr(albert, {**HF_CASES, **KERAS_HUB_CASES}[case])
    model = model_class.from_pretrained(os.path.join(FIXTURES, case), seq_length=12,
                                        **ARGUMENTS.get(model_class.__name__, {}))
    expected, ours = golden(case), outputs_of(model, golden(case))
    compared = [k for k in expected if k in ours and k not in ("input_ids", "input_mask", "segment_ids")]
    assert {"sequence_output"} <= set(compared)
    for key in compared:
        np.testing.assert_allclose(ours[key], expected[key], atol=1e-5, rtol=0, err_msg=f"{case} {key}")
    missing = set(model.load_report.missing)
    fresh = {"hf_masked_lm": {"bert/pooler/dense/kernel", "bert/pooler/dense/bias", "cls/seq_relationship/"
                              "output_weights", "cls/seq_relationship/output_bias"},
             "hf_qa": {"bert/pooler/dense/kernel", "bert/pooler/dense/bias"},
             "hf_token": {"bert/pooler/dense/kernel", "bert/pooler/dense/bias"},
             "kh_masked_lm": {"cls/seq_relationship/output_weights", "cls/seq_relationship/output_bias"}}
    assert missing == fresh.get(case, set())


def test_keras_hub_masked_lm_differs_only_by_its_layer_norm_epsilon():
    """keras-hub's MLM head normalises with epsilon 1e-5, the original with 1e-12 (kept here): with that one
    constant changed the largest difference from keras-hub's logits drops from ~5e-6 to float32 rounding."""
    import albert

    case = os.path.join(FIXTURES, "kh_masked_lm")
    model = albert.AlbertPretrainer.from_pretrained(case, seq_length=12)
    expected = golden("kh_masked_lm")["mlm_logits"]
    ours = outputs_of(model, golden("kh_masked_lm"))["mlm_logits"]
    assert 2e-6 < np.abs(ours - expected).max() < 1e-5
    model.mlm_head.layer_norm.epsilon = 1e-5
    assert np.abs(outputs_of(model, golden("kh_masked_lm"))["mlm_logits"] - expected).max() < 1.5e-6


def read_safetensors(path):
    from safetensors.numpy import load_file

    return load_file(path)


def assert_same_directory(written, case):
    expected = read_safetensors(os.path.join(FIXTURES, case, "model.safetensors"))
    actual = read_safetensors(os.path.join(written, "model.safetensors"))
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        assert actual[name].dtype == value.dtype and actual[name].shape == value.shape, name
        assert actual[name].tobytes() == value.tobytes(), name
    with open(os.path.join(FIXTURES, case, "config.json")) as f, open(os.path.join(written, "config.json")) as g:
        assert json.load(g) == json.load(f)
    with open(os.path.join(FIXTURES, case, "spiece.model"), "rb") as f, \
            open(os.path.join(written, "spiece.model"), "rb") as g:
        assert g.read() == f.read()


@pytest.mark.parametrize("case", sorted(HF_CASES))
def test_huggingface_round_trip_is_bit_exact(case, tmp_path):
    """HF -> ours -> HF directly, and HF -> release layout (original TF1 names) -> HF."""
    from albert.tasks.conversion import convert

    source = os.path.join(FIXTURES, case)
    convert(source, str(tmp_path / "direct"), "huggingface")
    assert_same_directory(str(tmp_path / "direct"), case)
    with open(os.path.join(source, "config.json")) as f:
        architecture = json.load(f)["architectures"][0]
    convert(source, str(tmp_path / "release"), "release")
    assert sorted(os.listdir(tmp_path / "release")) == [".albert-output.json", "30k-clean.model", "albert_config.json",
                                                        "model.ckpt-best.data-00000-of-00001", "model.ckpt-best.index"]
    convert(str(tmp_path / "release"), str(tmp_path / "back"), "huggingface", architecture=architecture)
    assert_same_directory(str(tmp_path / "back"), case)


def test_transformers_loaded_what_convert_writes():
    """The fixture script loaded albert.convert's output with transformers: no missing, unexpected or mismatched
    keys, and the reference outputs within 1e-5 (tools/make_weight_fixtures.py records it here)."""
    with open(os.path.join(FIXTURES, "verified.json")) as f:
        verified = json.load(f)
    assert set(verified) == set(HF_CASES) | {"kh_backbone", "kh_classifier"}
    for case, result in verified.items():
        assert result["missing_keys"] == result["unexpected_keys"] == result["mismatched_keys"] == [], case
        assert result["max_abs_diff"] and max(result["max_abs_diff"].values()) < 1e-5, case


def test_keras_hub_to_huggingface_matches_transformers_names(tmp_path):
    """A keras-hub classifier written as Hugging Face: the same names, shapes and config as transformers writes
    for AlbertForSequenceClassification (the hf_classifier fixture), the keras-hub values in them."""
    from albert.tasks.conversion import convert

    convert(os.path.join(FIXTURES, "kh_classifier"), str(tmp_path / "hf"), "huggingface")
    written = read_safetensors(str(tmp_path / "hf" / "model.safetensors"))
    reference = read_safetensors(os.path.join(FIXTURES, "hf_classifier", "model.safetensors"))
    assert {k: v.shape for k, v in written.items()} == {k: v.shape for k, v in reference.items()}
    import h5py

    with h5py.File(os.path.join(FIXTURES, "kh_classifier", "task.weights.h5")) as f:
        kernel = f["layers/dense/vars/0"][()]
    assert written["classifier.weight"].tobytes() == np.ascontiguousarray(kernel.T).tobytes()
    with open(tmp_path / "hf" / "config.json") as f, open(os.path.join(FIXTURES, "hf_classifier", "config.json")) as g:
        assert json.load(f) == json.load(g)


@pytest.mark.parametrize("case", ["hf_classifier", "hf_pretraining", "hf_choice"])
def test_our_checkpoint_to_huggingface_equals_the_fixture(case, tmp_path):
    """The fixture's weights held in one of OUR TF2 checkpoints (as a fine-tuning run writes them), converted to
    Hugging Face: the same bytes and config.json as transformers wrote; the model kind read from the checkpoint."""
    import shutil

    import tensorflow as tf

    import albert
    from albert.tasks.conversion import convert
    from albert.weights.formats import locate_weights

    model_class = getattr(albert, HF_CASES[case])
    model = model_class.from_pretrained(os.path.join(FIXTURES, case), **ARGUMENTS.get(model_class.__name__, {}))
    ours = tmp_path / "ours"
    ours.mkdir()
    model.encoder.config.to_json_file(str(ours / "albert_config.json"))
    shutil.copy(os.path.join(FIXTURES, case, "spiece.model"), ours / "sp.model")
    path = tf.train.Checkpoint(model=model).write(str(ours / "model.ckpt-best"))
    assert locate_weights(path) == ("ours", path)
    convert(str(ours), str(tmp_path / "hf"), "huggingface")
    assert_same_directory(str(tmp_path / "hf"), case)


def test_older_huggingface_files_with_tied_copies_and_buffers(tmp_path):
    """Files of older transformers versions also hold the tied decoder copies and the position_ids buffer: the
    copies are checked equal to what they are tied to and ignored, like the buffer; an untied decoder is refused."""
    import shutil

    from safetensors.numpy import save_file

    import albert
    from albert.ground.errors import AlbertError

    source = tmp_path / "old"
    shutil.copytree(os.path.join(FIXTURES, "hf_pretraining"), source)
    tensors = read_safetensors(str(source / "model.safetensors"))
    tensors["predictions.decoder.weight"] = tensors["albert.embeddings.word_embeddings.weight"].copy()
    tensors["predictions.decoder.bias"] = tensors["predictions.bias"].copy()
    tensors["albert.embeddings.position_ids"] = np.arange(16, dtype=np.int64)[None]
    save_file(tensors, str(source / "model.safetensors"), metadata={"format": "pt"})
    model = albert.AlbertPretrainer(albert.AlbertConfig.from_json_file(str(source / "config.json")))
    report = albert.load_weights(model, str(source / "model.safetensors"))
    assert sorted(report.ignored) == ["albert.embeddings.position_ids", "predictions.decoder.bias",
                                      "predictions.decoder.weight"]
    assert not report.missing
    assert not report.unused
    np.testing.assert_allclose(outputs_of(model, golden("hf_pretraining"))["mlm_logits"],
                               golden("hf_pretraining")["mlm_logits"], atol=1e-5, rtol=0)
    tensors["predictions.decoder.bias"] = tensors["predictions.bias"] + 1.0
    save_file(tensors, str(source / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(AlbertError, match=r"predictions.decoder.bias differs from predictions.bias: an untied MLM "
                                          r"decoder, which ALBERT does not have"):
        albert.load_weights(model, str(source))


def test_a_model_directory_is_described_once_in_one_shape(tmp_path):
    """albert.weights.formats: the lenient description (directory_files) and the checked one (read_model_directory)
    are one ModelDirectory; the checked one adds what only a whole directory can say."""
    from albert.weights.formats import ModelDirectory, directory_files, read_model_directory

    directory = os.path.join(WEIGHT_FIXTURES, "hf_classifier")
    found, read = directory_files(directory), read_model_directory(directory)
    assert isinstance(found, ModelDirectory) and found == read
    assert (read.layout, read.format, read.weights, read.spm_model, read.config) == (
        "huggingface", "huggingface", directory, os.path.join(directory, "spiece.model"),
        os.path.join(directory, "config.json"))
    release = tmp_path / "release"
    shutil.copytree(os.path.join(ROOT, "tests", "fixtures", "e_lt_h_shared"), release)
    shutil.copy(os.path.join(directory, "spiece.model"), release / "30k-clean.model")
    found = directory_files(str(release))
    assert (found.layout, found.format, found.weights) == ("release", None, str(release))
    read = read_model_directory(str(release), checkpoint_name="model.ckpt")
    assert (read.format, read.weights, read.spm_model) == ("original", str(release / "model.ckpt"),
                                                           str(release / "30k-clean.model"))
    assert read_model_directory(str(release)) == read  # a tarball's one named checkpoint, when no model.ckpt-best
    with pytest.raises(AlbertError, match=r"model.ckpt-9.index: checkpoint not found; pass checkpoint_name= "
                                          r"\(found: model.ckpt\)$"):
        read_model_directory(str(release), checkpoint_name="model.ckpt-9")
