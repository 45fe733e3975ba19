"""The TFRecord feature tables, once: names, dtypes and lengths of every record this project writes or reads.

Pure Python (no TensorFlow) so that the data writers use the same table as the tf.data readers.
"""

# What every encoder reads: the packed ids, the mask of real tokens and the segment (token type) ids, [B, T].
PACKED_INPUTS = ("input_ids", "input_mask", "segment_ids")


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
