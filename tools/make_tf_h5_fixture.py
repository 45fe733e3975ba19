"""tests/fixtures/weights/tf_h5_{classifier,pretraining}: ALBERT repos as transformers 4's TensorFlow classes wrote
them (`save_pretrained` -> config.json + tf_model.h5), with their outputs on a padded batch (golden.npz), for the
tf_model.h5 reader (albert.weights.huggingface). transformers 5 has no TensorFlow classes, so this uses the last
line that has them, in its own environment:

    python -m venv /tmp/tfref && /tmp/tfref/bin/pip install tensorflow==2.21.0 tf-keras==2.21.0 \\
        transformers==4.46.3 h5py
    TF_USE_LEGACY_KERAS=1 /tmp/tfref/bin/python tools/make_tf_h5_fixture.py

Every weight (LayerNorm scales and biases included) is set to random values, so a mis-mapped or untransposed
weight changes the outputs; 4 layers over 2 groups x 2 inner groups, E < H.
"""

import json
import os
import shutil

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from transformers import AlbertConfig, TFAlbertForPreTraining, TFAlbertForSequenceClassification  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WEIGHTS = os.path.join(ROOT, "tests", "fixtures", "weights")
with open(os.path.join(WEIGHTS, "hf_classifier", "config.json")) as f:
    values = {k: v for k, v in json.load(f).items() if k not in ("architectures", "transformers_version", "dtype")}

rng = np.random.default_rng(7)
batch = {"input_ids": rng.integers(5, 64, (3, 12)).astype(np.int32),
         "attention_mask": np.array([[1] * 12, [1] * 9 + [0] * 3, [1] * 5 + [0] * 7], np.int32),
         "token_type_ids": np.array([[0] * 6 + [1] * 6, [0] * 4 + [1] * 5 + [0] * 3, [0] * 3 + [1] * 2 + [0] * 7],
                                    np.int32)}
batch["input_ids"] *= batch["attention_mask"]

for name, model_class in (("tf_h5_classifier", TFAlbertForSequenceClassification),
                          ("tf_h5_pretraining", TFAlbertForPreTraining)):
    # The pretraining heads: sentence order is 2 classes (the classifier fixture's 3 labels are not its).
    config = AlbertConfig(**({k: v for k, v in values.items() if k not in ("id2label", "label2id")}
                             if name == "tf_h5_pretraining" else values))
    model = model_class(config)
    model(batch)  # build
    for variable in model.weights:
        variable.assign(rng.normal(0.0, 0.3, variable.shape).astype(np.float32)
                        + (1.0 if variable.name.split("/")[-1].startswith("gamma") else 0.0))
    if name == "tf_h5_pretraining":  # transformers ties the decoder's bias to the head's bias
        model.predictions.decoder_bias.assign(model.predictions.bias)
    out = model(batch, output_hidden_states=True, training=False)
    golden = {"input_ids": batch["input_ids"], "input_mask": batch["attention_mask"],
              "segment_ids": batch["token_type_ids"], "sequence_output": out.hidden_states[-1].numpy()}
    if name == "tf_h5_classifier":
        golden["logits"] = out.logits.numpy()
    else:
        golden["prediction_logits"] = out.prediction_logits.numpy()
        golden["sop_logits"] = out.sop_logits.numpy()
    target = os.path.join(WEIGHTS, name)
    shutil.rmtree(target, ignore_errors=True)
    model.save_pretrained(target)
    shutil.copyfile(os.path.join(WEIGHTS, "hf_classifier", "spiece.model"), os.path.join(target, "spiece.model"))
    np.savez(os.path.join(target, "golden.npz"), **golden)
    print("wrote", target, sorted(os.listdir(target)), f"transformers {__import__('transformers').__version__}")
