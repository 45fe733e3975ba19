"""The TFRecord feature tables, once: names, dtypes and lengths of every record this project writes or reads.

Pure Python (no TensorFlow) so that the data writers use the same table as the tf.data readers.
"""

from albert.ground.errors import AlbertError

# What every encoder reads: the packed ids, the mask of real tokens and the segment (token type) ids, [B, T].
PACKED_INPUTS = ("input_ids", "input_mask", "segment_ids")
# The lengths a batch is cut to (albert.data.buckets): the smallest that holds its longest example. Four per
# doubling (each at most 1.25x the one before: a batch computes at most a fifth more than its longest example), so
# at most 23 shapes up to 512 for a compiled step; on real GLUE text, batches grouped by length compute 7-13 % padding.
# They also key --group_by_length's groups and the evaluation's; an uncompiled training step cuts each batch to its
# own longest example instead (step_boundaries).
DEFAULT_BOUNDARIES = (8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448,
                      512)


def _packed(length: int) -> dict:
    return {name: ("int64", length) for name in PACKED_INPUTS}


def pretraining_features(max_seq_length: int, max_predictions_per_seq: int, do_permutation: bool = False) -> dict:
    """The original pretraining record (spec §6.8): {name: (dtype, length)}. With `do_permutation` the masked-LM
    arrays are twice as long."""
    predictions = max_predictions_per_seq * (2 if do_permutation else 1)
    return {
        **_packed(max_seq_length),
        "token_boundary": ("int64", max_seq_length),
        "masked_lm_positions": ("int64", predictions),
        "masked_lm_ids": ("int64", predictions),
        "masked_lm_weights": ("float32", predictions),
        "next_sentence_labels": ("int64", 1),  # holds the SOP (or NSP) label: 1 = swapped / random
    }


def classifier_features(max_seq_length: int, regression: bool = False) -> dict:
    """The original run_classifier record (spec §9.2); STS-B's label is a float."""
    return {
        **_packed(max_seq_length),
        "label_ids": ("float32" if regression else "int64", 1),
        "is_real_example": ("int64", 1),
    }


def race_features(max_seq_length: int, num_choices: int = 4) -> dict:
    """The original RACE record (spec §11.2): the four rows flattened."""
    return {
        **_packed(num_choices * max_seq_length),
        "label_ids": ("int64", 1),
        "is_real_example": ("int64", 1),
    }


def squad_features(max_seq_length: int, is_training: bool) -> dict:
    """The original SQuAD record (spec §10.2): training records add the targets."""
    spec = {
        "unique_ids": ("int64", 1),
        **_packed(max_seq_length),
        "p_mask": ("int64", max_seq_length),
    }
    if is_training:
        spec.update(start_positions=("int64", 1), end_positions=("int64", 1), is_impossible=("int64", 1))
    return spec


def boundaries(max_seq_length: int, spec: str = "default") -> tuple:
    """The lengths batches are cut to, from a --length_buckets value: `default` (DEFAULT_BOUNDARIES below
    max_seq_length, and max_seq_length), `none` (max_seq_length only: fixed padding, as the original) or
    comma-separated lengths."""
    spec = (spec or "default").strip().lower()
    if spec == "none":
        return (max_seq_length,)
    if spec == "default":
        chosen = DEFAULT_BOUNDARIES
    else:
        try:
            chosen = tuple(int(part) for part in spec.split(",") if part.strip())
        except ValueError:
            raise AlbertError(f"--length_buckets {spec!r}: use default, none or comma-separated lengths such as "
                              "32,64,128") from None
        if not chosen or min(chosen) < 1:
            raise AlbertError(f"--length_buckets {spec!r}: lengths must be positive integers")
    return tuple(sorted({b for b in chosen if b < max_seq_length} | {max_seq_length}))


def step_boundaries(max_seq_length: int, spec: str = "default", compiled: bool = False) -> tuple:
    """The lengths a training step cuts its batch to. `default` without XLA (`compiled` False): every length, so
    each batch computes exactly up to its longest example (dynamic padding: a graph step takes any length, traced
    once, and a new length costs no measurable extra time; cutting to a bucket instead computed 12-14 % more
    positions and took 10-14 % more time on base-size batches of 16 at lengths 49 and 57); under XLA, and for any
    other spec, `boundaries` (a compiled step sees a bounded number of shapes)."""
    if (spec or "default").strip().lower() == "default" and not compiled:
        return tuple(range(1, max_seq_length + 1))
    return boundaries(max_seq_length, spec)
