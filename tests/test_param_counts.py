"""Exact trainable parameter counts of the real Keras models, and `python -m albert.info` agreeing with them."""

import functools
import json
import re

import pytest

from albert import AlbertConfig, AlbertEncoder, AlbertPretrainer
from albert.model.sizing import largest_batch, parameter_breakdown, training_memory
from tests.helpers import run_command, tiny_config

PRESET_COUNTS = {  # (encoder + pooler, with MLM + SOP heads): the original code's counts (spec §4.9)
    "base": (11_683_584, 11_813_810),
    "large": (17_683_968, 17_847_474),
    "xlarge": (58_724_864, 59_021_490),
    "xxlarge": (222_595_584, 223_158_450),
}


@pytest.mark.parametrize("size", sorted(PRESET_COUNTS))
def test_preset_parameter_counts_are_exact(size):
    encoder_count, total = PRESET_COUNTS[size]
    for version in ("v1", "v2"):
        config = AlbertConfig.preset(f"{size}_{version}")
        params = parameter_breakdown(config)
        assert sum(v for k, v in params.items() if not k.endswith("_head")) == encoder_count
        assert sum(params.values()) == total
    model = AlbertPretrainer(config)
    assert model.encoder.count_params() == encoder_count
    assert model.count_params() == total
    assert len(model.trainable_weights) == len(model.weights)


def test_base_breakdown_matches_the_original():
    parts = parameter_breakdown(AlbertConfig.preset("base_v2"), with_heads=False)
    assert parts["word_embeddings"] == 3_840_000
    assert parts["position_and_type_embeddings"] == 65_536 + 256
    assert parts["embedding_projection"] == 99_072
    assert parts["attention"] == 2_362_368
    assert parts["ffn"] == 4_722_432
    assert parts["layer_norms"] == 256 + 1_536 + 1_536
    assert parts["pooler"] == 590_592


# The paper's Tables 3-4 at the base shape (L=12, H=768, I=3072, V=30000), counted with the pooler.
ABLATIONS = [
    (128, "all", 11_683_584), (128, "attention", 63_647_232), (128, "ffn", 37_686_528), (128, "none", 89_650_176),
    (768, "all", 31_114_752), (768, "attention", 83_078_400), (768, "ffn", 57_117_696), (768, "none", 109_081_344),
    (64, "all", 9_681_408), (64, "none", 87_648_000), (256, "all", 15_687_936), (256, "none", 93_654_528),
]


@pytest.mark.parametrize("embedding_size, sharing, count", ABLATIONS)
def test_paper_sharing_and_embedding_ablations(embedding_size, sharing, count):
    config = AlbertConfig.preset("base_v2").replace(embedding_size=embedding_size, sharing=sharing)
    assert AlbertEncoder(config).count_params() == count
    assert sum(parameter_breakdown(config, with_heads=False).values()) == count


@pytest.mark.parametrize("changes", [
    {}, {"embedding_size": 16}, {"num_hidden_groups": 2, "inner_group_num": 3},
    {"num_hidden_layers": 5, "num_hidden_groups": 3, "sharing": "attention"},
    {"num_hidden_layers": 5, "num_hidden_groups": 3, "inner_group_num": 2, "sharing": "ffn"},
    {"num_hidden_groups": 2, "sharing": "none"},
])
def test_info_counts_equal_the_model_for_any_grouping(changes):
    config = tiny_config(**changes)
    model = AlbertPretrainer(config)
    params = parameter_breakdown(config)
    assert sum(params.values()) == model.count_params()
    assert params["mlm_head"] + params["sop_head"] == model.mlm_head.count_params() + model.sop_head.count_params()


run_info = functools.partial(run_command, "albert.info", timeout=120)


def test_info_cli_prints_breakdown_flops_and_memory():
    result = run_info("--preset", "base_v2", "--batch_size", "8", "--seq_length", "512")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "  encoder + pooler                    11,683,584\n" in out
    assert "  with MLM + SOP heads                11,813,810\n" in out
    assert "an unshared model of this shape: 89,650,176 parameters" in out  # the paper's not-shared
    # 12 x (8 H^2 + 4 T H + 4 H I) + 2 E H + 2 H^2 / T at H=768, I=3072, T=512, E=128.
    assert f"{12 * (8 * 768**2 + 4 * 512 * 768 + 4 * 768 * 3072) + 2 * 128 * 768 + 2 * 768**2 / 512:,.0f}" in out
    assert "Training memory, batch 8 x 512 tokens, fp32" in out
    # per block application: BT(9H + 6I) values (7H + 6I in fp32 here, 2H float32 residuals) + B N T^2 float32
    per_application = 8 * 512 * ((7 * 768 + 6 * 3072) * 4 + 2 * 768 * 4) + 8 * 12 * 512 * 512 * 4
    assert f"activations per block application {f'{per_application / 2**20:,.1f} MiB':>12} x 12 applications" in out
    assert re.search(r"\n   16 GiB +\d+ +\d+ +\d+ +\d+\n   80 GiB +\d+ +\d+ +\d+ +\d+", out)


def test_largest_batch_is_the_largest_that_fits_and_recompute_fits_more():
    table = run_info("--batch_table").stdout
    assert table.count("\n| ") == 8
    assert "| xxlarge_v2 | 80 GiB |" in table  # 4 sizes x 2 memories
    for name in ("base_v2", "xxlarge_v2"):
        config = AlbertConfig.preset(name)
        for precision in ("fp32", "bf16"):
            sizes = {}
            for recompute in (False, True):
                b = largest_batch(config, 16 * 2**30, 512, precision, recompute)
                assert training_memory(config, b, 512, precision, recompute)["total"] <= 16 * 2**30
                assert training_memory(config, b + 1, 512, precision, recompute)["total"] > 16 * 2**30
                sizes[recompute] = b
                assert f"| {name} | 16 GiB |" in table
            assert sizes[True] > 3 * sizes[False] > 0


def test_info_sizes_a_model_shorter_than_the_default_length_at_its_own(tmp_path):
    """The demo's model (max_position_embeddings 64, scripts/demo.sh) at the default --seq_length: sized at 64 and
    said, not refused for the default 512; a length the user gives is still held to the model's."""
    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps({"vocab_size": 8000, "embedding_size": 128, "hidden_size": 128,
                                  "num_hidden_layers": 4, "num_attention_heads": 2, "intermediate_size": 512,
                                  "max_position_embeddings": 64, "hidden_act": "gelu"}))
    result = run_info("--albert_config_file", str(config))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.startswith("--seq_length 64: the config's max_position_embeddings (the default 512 is "
                                    "longer than the model takes)\n\nALBERT: L=4 H=128 E=128 I=512 heads=2 V=8000 ")
    assert "\nForward FLOPs per token at T=64 (training ~3x)\n" in result.stdout
    assert "\nTraining memory, batch 8 x 64 tokens, fp32 (estimate)\n" in result.stdout
    assert "\nLargest training batch at T=64 " in result.stdout
    given = run_info("--albert_config_file", str(config), "--seq_length", "32")
    assert given.returncode == 0 and given.stdout.startswith("ALBERT: L=4 ")
    assert "\nForward FLOPs per token at T=32 (training ~3x)\n" in given.stdout
    longer = run_info("--albert_config_file", str(config), "--seq_length", "512")
    assert longer.returncode == 2
    assert longer.stderr.strip() == ("python -m albert.info: error: --seq_length 512 exceeds max_position_embeddings "
                                     "(64)")
    preset = run_info("--preset", "base_v2")  # 512 fits: nothing said
    assert preset.returncode == 0 and preset.stdout.startswith("ALBERT: L=12 ")
    assert "\nForward FLOPs per token at T=512 (training ~3x)\n" in preset.stdout


def test_info_cli_errors_exit_2(tmp_path):
    result = run_info("--preset", "base_v2", "--seq_length", "1024")
    assert result.returncode == 2
    assert result.stderr.strip() == ("python -m albert.info: error: --seq_length 1024 exceeds "
                                     "max_position_embeddings (512)")
    bad = tmp_path / "c.json"
    bad.write_text('{"vocab_size": 10, "hidden_act": "swish"}')
    result = run_info("--albert_config_file", str(bad))
    assert result.returncode == 2
    assert result.stderr.strip() == (f"python -m albert.info: error: {bad}: `hidden_act` 'swish' is unknown; use "
                                     "one of gelu, relu, tanh, linear")
