"""Original-name checkpoint I/O: round trips for every model, the load report, and the errors."""

import os

import numpy as np
import pytest
import tensorflow as tf

from albert import (AlbertClassifier, AlbertEncoder, AlbertError, AlbertMultipleChoice, AlbertPretrainer,
                    AlbertSquadV1, AlbertSquadV2, load_original_checkpoint, original_variable_map,
                    save_original_checkpoint)
from tests.helpers import FIXTURES, padded_batch, tiny_config

MODELS = {
    "pretrainer": (AlbertPretrainer, {}, ("mlm_logits", "sop_logits")),
    "classifier": (AlbertClassifier, {"num_labels": 3}, ("logits",)),
    "regression": (AlbertClassifier, {"num_labels": 1}, ("logits",)),
    "squad_v1": (AlbertSquadV1, {}, ("start_logits", "end_logits")),
    "squad_v2": (AlbertSquadV2, {"start_n_top": 2, "end_n_top": 3}, ("start_top_log_probs", "end_top_log_probs",
                                                                       "cls_logits")),
    "choice": (AlbertMultipleChoice, {"num_choices": 4}, ("logits",)),
}


def model_inputs(kind, config):
    batch = padded_batch(config, batch=4, seq=10)
    if kind == "squad_v2":
        p_mask = 1 - batch["input_mask"]
        p_mask[:, :3] = 1
        batch["p_mask"] = p_mask
    if kind == "choice":
        batch = {k: batch[k].reshape(1, 4, -1) for k in ("input_ids", "input_mask", "segment_ids")}
    return batch


@pytest.mark.parametrize("kind", sorted(MODELS))
@pytest.mark.parametrize("sharing", ["all", "attention", "none"])
def test_save_load_round_trip_gives_identical_outputs(tmp_path, kind, sharing):
    cls, kwargs, keys = MODELS[kind]
    config = tiny_config(num_hidden_layers=4, num_hidden_groups=2, inner_group_num=2, sharing=sharing)
    source, target = cls(config, **kwargs), cls(config, **kwargs)
    inputs = model_inputs(kind, config)

    def outputs(model):  # the task output, and the encoder's sequence output
        out = model(inputs)
        out = dict(out) if isinstance(out, dict) else {"logits": out}
        flat = {k: np.reshape(v, (-1, v.shape[-1])) for k, v in inputs.items()
                if k in ("input_ids", "input_mask", "segment_ids")}
        out["sequence_output"] = model.encoder(flat)["sequence_output"]
        return out

    expected = outputs(source)
    before = outputs(target)
    path = save_original_checkpoint(source, os.path.join(tmp_path, "sub", "model.ckpt-7"), global_step=7)
    assert sorted(os.listdir(os.path.dirname(path))) == ["model.ckpt-7.data-00000-of-00001", "model.ckpt-7.index"]
    report = load_original_checkpoint(target, path)
    assert report.missing == []
    assert report.unused == []
    assert report.ignored == ["global_step"]
    assert len(report.loaded) == len(target.weights)
    after = outputs(target)
    for key in keys + ("sequence_output",):
        assert np.abs(np.asarray(before[key]) - np.asarray(expected[key])).max() > 1e-4, key
        np.testing.assert_array_equal(np.asarray(after[key]), np.asarray(expected[key]), err_msg=key)


def test_saved_names_are_the_original_names(tmp_path):
    config = tiny_config(num_hidden_layers=6, num_hidden_groups=3, inner_group_num=2)
    model = AlbertPretrainer(config)
    path = save_original_checkpoint(model, os.path.join(tmp_path, "model.ckpt"), global_step=5)
    shapes = tf.train.load_checkpoint(path).get_variable_to_shape_map()
    expected = {"bert/embeddings/word_embeddings": [40, 8],
                "bert/encoder/embedding_hidden_mapping_in/kernel": [8, 16],
                "bert/encoder/transformer/group_2/inner_group_1/attention_1/self/query/kernel": [16, 16],
                "bert/encoder/transformer/group_0/inner_group_0/ffn_1/intermediate/output/dense/kernel": [24, 16],
                "bert/encoder/transformer/group_1/inner_group_1/LayerNorm_1/gamma": [16],
                "cls/predictions/output_bias": [40], "cls/predictions/transform/dense/kernel": [16, 8],
                "cls/seq_relationship/output_weights": [2, 16], "global_step": []}
    for name, shape in expected.items():
        assert shapes[name] == shape, name
    # 5 embedding vars + 2 projection + 3 groups x 2 inner x 16 block vars + 2 pooler + 5 MLM + 2 SOP + step.
    assert len(shapes) == 5 + 2 + 3 * 2 * 16 + 2 + 5 + 2 + 1
    assert tf.train.load_checkpoint(path).get_tensor("global_step") == 5


def test_heads_missing_from_a_pretraining_checkpoint_are_reported_not_fatal(tmp_path):
    config = tiny_config()
    path = save_original_checkpoint(AlbertPretrainer(config), os.path.join(tmp_path, "model.ckpt"))
    report = load_original_checkpoint(AlbertClassifier(config, num_labels=2), path)
    assert report.missing == ["output_bias", "output_weights"]
    assert report.unused == sorted(n for n in original_variable_map(AlbertPretrainer(config)) if n.startswith("cls/"))
    assert "missing 2" in str(report)
    assert "unused 7" in str(report)


def test_optimizer_slots_are_ignored_and_named_in_the_report():
    report = load_original_checkpoint(AlbertEncoder(tiny_config(**_fixture_shape())),
                                      os.path.join(FIXTURES, "e_lt_h_shared", "model.ckpt"))
    assert report.ignored == ["bert/pooler/dense/kernel/adam_m", "global_step"]
    assert "ignored: bert/pooler/dense/kernel/adam_m, global_step" in str(report)


def _fixture_shape():
    return dict(vocab_size=40, embedding_size=8, hidden_size=16, num_hidden_layers=3, num_attention_heads=4,
                intermediate_size=24, max_position_embeddings=16)


def test_directory_resolves_to_latest_checkpoint(tmp_path):
    config = tiny_config()
    save_original_checkpoint(AlbertEncoder(config), os.path.join(tmp_path, "model.ckpt-3"))
    with pytest.raises(AlbertError, match="directory holds no checkpoint"):
        load_original_checkpoint(AlbertEncoder(config), str(tmp_path))
    tf.compat.v1.train.update_checkpoint_state(str(tmp_path), os.path.join(tmp_path, "model.ckpt-3"))
    assert load_original_checkpoint(AlbertEncoder(config), str(tmp_path)).path.endswith("model.ckpt-3")


SHAPE_ERRORS = [
    ({"vocab_size": 41}, "bert/embeddings/word_embeddings has shape [40, 8] in the checkpoint but [41, 8] in the "
                         "model: the checkpoint was made with another vocab_size / embedding_size"),
    ({"intermediate_size": 30}, "ffn_1/intermediate/dense/bias has shape [24] in the checkpoint but [30] in the "
                                "model: the checkpoint was made with another intermediate_size / hidden_size"),
    ({"max_position_embeddings": 32}, "bert/embeddings/position_embeddings has shape [16, 8] in the checkpoint but "
                                      "[32, 8] in the model: the checkpoint was made with another "
                                      "max_position_embeddings / embedding_size"),
]


@pytest.mark.parametrize("change, message", SHAPE_ERRORS)
def test_wrong_shape_names_variable_shapes_and_cause(tmp_path, change, message):
    path = save_original_checkpoint(AlbertEncoder(tiny_config()), os.path.join(tmp_path, "model.ckpt"))
    with pytest.raises(AlbertError) as e:
        load_original_checkpoint(AlbertEncoder(tiny_config(**change)), path)
    assert str(e.value).startswith(f"{path}: variable ")
    assert message in str(e.value)
    assert str(e.value).endswith("use the albert_config.json that came with the checkpoint")


def test_checkpoint_of_another_grouping_is_an_error(tmp_path):
    path = save_original_checkpoint(AlbertEncoder(tiny_config(num_hidden_groups=3)),
                                    os.path.join(tmp_path, "model.ckpt"))
    with pytest.raises(AlbertError, match=r"the checkpoint has bert/encoder/transformer/group_1/inner_group_0/\S+ "
                                          r"but the model has no block group_1/inner_group_0: the checkpoint was made "
                                          r"with another num_hidden_groups"):
        load_original_checkpoint(AlbertEncoder(tiny_config()), path)
    path = save_original_checkpoint(AlbertEncoder(tiny_config()), os.path.join(tmp_path, "one.ckpt"))
    with pytest.raises(AlbertError, match=r"the model needs bert/encoder/transformer/group_1/inner_group_0/\S+ but the "
                                          r"checkpoint lacks it: the checkpoint's blocks are group_0/inner_group_0"):
        load_original_checkpoint(AlbertEncoder(tiny_config(num_hidden_groups=3)), path)


def test_projection_mismatch_is_explained(tmp_path):
    path = save_original_checkpoint(AlbertEncoder(tiny_config(embedding_size=16)), os.path.join(tmp_path, "m.ckpt"))
    with pytest.raises(AlbertError, match=r"the model needs bert/encoder/embedding_hidden_mapping_in/\w+ but the "
                                          r"checkpoint lacks it: the checkpoint has no E->H projection, so it was "
                                          r"made with embedding_size == hidden_size \(model: 16 != 32\)"):
        load_original_checkpoint(AlbertEncoder(tiny_config(embedding_size=16, hidden_size=32)), path)


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    missing = os.path.join(tmp_path, "model.ckpt-best")
    with pytest.raises(AlbertError, match=r"model.ckpt-best: checkpoint not found \(no model.ckpt-best.index\)"):
        load_original_checkpoint(AlbertEncoder(tiny_config()), missing)


@pytest.mark.parametrize("sharing", ["all", "ffn", "none"])
def test_native_tf2_checkpoint_saves_every_block(tmp_path, sharing):
    """tf.train.Checkpoint (what the training loop uses) must reach every shared and unshared block."""
    config = tiny_config(num_hidden_groups=2, inner_group_num=2, sharing=sharing)
    source, target = AlbertPretrainer(config), AlbertPretrainer(config)
    path = tf.train.Checkpoint(model=source).save(os.path.join(tmp_path, "ckpt"))
    tf.train.Checkpoint(model=target).read(path).assert_existing_objects_matched()
    saved = [n for n, _ in tf.train.list_variables(path) if n.endswith("VARIABLE_VALUE") and "save_counter" not in n]
    assert len(saved) == len(source.weights)
    batch = padded_batch(config)
    np.testing.assert_array_equal(np.asarray(target(batch)["mlm_logits"]), np.asarray(source(batch)["mlm_logits"]))


def test_init_from_group0_fills_every_group_from_the_first(tmp_path):
    one_group = AlbertEncoder(tiny_config())
    path = save_original_checkpoint(one_group, os.path.join(tmp_path, "model.ckpt"))
    target = AlbertEncoder(tiny_config(num_hidden_groups=3))
    with pytest.raises(AlbertError, match="lacks it"):
        load_original_checkpoint(target, path)
    report = load_original_checkpoint(target, path, init_from_group0=True)
    assert report.unused == []
    assert report.missing == []
    source = next(iter(one_group.ffn_blocks.values()))
    for key, block in target.ffn_blocks.items():
        np.testing.assert_array_equal(np.asarray(block.intermediate.kernel), np.asarray(source.intermediate.kernel))
    assert sorted(target.ffn_blocks) == ["group_0/inner_group_0", "group_1/inner_group_0", "group_2/inner_group_0"]


def test_index_shapes_read_without_tensorflow_equal_tensorflows(tmp_path):
    from albert.weights.bundle_index import shapes

    path = save_original_checkpoint(AlbertEncoder(tiny_config()), os.path.join(tmp_path, "model.ckpt"))
    with open(path + ".index", "rb") as f:
        ours = shapes(f.read())
    assert ours == {name: tuple(shape) for name, shape in tf.train.list_variables(path)}
