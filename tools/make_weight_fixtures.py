"""Make the weight-format fixtures of tests/test_weights_*.py with the reference implementations (run once).

transformers 5.23.0 (PyTorch 2.13.0) and keras-hub 0.32.0 build tiny ALBERTs whose every parameter -- biases and
LayerNorm parameters included -- holds random non-trivial values, save them in their own formats and run them on
a padded batch. Written under tests/fixtures/weights/:

  hf_<name>/   config.json, model.safetensors, spiece.model (transformers' save_pretrained) + golden.npz
  kh_<name>/   a keras-hub preset (save_to_preset) + golden.npz
  verified.json  what transformers says of the directories albert.convert writes: for each fixture converted
               (HF -> release -> HF, and keras-hub -> HF), missing / unexpected keys and the largest difference
               of its outputs from the fixture's

Usage (in a venv of tools/requirements-reference.txt, from the repository root):
    python -m venv .venv-ref && .venv-ref/bin/pip install -r tools/requirements-reference.txt
    PYTHONPATH=. .venv-ref/bin/python tools/make_weight_fixtures.py [--only hf_token ...]
(`--only`: those Hugging Face fixtures alone, the others and their verified.json entries kept as they are.)
"""

import json
import os
import random
import shutil
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "weights")
VOCAB = 64
SHAPE = dict(embedding_size=8, hidden_size=16, num_hidden_layers=4, num_hidden_groups=2, inner_group_num=2,
             num_attention_heads=4, intermediate_size=24, max_position_embeddings=16)
HF_CASES = {  # directory: (transformers class, config changes)
    "hf_model": ("AlbertModel", {}),
    "hf_model_e_eq_h": ("AlbertModel", dict(embedding_size=16, num_hidden_groups=1, inner_group_num=1)),
    "hf_pretraining": ("AlbertForPreTraining", {}),
    "hf_masked_lm": ("AlbertForMaskedLM", {}),
    "hf_classifier": ("AlbertForSequenceClassification", dict(num_labels=3)),
    "hf_qa": ("AlbertForQuestionAnswering", {}),
    "hf_choice": ("AlbertForMultipleChoice", {}),
    "hf_token": ("AlbertForTokenClassification", dict(num_labels=5)),
}
BATCH, SEQ, CHOICES = 3, 12, 2
LENGTHS = [12, 9, 5]


def sentencepiece(directory):
    """A 64-piece ALBERT-style SentencePiece model (identity normalisation keeps the file small)."""
    from albert.text.tokenization import train_sentencepiece

    rng = random.Random(0)
    words = ("the a of and to in is was for on that with as by at from his her it an are were which this be or "
             "has had not but they their one two three four five six seven eight nine ten").split()
    text = os.path.join(directory, "text.txt")
    with open(text, "w") as f:
        f.write("\n".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(3000)) + "\n")
    return train_sentencepiece([text], os.path.join(directory, "sp"), vocab_size=VOCAB,
                               normalization_rule_name="identity")


def batch(rng, shape=(BATCH, SEQ)):
    input_ids = rng.integers(5, VOCAB, size=shape).astype(np.int32)
    input_mask = np.zeros(shape, np.int32)
    segment_ids = np.zeros(shape, np.int32)
    for b, length in enumerate(LENGTHS):
        input_mask[b, ..., :length] = 1
        segment_ids[b, ..., length // 2:length] = 1
        input_ids[b, ..., length:] = 0
    return {"input_ids": input_ids, "input_mask": input_mask, "segment_ids": segment_ids}


def randomize(named, generator):
    """gamma ~ 1 + 0.2 N, biases / beta ~ 0.1 N, everything else ~ 0.3 N."""
    for name, param, assign in named:
        noise = generator.standard_normal(param.shape).astype(np.float32)
        if name.endswith(("LayerNorm.weight", "layer_norm.weight", "gamma")):
            assign(1.0 + 0.2 * noise)
        elif name.endswith(("bias", "beta")):
            assign(0.1 * noise)
        else:
            assign(0.3 * noise)


def hf_model(architecture, changes, seed):
    shape = dict(SHAPE, **changes)
    labels = shape.pop("num_labels", 2)
    config = transformers.AlbertConfig(vocab_size=VOCAB, hidden_act="gelu_new", hidden_dropout_prob=0.0,
                                       attention_probs_dropout_prob=0.0,
                                       type_vocab_size=2, layer_norm_eps=1e-12, num_labels=labels, **shape)
    config._attn_implementation = "eager"
    model = getattr(transformers, architecture)(config).eval()
    generator = np.random.default_rng(seed)
    with torch.no_grad():
        randomize([(n, p, lambda v, p=p: p.copy_(torch.from_numpy(v))) for n, p in model.named_parameters()],
                  generator)
        if shape["embedding_size"] == shape["hidden_size"]:  # the original has no mapping when E == H
            base = model if architecture == "AlbertModel" else model.albert
            base.encoder.embedding_hidden_mapping_in.weight.copy_(torch.eye(shape["hidden_size"]))
            base.encoder.embedding_hidden_mapping_in.bias.zero_()
    return model


def hf_outputs(model, architecture, features):
    def t(x):
        return torch.tensor(x, dtype=torch.long)

    kwargs = dict(input_ids=t(features["input_ids"]), attention_mask=t(features["input_mask"]),
                  token_type_ids=t(features["segment_ids"]))
    with torch.no_grad():
        out = model(**kwargs)
        base = model if architecture == "AlbertModel" else model.albert
        if architecture == "AlbertForMultipleChoice":
            kwargs = {k: v.reshape(-1, SEQ) for k, v in kwargs.items()}
        hidden = base(**kwargs)
    result = {"sequence_output": hidden.last_hidden_state.numpy()}
    if hidden.pooler_output is not None:
        result["pooled_output"] = hidden.pooler_output.numpy()
    for key, name in (("prediction_logits", "mlm_logits"), ("sop_logits", "sop_logits"), ("logits", "logits"),
                      ("start_logits", "start_logits"), ("end_logits", "end_logits")):
        if getattr(out, key, None) is not None:
            result[name] = getattr(out, key).numpy()
    if architecture == "AlbertForMaskedLM":
        result["mlm_logits"] = result.pop("logits")
    return result


def keras_hub_presets(spm, seed):
    import keras
    import keras_hub

    keras.utils.set_random_seed(seed)
    tokenizer = keras_hub.models.AlbertTokenizer(proto=spm)
    backbone = keras_hub.models.AlbertBackbone(
        vocabulary_size=VOCAB, num_layers=SHAPE["num_hidden_layers"], num_heads=SHAPE["num_attention_heads"],
        embedding_dim=SHAPE["embedding_size"], hidden_dim=SHAPE["hidden_size"],
        intermediate_dim=SHAPE["intermediate_size"], num_groups=SHAPE["num_hidden_groups"],
        num_inner_repetitions=SHAPE["inner_group_num"], max_sequence_length=SHAPE["max_position_embeddings"])
    classifier = keras_hub.models.AlbertTextClassifier(backbone, num_classes=3, preprocessor=None)
    masked_lm = keras_hub.models.AlbertMaskedLM(backbone, preprocessor=None)
    generator = np.random.default_rng(seed)
    seen = set()
    for model in (backbone, classifier, masked_lm):
        weights = [w for w in model.weights if id(w) not in seen]
        seen.update(id(w) for w in weights)
        randomize([(w.path, w, w.assign) for w in weights], generator)
    rng = np.random.default_rng(seed + 1)
    features = batch(rng)
    inputs = {"token_ids": features["input_ids"], "segment_ids": features["segment_ids"],
              "padding_mask": features["input_mask"]}
    hidden = backbone(inputs)
    positions = np.tile(np.arange(SEQ, dtype=np.int32), (BATCH, 1))
    results = {
        "kh_backbone": (backbone, {}),
        "kh_classifier": (classifier, {"logits": classifier(inputs)}),
        "kh_masked_lm": (masked_lm, {"mlm_logits": masked_lm(dict(inputs, mask_positions=positions))}),
    }
    presets = {}
    for name, (model, outputs) in results.items():
        directory = os.path.join(OUT, name)
        shutil.rmtree(directory, ignore_errors=True)
        model.save_to_preset(directory)
        tokenizer.save_to_preset(directory)
        arrays = {k: np.asarray(v) for k, v in dict(outputs, sequence_output=hidden["sequence_output"],
                                                     pooled_output=hidden["pooled_output"]).items()}
        np.savez(os.path.join(directory, "golden.npz"), **features, **arrays)
        presets[name] = directory
    return presets


def verify(directory, case_architecture):
    """Convert a fixture with albert.convert and load the result with transformers."""
    from albert.tasks.conversion import convert

    work = tempfile.mkdtemp()
    if os.path.basename(directory).startswith("hf_"):
        convert(directory, os.path.join(work, "release"), "release", architecture=case_architecture)
        convert(os.path.join(work, "release"), os.path.join(work, "hf"), "huggingface",
                architecture=case_architecture)
    else:
        convert(directory, os.path.join(work, "hf"), "huggingface")
    config = json.load(open(os.path.join(work, "hf", "config.json")))
    architecture = config["architectures"][0]
    model, info = getattr(transformers, architecture).from_pretrained(os.path.join(work, "hf"),
                                                                      output_loading_info=True)
    model.eval()
    golden = dict(np.load(os.path.join(directory, "golden.npz")))
    features = {k: golden[k] for k in ("input_ids", "input_mask", "segment_ids")}
    outputs = hf_outputs(model, architecture, features)
    diffs = {k: float(np.abs(outputs[k] - golden[k]).max()) for k in outputs if k in golden}
    shutil.rmtree(work)
    return {"architecture": architecture, "missing_keys": sorted(info["missing_keys"]),
            "unexpected_keys": sorted(info["unexpected_keys"]),
            "mismatched_keys": [str(m) for m in info.get("mismatched_keys", [])], "max_abs_diff": diffs}


def main(only=None):
    os.makedirs(OUT, exist_ok=True)
    work = tempfile.mkdtemp()
    spm = sentencepiece(work)
    verified = {}
    if only:
        with open(os.path.join(OUT, "verified.json")) as f:
            verified = json.load(f)
    for index, (name, (architecture, changes)) in enumerate(HF_CASES.items()):
        if only and name not in only:
            continue
        model = hf_model(architecture, changes, seed=300 + index)
        rng = np.random.default_rng(400 + index)
        shape = (BATCH, CHOICES, SEQ) if architecture == "AlbertForMultipleChoice" else (BATCH, SEQ)
        features = batch(rng, shape)
        directory = os.path.join(OUT, name)
        shutil.rmtree(directory, ignore_errors=True)
        model.save_pretrained(directory)
        shutil.copyfile(spm, os.path.join(directory, "spiece.model"))
        np.savez(os.path.join(directory, "golden.npz"), **features, **hf_outputs(model, architecture, features))
        verified[name] = verify(directory, architecture)
        print(name, verified[name])
    for name, directory in ({} if only else keras_hub_presets(spm, seed=500)).items():
        if name != "kh_masked_lm":  # transformers' MLM head normalises with 1e-12, keras-hub's with 1e-5
            verified[name] = verify(directory, None)
            print(name, verified[name])
    with open(os.path.join(OUT, "verified.json"), "w") as f:
        f.write(json.dumps(verified, indent=2, sort_keys=True) + "\n")
    shutil.rmtree(work)


if __name__ == "__main__":
    main(sys.argv[sys.argv.index("--only") + 1:] if "--only" in sys.argv else None)
