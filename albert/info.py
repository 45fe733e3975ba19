"""Parameters, FLOPs and activation memory of an ALBERT config -- computed, not built.

Cross-layer sharing divides the parameter count, not the compute and not the activations: every one of the
L x inner_group_num block applications does the full work of a BERT layer and keeps its own activations for the
backward pass. This module makes those three numbers visible side by side.

    python -m albert.info --preset base_v2 --batch_size 8 --seq_length 512
    python -m albert.info --albert_config_file albert_config.json
"""

import sys

from albert.cli import ArgumentParser
from albert.config import PRESETS, AlbertConfig
from albert.errors import AlbertError


def parameter_breakdown(config: AlbertConfig, with_heads: bool = True) -> dict:
    """Trainable parameters per part. The attention LayerNorm counts with `layer_norms`, as do all others."""
    c = config
    plan = c.block_plan()
    n_attention = len({attention for attention, _ in plan})
    n_ffn = len({ffn for _, ffn in plan})
    h, e, i = c.hidden_size, c.embedding_size, c.intermediate_size
    parts = {
        "word_embeddings": c.vocab_size * e,
        "position_and_type_embeddings": (c.max_position_embeddings + c.type_vocab_size) * e,
        "embedding_projection": (e * h + h) if e != h else 0,
        "attention": n_attention * 4 * (h * h + h),
        "ffn": n_ffn * (h * i + i + i * h + h),
        "layer_norms": 2 * e + (n_attention + n_ffn) * 2 * h,
        "pooler": h * h + h,
    }
    if with_heads:
        parts["mlm_head"] = h * e + e + 2 * e + c.vocab_size
        parts["sop_head"] = 2 * h + 2
    return parts


def sharing_groups(config: AlbertConfig) -> dict:
    """Parameters of the attention part (with its LayerNorm) and of the FFN part (with its LayerNorm)."""
    h, i = config.hidden_size, config.intermediate_size
    return {"attention": 4 * (h * h + h) + 2 * h, "ffn": h * i + i + i * h + h + 2 * h}


def forward_flops_per_token(config: AlbertConfig, seq_length: int) -> dict:
    """Forward FLOPs per token (a multiply-add counts 2). Training costs about 3x forward."""
    c = config
    h, e, i, t = c.hidden_size, c.embedding_size, c.intermediate_size, seq_length
    applications = c.num_hidden_layers * c.inner_group_num
    per_block = {"attention_projections": 8 * h * h, "attention_scores": 4 * t * h, "ffn": 4 * h * i}
    flops = {
        "embedding_projection": 2 * e * h if e != h else 0,
        **{k: v * applications for k, v in per_block.items()},
        "pooler": 2 * h * h / t,
    }
    flops["encoder_total"] = sum(flops.values())
    flops["mlm_head_per_prediction"] = 2 * h * e + 2 * e * c.vocab_size
    return flops


def train_flops_per_step(config: AlbertConfig, batch_size: int, seq_length: int, predictions: int) -> float:
    """Model FLOPs of one pretraining step (forward + backward = 3x forward): the encoder over every token and
    the MLM head over the masked positions."""
    flops = forward_flops_per_token(config, seq_length)
    forward = (flops["encoder_total"] * batch_size * seq_length
               + flops["mlm_head_per_prediction"] * batch_size * predictions)
    return 3.0 * forward


def gemm_ceiling(dtype_name: str, size: int = 2048, repeats: int = 10) -> float:
    """Best FLOP/s of size x size x size matmuls on the default device: the machine's practical GEMM ceiling for
    that dtype (the denominator of MFU where no datasheet peak applies, as on a CPU)."""
    import time

    import tensorflow as tf

    dtype = tf.as_dtype(dtype_name)
    a = tf.cast(tf.random.normal((size, size)), dtype)
    b = tf.cast(tf.random.normal((size, size)), dtype)
    matmul = tf.function(tf.linalg.matmul)
    matmul(a, b).numpy()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        matmul(a, b).numpy()
        best = min(best, time.perf_counter() - start)
    return 2.0 * size ** 3 / best


def activation_bytes(config: AlbertConfig, batch_size: int, seq_length: int, precision: str = "fp32") -> dict:
    """Estimate of the activations a training step keeps for the backward pass.

    Per block application this implementation keeps about BT(9H + 2I) hidden-sized values (block input, q, k,
    v, context, attention output, residual sums, the FFN's pre- and post-activation) and 2BNT^2 attention values
    (float32 probabilities and their compute-dtype copy). LayerNorm inputs stay float32 under mixed precision.
    """
    c = config
    b, t, h, i, n = batch_size, seq_length, c.hidden_size, c.intermediate_size, c.num_attention_heads
    low = {"fp32": 4, "bf16": 2, "fp16": 2}[precision]
    applications = c.num_hidden_layers * c.inner_group_num
    hidden = b * t * ((7 * h + 2 * i) * low + 2 * h * 4)
    attention = b * n * t * t * (4 + low)
    dropout_masks = b * t * (2 * h + n * t) if c.hidden_dropout_prob or c.attention_probs_dropout_prob else 0
    per_block = hidden + attention + dropout_masks
    embeddings = b * t * c.embedding_size * 4 * 3
    return {"per_block_application": per_block, "block_applications": applications,
            "embeddings": embeddings, "total": per_block * applications + embeddings}


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:,.1f} {unit}"
        n /= 1024


def report(config: AlbertConfig, batch_size: int, seq_length: int, precision: str) -> str:
    params = parameter_breakdown(config)
    encoder = sum(v for k, v in params.items() if not k.endswith("_head"))
    lines = [f"ALBERT: L={config.num_hidden_layers} H={config.hidden_size} E={config.embedding_size} "
             f"I={config.intermediate_size} heads={config.num_attention_heads} V={config.vocab_size} "
             f"groups={config.num_hidden_groups} inner={config.inner_group_num} sharing={config.sharing}",
             "", "Trainable parameters"]
    for name, value in params.items():
        lines.append(f"  {name:<30}{value:>16,}")
    lines.append(f"  {'encoder + pooler':<30}{encoder:>16,}")
    lines.append(f"  {'with MLM + SOP heads':<30}{sum(params.values()):>16,}")
    flops = forward_flops_per_token(config, seq_length)
    lines += ["", f"Forward FLOPs per token at T={seq_length} (training ~3x)"]
    for name, value in flops.items():
        lines.append(f"  {name:<30}{value:>16,.0f}")
    unshared = config.replace(num_hidden_groups=config.num_hidden_layers, sharing="none")
    unshared_params = sum(v for k, v in parameter_breakdown(unshared, False).items())
    lines.append(f"  (an unshared model of this shape: {unshared_params:,} parameters, the same FLOPs)")
    act = activation_bytes(config, batch_size, seq_length, precision)
    lines += ["", f"Training activations, batch {batch_size} x {seq_length} tokens, {precision} (estimate)",
              f"  per block application {_fmt_bytes(act['per_block_application']):>16} "
              f"x {act['block_applications']} applications",
              f"  total {_fmt_bytes(act['total']):>32}",
              f"  weights + gradients + 2 optimizer slots (fp32) {_fmt_bytes(sum(params.values()) * 16):>12}"]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = ArgumentParser(prog="python -m albert.info", description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--albert_config_file", help="an albert_config.json")
    source.add_argument("--preset", choices=sorted(PRESETS), help="a released configuration")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--seq_length", type=int, default=512)
    parser.add_argument("--precision", choices=("fp32", "bf16", "fp16"), default="fp32")
    args = parser.parse_args(argv)
    try:
        config = (AlbertConfig.from_json_file(args.albert_config_file) if args.albert_config_file
                  else AlbertConfig.preset(args.preset))
        if args.batch_size < 1 or args.seq_length < 1:
            raise AlbertError("--batch_size and --seq_length must be positive")
        if args.seq_length > config.max_position_embeddings:
            raise AlbertError(f"--seq_length {args.seq_length} exceeds max_position_embeddings "
                              f"({config.max_position_embeddings})")
    except AlbertError as e:
        print(f"python -m albert.info: error: {e}", file=sys.stderr)
        return 2
    print(report(config, args.batch_size, args.seq_length, args.precision))
    return 0


if __name__ == "__main__":
    sys.exit(main())
