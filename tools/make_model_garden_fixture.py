"""Make tests/fixtures/model_garden_gelu/ with TensorFlow Model Garden itself (run once): a tiny ALBERT encoder with
Model Garden's DEFAULT activation (its gelu, `official.modeling.activations.gelu`, the tanh form, which Keras
serializes as the registered function "Text>gelu"), exported by Model Garden's own hub exporter
(`official.nlp.tools.export_tfhub_lib.export_model`, `model_with_mlm`, as `export_tfhub --export_type=model_with_mlm`
does), and the SavedModel's own outputs on a fixed padded batch.

Every variable holds random values at larger-than-initialisation scales (LayerNorm gammas near 1 but not 1, betas
and biases non-zero), so a mis-mapped weight or the wrong gelu changes the outputs well past the tests' 1e-5.
E (16) != H (32), so the embedding projection is there. Written:

  encoder/     the exported SavedModel (keras_metadata.pb, saved_model.pb, variables/, assets/spm.model: a
               120-piece ALBERT-style SentencePiece model of tools/synthetic_corpus.py's text, as the released
               encoders carry theirs)
  io.npz       input_word_ids, input_mask, input_type_ids, masked_lm_positions and the SavedModel's
               sequence_output, pooled_output, mlm_logits
  made.json    what made it (versions, config, the activation as keras_metadata.pb holds it)

Usage (tf-models-official 2.20 pins TensorFlow 2.20: a venv of its own, from the repository root):
    python -m venv .venv-mg && .venv-mg/bin/pip install -r tools/requirements-model-garden.txt
    .venv-mg/bin/python tools/make_model_garden_fixture.py
"""

import json
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf
import tf_keras
from official.modeling import tf_utils
from official.nlp.configs import encoders
from official.nlp.modeling import models
from official.nlp.tools import export_tfhub_lib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, os.pardir, "tests", "fixtures", "model_garden_gelu")
ALBERT = dict(vocab_size=120, embedding_width=16, hidden_size=32, num_layers=3, num_attention_heads=4,
              intermediate_size=40, dropout_rate=0.0, attention_dropout_rate=0.0, max_position_embeddings=32,
              type_vocab_size=2, initializer_range=0.02)  # hidden_activation left at Model Garden's default


def fixed_batch(rng):
    """B=3 rows of T=20: lengths 20, 13, 7; padding ids 0; segment 1 on the second half of each row's tokens."""
    lengths, seq = np.array([20, 13, 7]), 20
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int32)
    ids = rng.integers(5, ALBERT["vocab_size"], size=(3, seq)).astype(np.int32) * mask
    types = ((np.arange(seq)[None, :] >= lengths[:, None] // 2) & (mask == 1)).astype(np.int32)
    positions = np.array([[3, 11, 13, 14], [1, 7, 11, 12], [1, 3, 4, 6]], np.int32)
    return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types, "masked_lm_positions": positions}


def sentencepiece_model(directory) -> str:
    """An ALBERT-style SentencePiece model (the original's spm_train settings: unigram, <pad>=0 <unk>=1, [CLS]
    [SEP] [MASK] at 2-4) of vocab_size pieces, trained on lowercased synthetic English-like text."""
    import sentencepiece as spm

    sys.path.insert(0, HERE)
    import synthetic_corpus

    text = os.path.join(directory, "corpus.txt")
    with open(text, "w", encoding="utf-8") as f:
        f.write("".join(s.lower() + "\n" for d in synthetic_corpus.documents(200, seed=3, vocabulary=300) for s in d))
    spm.SentencePieceTrainer.Train(input=text, model_prefix=os.path.join(directory, "spm"),
                                   vocab_size=ALBERT["vocab_size"], pad_id=0, unk_id=1, eos_id=-1, bos_id=-1,
                                   control_symbols=["[CLS]", "[SEP]", "[MASK]"], model_type="unigram",
                                   minloglevel=2)
    return os.path.join(directory, "spm.model")


def randomize(model, rng):
    for variable in model.trainable_variables + model.non_trainable_variables:
        shape = variable.shape.as_list()
        if "gamma" in variable.name:
            value = 1.0 + 0.2 * rng.standard_normal(shape)
        else:
            value = 0.3 * rng.standard_normal(shape)
        variable.assign(value.astype(np.float32))


def main():
    rng = np.random.default_rng(20261201)
    config = encoders.EncoderConfig(type="albert", albert=encoders.AlbertEncoderConfig(**ALBERT))
    assert config.get().hidden_activation == "gelu", "Model Garden's default activation changed"
    encoder = encoders.build_encoder(config)
    pretrainer = models.BertPretrainerV2(encoder_network=encoder,
                                         mlm_activation=tf_utils.get_activation(config.get().hidden_activation))
    batch = fixed_batch(rng)
    pretrainer(batch)  # builds every variable
    randomize(pretrainer, rng)
    with tempfile.TemporaryDirectory() as scratch:
        prefix = tf.train.Checkpoint(**pretrainer.checkpoint_items).save(os.path.join(scratch, "ckpt"))
        spm_model = sentencepiece_model(scratch)
        shutil.rmtree(OUT, ignore_errors=True)
        os.makedirs(OUT)
        export_tfhub_lib.export_model(os.path.join(OUT, "encoder"), encoder_config=config,
                                      model_checkpoint_path=prefix, with_mlm=True, sp_model_file=spm_model)
    loaded = tf.saved_model.load(os.path.join(OUT, "encoder"))
    inputs = {k: tf.constant(batch[k]) for k in ("input_word_ids", "input_mask", "input_type_ids")}
    outputs = loaded(inputs)
    mlm = loaded.mlm(dict(inputs, masked_lm_positions=tf.constant(batch["masked_lm_positions"])))
    np.savez(os.path.join(OUT, "io.npz"), **batch, sequence_output=outputs["sequence_output"].numpy(),
             pooled_output=outputs["pooled_output"].numpy(), mlm_logits=mlm["mlm_logits"].numpy())
    serialized = tf_keras.activations.serialize(encoder.get_config()["activation"]) \
        if callable(encoder.get_config()["activation"]) else encoder.get_config()["activation"]
    import official
    with open(os.path.join(OUT, "made.json"), "w") as f:
        json.dump({"by": "tools/make_model_garden_fixture.py", "tensorflow": tf.__version__,
                   "tf_models_official": getattr(official, "__version__", "2.20.0"), "python": sys.version.split()[0],
                   "albert_encoder_config": ALBERT, "activation_in_config": serialized}, f, indent=1)
        f.write("\n")
    print(f"wrote {os.path.normpath(OUT)}: activation {serialized}")


if __name__ == "__main__":
    main()
