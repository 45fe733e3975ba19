"""Parameters, FLOPs and activation memory of an ALBERT config -- computed, not built.

Cross-layer sharing divides the parameter count, not the compute and not the activations: every one of the
L x inner_group_num block applications does the full work of a BERT layer and keeps its own activations for the
backward pass. This module makes those three numbers visible side by side.

`python -m albert.info` prints them (albert/info.py).
"""

from albert.config import AlbertConfig
from albert.ground import memory
from albert.ground.errors import AlbertError


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


def check_weights_fit(config: AlbertConfig, source: str):
    """AlbertError unless the float32 weights of `config` (the encoder and both pretraining heads) fit in the memory
    this process may use (albert.ground.memory): one line saying what they need and what there is, before Keras
    allocates anything."""
    need = 4 * sum(parameter_breakdown(config).values())
    room, where = memory.available()
    if room is not None and need > room:
        raise AlbertError(f"{source}: its weights alone would need {_fmt_bytes(need)} in float32, more than the "
                          f"{_fmt_bytes(room)} this process may use ({where}); check the config (or set "
                          f"{memory.VARIABLE} to allow more)")


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


COMPUTE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}  # bytes of a value in each --mixed_precision's compute dtype


def activation_bytes(config: AlbertConfig, batch_size: int, seq_length: int, precision: str = "fp32") -> dict:
    """Estimate of the activations a training step keeps for the backward pass.

    Per block application this implementation keeps about BT(9H + 6I) hidden-sized values: the block input, q, k,
    v, context, attention output and FFN output in the compute dtype, two float32 residual sums, and six
    intermediate-sized tensors of the FFN (its input to the activation, the tanh GELU's four intermediates, its
    output); and BNT^2 attention probabilities in float32 (plus their compute-dtype copy under mixed precision).
    Checked against TensorFlow's peak tensor memory by benchmarks/memory.py.
    """
    c = config
    b, t, h, i, n = batch_size, seq_length, c.hidden_size, c.intermediate_size, c.num_attention_heads
    low = COMPUTE_BYTES[precision]
    applications = c.num_hidden_layers * c.inner_group_num
    hidden = b * t * ((7 * h + 6 * i) * low + 2 * h * 4)
    attention = b * n * t * t * (4 + (low if low != 4 else 0))
    dropout_masks = b * t * (2 * h + n * t) if c.hidden_dropout_prob or c.attention_probs_dropout_prob else 0
    per_block = hidden + attention + dropout_masks
    embeddings = b * t * c.embedding_size * 4 * 3
    return {"per_block_application": per_block, "block_applications": applications,
            "embeddings": embeddings, "total": per_block * applications + embeddings}


def default_predictions(seq_length: int) -> int:
    """Masked positions a pretraining sequence of `seq_length` tokens gets in the benchmarks and estimates: 15 %,
    at least 20 (the original's --max_predictions_per_seq default)."""
    return max(20, -(-15 * seq_length // 100))


def training_memory(config: AlbertConfig, batch_size: int, seq_length: int, precision: str = "fp32",
                    recompute: bool = False, predictions: int | None = None) -> dict:
    """Estimate of the peak memory of a pretraining step (the framework's own runtime left out): float32
    weights, gradients, two optimizer slots and the update's temporaries (24 bytes a parameter), the activations
    kept for the backward pass and the masked-LM logits [B,P,V] (float32 logits, their softmax and its gradient).

    Under mixed precision every block application casts its block's weights to the compute dtype, and the backward
    pass needs that copy again: one copy per application is kept (per application in flight with `recompute`).

    With `recompute` a block application keeps only its float32 input [B,T,H]; while the backward pass goes through
    an application, its recomputed activations and its weight gradients (with their running sum) exist, for one
    application at a time. Checked against TensorFlow's peak tensor memory by benchmarks/memory.py."""
    c = config
    predictions = default_predictions(seq_length) if predictions is None else predictions
    states = sum(parameter_breakdown(config).values()) * 24
    act = activation_bytes(config, batch_size, seq_length, precision)
    block = sum(sharing_groups(config).values())
    copy = 0 if precision == "fp32" else block * COMPUTE_BYTES[precision]  # fp32 reads the variables as they are
    if recompute:
        kept = act["block_applications"] * batch_size * seq_length * c.hidden_size * 4
        block_gradients = 2 * block * 4
        activations = kept + act["per_block_application"] + block_gradients + act["embeddings"]
        copies = copy
    else:
        activations = act["total"]
        copies = copy * act["block_applications"]
    logits = batch_size * predictions * c.vocab_size * 4 * 3
    return {"weights_gradients_optimizer": states, "activations": activations, "weight_copies": copies,
            "mlm_logits": logits, "total": states + activations + copies + logits}


MEMORY_SIZES_GIB = (16, 80)


def largest_batch(config: AlbertConfig, memory_bytes: float, seq_length: int, precision: str,
                  recompute: bool) -> int:
    """The largest batch whose `training_memory` fits in `memory_bytes` (0: not even one sequence)."""
    fixed = training_memory(config, 0, seq_length, precision, recompute)["total"]
    per_sequence = training_memory(config, 1, seq_length, precision, recompute)["total"] - fixed
    return max(0, int((memory_bytes - fixed) // per_sequence))


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
    memory = {on: training_memory(config, batch_size, seq_length, precision, on) for on in (False, True)}
    lines += ["", f"Training memory, batch {batch_size} x {seq_length} tokens, {precision} (estimate)",
              f"  activations per block application {_fmt_bytes(act['per_block_application']):>12} "
              f"x {act['block_applications']} applications",
              f"  activations {_fmt_bytes(memory[False]['activations']):>26}   "
              f"with --recompute {_fmt_bytes(memory[True]['activations'])}",
              f"  weights, gradients, 2 optimizer slots, update (fp32) "
              f"{_fmt_bytes(memory[False]['weights_gradients_optimizer']):>8}",
              f"  masked-LM logits {_fmt_bytes(memory[False]['mlm_logits']):>21}",
              f"  {precision} weight copies {_fmt_bytes(memory[False]['weight_copies']):>17}   "
              f"with --recompute {_fmt_bytes(memory[True]['weight_copies'])}",
              f"  peak {_fmt_bytes(memory[False]['total']):>33}   with --recompute {_fmt_bytes(memory[True]['total'])}",
              "", f"Largest training batch at T={seq_length} (estimate; the framework's own workspace not included)",
              "  memory    fp32   fp32 --recompute   bf16   bf16 --recompute"]
    for gib in MEMORY_SIZES_GIB:
        sizes = [largest_batch(config, gib * 2 ** 30, seq_length, p, r) for p in ("fp32", "bf16") for r in (0, 1)]
        lines.append(f"  {gib:>3} GiB {sizes[0]:>7,} {sizes[1]:>18,} {sizes[2]:>6,} {sizes[3]:>18,}")
    return "\n".join(lines)


TABLE_PRESETS = ("base_v2", "large_v2", "xlarge_v2", "xxlarge_v2")


def batch_table(seq_length: int = 512) -> str:
    """The README's table: the largest training batch of each released size at `seq_length`, per memory size."""
    lines = [f"| model (T={seq_length}) | memory | fp32 | fp32 --recompute | bf16 | bf16 --recompute |",
             "|---|---|---|---|---|---|"]
    for name in TABLE_PRESETS:
        config = AlbertConfig.preset(name)
        for gib in MEMORY_SIZES_GIB:
            sizes = [largest_batch(config, gib * 2 ** 30, seq_length, p, r) for p in ("fp32", "bf16") for r in (0, 1)]
            lines.append(f"| {name} | {gib} GiB | " + " | ".join(f"{b:,}" for b in sizes) + " |")
    return "\n".join(lines)
