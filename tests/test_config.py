import json
import os

import pytest

from albert import AlbertConfig, AlbertError
from albert.config import PRESETS

RELEASED_BASE_V2 = {  # albert_base_v2's albert_config.json (spec §3.2)
    "attention_probs_dropout_prob": 0, "hidden_act": "gelu", "hidden_dropout_prob": 0, "embedding_size": 128,
    "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072, "max_position_embeddings": 512,
    "num_attention_heads": 12, "num_hidden_layers": 12, "num_hidden_groups": 1, "net_structure_type": 0,
    "gap_size": 0, "num_memory_blocks": 0, "inner_group_num": 1, "down_scale_factor": 1, "type_vocab_size": 2,
    "vocab_size": 30000,
}


def write(tmp_path, values, name="albert_config.json"):
    path = os.path.join(tmp_path, name)
    with open(path, "w") as f:
        json.dump(values, f)
    return path


def test_released_config_round_trips_in_the_original_format(tmp_path):
    config = AlbertConfig.from_json_file(write(tmp_path, RELEASED_BASE_V2))
    assert (config.hidden_size, config.num_attention_heads, config.extra["net_structure_type"]) == (768, 12, 0)
    out = os.path.join(tmp_path, "out.json")
    config.to_json_file(out)
    text = open(out).read()
    assert text == json.dumps(RELEASED_BASE_V2, indent=2, sort_keys=True) + "\n"
    assert AlbertConfig.from_json_file(out) == config
    assert sorted(os.listdir(tmp_path)) == ["albert_config.json", "out.json"]  # no temporary file left


def test_missing_keys_take_the_original_class_defaults():
    config = AlbertConfig.from_dict({"vocab_size": 100})
    assert (config.hidden_size, config.num_attention_heads, config.intermediate_size) == (4096, 64, 16384)
    assert (config.hidden_dropout_prob, config.inner_group_num, config.hidden_act) == (0.0, 1, "gelu")
    assert config.to_dict()["down_scale_factor"] == 1
    assert "sharing" not in config.to_dict()


def test_sharing_is_written_only_when_not_the_original():
    config = AlbertConfig.from_dict({"vocab_size": 100, "sharing": "ffn"})
    assert json.loads(config.to_json_string())["sharing"] == "ffn"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_are_the_released_configs(name):
    config = AlbertConfig.preset(name)
    size, version = name.split("_")
    hidden = {"base": 768, "large": 1024, "xlarge": 2048, "xxlarge": 4096}[size]
    layers = {"base": 12, "large": 24, "xlarge": 24, "xxlarge": 12}[size]
    dropout = 0.1 if version == "v1" and size != "xxlarge" else 0.0
    assert (config.hidden_size, config.num_hidden_layers, config.intermediate_size) == (hidden, layers, 4 * hidden)
    assert config.hidden_dropout_prob == config.attention_probs_dropout_prob == dropout
    assert (config.embedding_size, config.vocab_size, config.head_size) == (128, 30000, 64 if size != "xlarge" else 128)
    assert ("layers_to_keep" in config.extra) == (size == "xxlarge")


def test_base_v2_preset_equals_the_released_file(tmp_path):
    assert AlbertConfig.from_json_file(write(tmp_path, RELEASED_BASE_V2)) == AlbertConfig.preset("base_v2")


def test_layer_to_group_rule_is_the_originals():
    config = AlbertConfig.from_dict({"vocab_size": 10, "hidden_size": 8, "num_attention_heads": 2,
                                     "intermediate_size": 8, "num_hidden_layers": 12, "num_hidden_groups": 5})
    assert [config.group_of_layer(l) for l in range(12)] == [int(l / 12 * 5) for l in range(12)]
    assert [config.group_of_layer(l) for l in range(12)] == [0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4]


@pytest.mark.parametrize("sharing, attention, ffn", [
    ("all", "group_1/inner_group_1", "group_1/inner_group_1"),
    ("attention", "group_1/inner_group_1", "layer_3/inner_group_1"),
    ("ffn", "layer_3/inner_group_1", "group_1/inner_group_1"),
    ("none", "layer_3/inner_group_1", "layer_3/inner_group_1"),
])
def test_block_plan_composes_sharing_with_groups(sharing, attention, ffn):
    config = AlbertConfig.from_dict({"vocab_size": 10, "hidden_size": 8, "num_attention_heads": 2,
                                     "intermediate_size": 8, "num_hidden_layers": 6, "num_hidden_groups": 3,
                                     "inner_group_num": 2, "sharing": sharing})
    plan = config.block_plan()
    assert len(plan) == 12
    assert plan[3 * 2 + 1] == (attention, ffn)  # layer 3, inner group 1 -> group int(3 / 6 * 3) = 1


BAD = [
    ({"colour": "red"}, "unknown config key `colour`"),
    ({"hidden_size": 100, "num_attention_heads": 12},
     "`hidden_size` (100) must be divisible by `num_attention_heads` (12)"),
    ({"hidden_act": "swish"}, "`hidden_act` 'swish' is unknown; use one of gelu, relu, tanh, linear"),
    ({"hidden_size": 0}, "`hidden_size` must be a positive integer, got 0"),
    ({"vocab_size": -5}, "`vocab_size` must be a positive integer, got -5"),
    ({"num_hidden_layers": 2.5}, "`num_hidden_layers` must be a positive integer, got 2.5"),
    ({"intermediate_size": 0}, "`intermediate_size` must be a positive integer, got 0"),
    ({"inner_group_num": 0}, "`inner_group_num` must be a positive integer, got 0"),
    ({"embedding_size": -1}, "`embedding_size` must be a positive integer, got -1"),
    ({"hidden_dropout_prob": 1.5}, "`hidden_dropout_prob` must be a number in [0, 1), got 1.5"),
    ({"initializer_range": 0}, "`initializer_range` must be a positive finite number, got 0"),
    ({"initializer_range": float("nan")}, "`initializer_range` must be a positive finite number, got nan"),
    ({"sharing": "some"}, "`sharing` 'some' is unknown; use one of all, attention, ffn, none"),
]


@pytest.mark.parametrize("change, message", BAD)
def test_invalid_configs_name_the_key(tmp_path, change, message):
    values = dict(RELEASED_BASE_V2, **change)
    path = write(tmp_path, values)
    with pytest.raises(AlbertError) as e:
        AlbertConfig.from_json_file(path)
    assert str(e.value).startswith(f"{path}: ")
    assert message in str(e.value)


def test_missing_vocab_size_and_bad_files(tmp_path):
    with pytest.raises(AlbertError, match="`vocab_size` is required"):
        AlbertConfig.from_dict({"hidden_size": 8})
    missing = os.path.join(tmp_path, "nope.json")
    with pytest.raises(AlbertError, match=f"^{missing}: config file not found"):
        AlbertConfig.from_json_file(missing)
    broken = os.path.join(tmp_path, "broken.json")
    with open(broken, "w") as f:
        f.write('{\n  "vocab_size": 10,\n  oops\n}')
    with pytest.raises(AlbertError, match=r"broken.json: line 3 column 3: invalid JSON"):
        AlbertConfig.from_json_file(broken)
    with pytest.raises(AlbertError, match="unknown preset 'huge_v2'"):
        AlbertConfig.preset("huge_v2")


def test_direct_construction_is_validated_too():
    with pytest.raises(AlbertError, match="AlbertConfig: `hidden_size` \\(10\\) must be divisible"):
        AlbertConfig(vocab_size=10, hidden_size=10, num_attention_heads=4)


HF_BASE_V2 = {  # albert-base-v2's Hugging Face config.json, as published
    "architectures": ["AlbertForMaskedLM"], "attention_probs_dropout_prob": 0, "bos_token_id": 2,
    "classifier_dropout_prob": 0.1, "down_scale_factor": 1, "embedding_size": 128, "eos_token_id": 3, "gap_size": 0,
    "hidden_act": "gelu_new", "hidden_dropout_prob": 0, "hidden_size": 768, "initializer_range": 0.02,
    "inner_group_num": 1, "intermediate_size": 3072, "layer_norm_eps": 1e-12, "max_position_embeddings": 512,
    "model_type": "albert", "net_structure_type": 0, "num_attention_heads": 12, "num_hidden_groups": 1,
    "num_hidden_layers": 12, "num_memory_blocks": 0, "pad_token_id": 0, "type_vocab_size": 2, "vocab_size": 30000,
}
NETWORK_KEYS = ("vocab_size", "embedding_size", "hidden_size", "num_hidden_layers", "num_hidden_groups",
                "num_attention_heads", "intermediate_size", "inner_group_num", "hidden_act", "hidden_dropout_prob",
                "attention_probs_dropout_prob", "max_position_embeddings", "type_vocab_size", "initializer_range")


def test_a_hugging_face_config_json_reads_as_the_released_config(tmp_path):
    hf = AlbertConfig.from_json_file(write(tmp_path, HF_BASE_V2, "config.json"))
    released = AlbertConfig.from_dict(RELEASED_BASE_V2)
    assert {k: getattr(hf, k) for k in NETWORK_KEYS} == {k: getattr(released, k) for k in NETWORK_KEYS}
    assert hf.hidden_act == "gelu"
    assert hf.sharing == "all"  # gelu_new is the original's (tanh) gelu
    relu = AlbertConfig.from_json_file(write(tmp_path, dict(HF_BASE_V2, hidden_act="relu"), "relu.json"))
    assert relu.hidden_act == "relu"


@pytest.mark.parametrize("change, message", [
    ({"model_type": "bert"}, "a Hugging Face `bert` config, not ALBERT (model_type must be \"albert\")"),
    ({"hidden_act": "gelu"}, "`hidden_act` 'gelu' is not implemented (ALBERT's GELU is the tanh approximation, "
                             "Hugging Face's \"gelu_new\")"),
    ({"layer_norm_eps": 1e-5}, "`layer_norm_eps` 1e-05 is not supported: every ALBERT LayerNorm uses 1e-12"),
    ({"position_embedding_type": "relative_key"}, "`position_embedding_type` 'relative_key' is not supported"),
    ({"num_attention_heads": 7}, "`hidden_size` (768) must be divisible by `num_attention_heads` (7)"),
])
def test_bad_hugging_face_configs_name_the_key(tmp_path, change, message):
    path = write(tmp_path, dict(HF_BASE_V2, **change), "config.json")
    with pytest.raises(AlbertError) as error:
        AlbertConfig.from_json_file(path)
    assert str(error.value).startswith(f"{path}: ")
    assert message in str(error.value)
