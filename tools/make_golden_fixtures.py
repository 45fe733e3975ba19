"""Make the golden parity fixtures of tests/test_parity.py with an independent implementation (run once).

The reference is Hugging Face's PyTorch `AlbertForPreTraining` (transformers 5.23.0, torch 2.13.0). For each case
this script gives every parameter -- biases and LayerNorm parameters included -- random non-trivial values, runs
the PyTorch model on a padded batch, and writes:

  tests/fixtures/<case>/albert_config.json     the config, in the original's format
  tests/fixtures/<case>/model.ckpt.*           the weights as a TF1 name-based checkpoint under the ORIGINAL names,
                                               written by TF1's own Saver in a graph (not by albert's code)
  tests/fixtures/<case>/golden.npz             inputs and the reference outputs

Usage (in a venv of tools/requirements-reference.txt):
    python -m venv .venv-ref && .venv-ref/bin/pip install -r tools/requirements-reference.txt
    .venv-ref/bin/python tools/make_golden_fixtures.py
"""

import json
import os
import shutil

import numpy as np
import tensorflow as tf
import torch
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures")

CASES = {
    # E < H, one group shared by every layer (the released models' shape).
    "e_lt_h_shared": dict(vocab_size=40, embedding_size=8, hidden_size=16, num_hidden_layers=3,
                          num_hidden_groups=1, inner_group_num=1, num_attention_heads=4, intermediate_size=24,
                          hidden_act="gelu", max_position_embeddings=16),
    # 6 layers over 3 groups, 2 inner groups each (layer l uses group int(l / 6 * 3)).
    "groups3_inner2": dict(vocab_size=40, embedding_size=8, hidden_size=16, num_hidden_layers=6,
                           num_hidden_groups=3, inner_group_num=2, num_attention_heads=2, intermediate_size=20,
                           hidden_act="gelu", max_position_embeddings=16),
    # E == H: the original has no projection; the PyTorch model always has one, set to the identity here.
    "e_eq_h_relu": dict(vocab_size=40, embedding_size=16, hidden_size=16, num_hidden_layers=2,
                        num_hidden_groups=1, inner_group_num=1, num_attention_heads=4, intermediate_size=24,
                        hidden_act="relu", max_position_embeddings=16),
}
BATCH, SEQ, PREDICTIONS = 3, 12, 4
LENGTHS = [12, 9, 5]


def original_config(case):
    config = dict(case, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, type_vocab_size=2,
                  initializer_range=0.02, down_scale_factor=1)
    return config


def torch_model(config, seed):
    hf_config = transformers.AlbertConfig(
        vocab_size=config["vocab_size"], embedding_size=config["embedding_size"],
        hidden_size=config["hidden_size"], num_hidden_layers=config["num_hidden_layers"],
        num_hidden_groups=config["num_hidden_groups"], inner_group_num=config["inner_group_num"],
        num_attention_heads=config["num_attention_heads"], intermediate_size=config["intermediate_size"],
        hidden_act={"gelu": "gelu_new", "relu": "relu"}[config["hidden_act"]],
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, classifier_dropout_prob=0.0,
        max_position_embeddings=config["max_position_embeddings"], type_vocab_size=2, layer_norm_eps=1e-12,
        pad_token_id=0)
    hf_config._attn_implementation = "eager"
    model = transformers.AlbertForPreTraining(hf_config).eval()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            noise = torch.randn(param.shape, generator=generator)
            if name.endswith("LayerNorm.weight") or name.endswith("layer_norm.weight"):
                param.copy_(1.0 + 0.2 * noise)  # LayerNorm gamma
            elif name.endswith("bias"):
                param.copy_(0.1 * noise)
            else:
                param.copy_(0.3 * noise)
        if config["embedding_size"] == config["hidden_size"]:
            mapping = model.albert.encoder.embedding_hidden_mapping_in
            mapping.weight.copy_(torch.eye(config["hidden_size"]))
            mapping.bias.zero_()
    # The MLM decoder must be tied to the word embeddings (and its bias to predictions.bias), as in the original.
    assert model.predictions.decoder.weight.data_ptr() == model.albert.embeddings.word_embeddings.weight.data_ptr()
    assert model.predictions.decoder.bias.data_ptr() == model.predictions.bias.data_ptr()
    return model


def original_names(model, config):
    """{original TF1 name: numpy value}, written out by hand from the PyTorch module tree."""
    p = {name: t.detach().numpy().astype(np.float32) for name, t in model.state_dict().items()}
    out = {
        "bert/embeddings/word_embeddings": p["albert.embeddings.word_embeddings.weight"],
        "bert/embeddings/token_type_embeddings": p["albert.embeddings.token_type_embeddings.weight"],
        "bert/embeddings/position_embeddings": p["albert.embeddings.position_embeddings.weight"],
        "bert/embeddings/LayerNorm/gamma": p["albert.embeddings.LayerNorm.weight"],
        "bert/embeddings/LayerNorm/beta": p["albert.embeddings.LayerNorm.bias"],
        "bert/pooler/dense/kernel": p["albert.pooler.weight"].T,
        "bert/pooler/dense/bias": p["albert.pooler.bias"],
        "cls/predictions/transform/dense/kernel": p["predictions.dense.weight"].T,
        "cls/predictions/transform/dense/bias": p["predictions.dense.bias"],
        "cls/predictions/transform/LayerNorm/gamma": p["predictions.LayerNorm.weight"],
        "cls/predictions/transform/LayerNorm/beta": p["predictions.LayerNorm.bias"],
        "cls/predictions/output_bias": p["predictions.bias"],
        "cls/seq_relationship/output_weights": p["sop_classifier.classifier.weight"],  # [2, H] as the original
        "cls/seq_relationship/output_bias": p["sop_classifier.classifier.bias"],
    }
    if config["embedding_size"] != config["hidden_size"]:
        out["bert/encoder/embedding_hidden_mapping_in/kernel"] = p["albert.encoder.embedding_hidden_mapping_in.weight"].T
        out["bert/encoder/embedding_hidden_mapping_in/bias"] = p["albert.encoder.embedding_hidden_mapping_in.bias"]
    linear = {
        "attention_1/self/query": "attention.query", "attention_1/self/key": "attention.key",
        "attention_1/self/value": "attention.value", "attention_1/output/dense": "attention.dense",
        "ffn_1/intermediate/dense": "ffn", "ffn_1/intermediate/output/dense": "ffn_output",
    }
    norms = {"LayerNorm": "attention.LayerNorm", "LayerNorm_1": "full_layer_layer_norm"}
    for g in range(config["num_hidden_groups"]):
        for k in range(config["inner_group_num"]):
            src = f"albert.encoder.albert_layer_groups.{g}.albert_layers.{k}."
            dst = f"bert/encoder/transformer/group_{g}/inner_group_{k}/"
            for tf_name, pt_name in linear.items():
                out[dst + tf_name + "/kernel"] = p[src + pt_name + ".weight"].T
                out[dst + tf_name + "/bias"] = p[src + pt_name + ".bias"]
            for tf_name, pt_name in norms.items():
                out[dst + tf_name + "/gamma"] = p[src + pt_name + ".weight"]
                out[dst + tf_name + "/beta"] = p[src + pt_name + ".bias"]
    return out


def write_tf1_checkpoint(values, prefix):
    with tf.Graph().as_default():
        variables = {name: tf.compat.v1.Variable(value, name=name) for name, value in values.items()}
        variables["global_step"] = tf.compat.v1.Variable(np.int64(1234), name="global_step")
        # An optimizer slot, as in checkpoints written during training: the loader must ignore it.
        slot = "bert/pooler/dense/kernel/adam_m"
        variables[slot] = tf.compat.v1.Variable(np.zeros_like(values["bert/pooler/dense/kernel"]), name=slot)
        saver = tf.compat.v1.train.Saver(var_list=variables)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, prefix, write_meta_graph=False, write_state=False)


def main():
    for index, (case_name, case) in enumerate(CASES.items()):
        config = original_config(case)
        model = torch_model(config, seed=100 + index)
        rng = np.random.default_rng(200 + index)
        input_ids = rng.integers(5, config["vocab_size"], size=(BATCH, SEQ)).astype(np.int32)
        input_mask = np.zeros((BATCH, SEQ), np.int32)
        segment_ids = np.zeros((BATCH, SEQ), np.int32)
        for b, length in enumerate(LENGTHS):
            input_mask[b, :length] = 1
            segment_ids[b, length // 2:length] = 1
            input_ids[b, length:] = 0
        positions = np.stack([np.sort(rng.choice(np.arange(1, length), PREDICTIONS, replace=False))
                              for length in LENGTHS]).astype(np.int32)
        with torch.no_grad():
            out = model(input_ids=torch.tensor(input_ids, dtype=torch.long),
                        attention_mask=torch.tensor(input_mask, dtype=torch.long),
                        token_type_ids=torch.tensor(segment_ids, dtype=torch.long))
            base = model.albert(input_ids=torch.tensor(input_ids, dtype=torch.long),
                                attention_mask=torch.tensor(input_mask, dtype=torch.long),
                                token_type_ids=torch.tensor(segment_ids, dtype=torch.long))
        logits = out.prediction_logits.numpy()
        mlm_logits = np.take_along_axis(logits, positions[:, :, None].astype(np.int64), axis=1)
        directory = os.path.join(OUT, case_name)
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        with open(os.path.join(directory, "albert_config.json"), "w") as f:
            f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
        write_tf1_checkpoint(original_names(model, config), os.path.join(directory, "model.ckpt"))
        np.savez(os.path.join(directory, "golden.npz"), input_ids=input_ids, input_mask=input_mask,
                 segment_ids=segment_ids, masked_lm_positions=positions,
                 sequence_output=base.last_hidden_state.numpy(), pooled_output=base.pooler_output.numpy(),
                 mlm_logits=mlm_logits, sop_logits=out.sop_logits.numpy())
        print(case_name, "->", directory, "| |sequence_output| max", np.abs(base.last_hidden_state.numpy()).max())


if __name__ == "__main__":
    main()
