"""tf.data readers. Every record's features come from albert/data/features.py."""

import tensorflow as tf

from albert.data.buckets import grouped_batches, length_sorted_batches
from albert.data.corpus import expand_inputs
from albert.data.features import PACKED_INPUTS, classifier_features, pretraining_features, race_features, squad_features
from albert.data.tfrecord import count_records
from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote


def expand_files(patterns: str) -> list:
    """Comma-separated TFRecord files or globs (local, or gs:// through tf.io.gfile)."""
    return expand_inputs(patterns, kind="TFRecord file")


def feature_description(spec: dict) -> dict:
    return {name: tf.io.FixedLenFeature([length], tf.float32 if dtype == "float32" else tf.int64)
            for name, (dtype, length) in spec.items()}


def _decoder(spec: dict, keep: tuple | None = None):
    description = feature_description(spec)
    if keep is not None:
        description = {k: v for k, v in description.items() if k in keep}

    def decode(record):
        features = tf.io.parse_single_example(record, description)
        return {k: tf.cast(v, tf.int32) if v.dtype == tf.int64 else v for k, v in features.items()}

    return decode


def record_dataset(files: list, decode, batch_size: int, is_training: bool, input_context=None, seed: int = 12345,
                   shuffle_buffer: int = 100, group_by_length: bool = False):
    """Files -> parsed, batched (drop_remainder) examples. Training: files sharded per input pipeline (or records,
    when there are fewer files than pipelines), repeated, shuffled with a fixed seed, read deterministically so a
    checkpointed iterator resumes exactly. `group_by_length` (training): batches of examples of neighbouring
    lengths, cut from windows sorted by length, in random order (albert.data.buckets.length_sorted_batches)."""
    dataset = tf.data.Dataset.from_tensor_slices(files)
    pipelines = input_context.num_input_pipelines if input_context else 1
    pipeline = input_context.input_pipeline_id if input_context else 0
    shard_files = pipelines > 1 and len(files) >= pipelines
    if shard_files:
        dataset = dataset.shard(pipelines, pipeline)
    if is_training:
        dataset = dataset.repeat().shuffle(len(files), seed=seed)
        dataset = dataset.interleave(tf.data.TFRecordDataset, cycle_length=min(4, len(files)),
                                     num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    else:
        dataset = tf.data.TFRecordDataset(dataset).repeat()
    if pipelines > 1 and not shard_files:
        dataset = dataset.shard(pipelines, pipeline)
    if is_training and shuffle_buffer > 1:
        dataset = dataset.shuffle(shuffle_buffer, seed=seed)
    dataset = dataset.map(decode, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    if group_by_length:
        return length_sorted_batches(dataset, batch_size, seed).prefetch(tf.data.AUTOTUNE)
    return dataset.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)


def prediction_batches(files: list, decode, batch_size: int, cut_bounds: tuple) -> tf.data.Dataset:
    """Every record once, in batches of records sorted by length (in windows), each cut to the smallest of
    `cut_bounds` holding its longest record (albert.data.features.step_boundaries), each with its records'
    `position` in the files (albert.data.buckets.in_original_order puts outputs back in order)."""
    examples = tf.data.TFRecordDataset(files).map(decode, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
    return grouped_batches(examples, batch_size, cut_bounds).prefetch(tf.data.AUTOTUNE)


def pretraining_dataset(files: list, max_seq_length: int, max_predictions_per_seq: int, batch_size: int,
                        is_training: bool, input_context=None, seed: int = 12345):
    """The original pretraining records (spec §5.1); `token_boundary` is not read."""
    spec = pretraining_features(max_seq_length, max_predictions_per_seq)
    keep = tuple(k for k in spec if k != "token_boundary")
    return record_dataset(files, _decoder(spec, keep), batch_size, is_training, input_context, seed)


def classifier_decoder(max_seq_length: int, regression: bool = False):
    """GLUE feature records (spec §9.2)."""
    return _decoder(classifier_features(max_seq_length, regression))


def classifier_dataset(files: list, max_seq_length: int, regression: bool, batch_size: int, is_training: bool,
                       input_context=None, seed: int = 12345, group_by_length: bool = False):
    return record_dataset(files, classifier_decoder(max_seq_length, regression), batch_size, is_training,
                          input_context, seed, group_by_length=group_by_length)


def race_decoder(max_seq_length: int):
    """RACE records (spec §11.2), the four rows back in shape [4, max_seq_length]."""
    decode = _decoder(race_features(max_seq_length))

    def reshape(record):
        return {k: tf.reshape(v, [4, max_seq_length]) if k in PACKED_INPUTS else v
                for k, v in decode(record).items()}

    return reshape


def race_dataset(files: list, max_seq_length: int, batch_size: int, is_training: bool, input_context=None,
                 seed: int = 12345, group_by_length: bool = False):
    return record_dataset(files, race_decoder(max_seq_length), batch_size, is_training, input_context, seed,
                          group_by_length=group_by_length)


def squad_decoder(max_seq_length: int, is_training: bool):
    """SQuAD feature records (spec §10.2); training records carry the targets."""
    return _decoder(squad_features(max_seq_length, is_training))


def squad_dataset(files: list, max_seq_length: int, batch_size: int, is_training: bool, input_context=None,
                  seed: int = 12345, group_by_length: bool = False):
    return record_dataset(files, squad_decoder(max_seq_length, is_training), batch_size, is_training,
                          input_context, seed, group_by_length=group_by_length)


def check_records(files: list, spec: dict, flags: dict, vocab_size: int | None = None, what: str = "records"):
    """Fail fast, in one line, on record files the run cannot use: a file that is empty, truncated or not a
    TFRecord, records that are not `tf.train.Example`s of `spec`, a feature whose length disagrees with the flag
    that sets it (`flags`: {feature: (flag name, flag value)}; the message names the value the records need), or
    input ids outside the vocabulary. Local files are walked header by header; the first record is parsed."""
    for path in files:
        if not is_remote(path):
            try:
                count = count_records(path)
            except ValueError as e:
                raise AlbertError(f"{path}: not a complete TFRecord file ({e}); rewrite it") from None
            if count == 0:
                raise AlbertError(f"{path}: holds no records; pass {what} files written by the data tools")
        try:
            first = next(iter(tf.data.TFRecordDataset(path).take(1)), None)
        except tf.errors.OpError as e:
            raise AlbertError(f"{path}: not a TFRecord file ({e.message.splitlines()[0][:120]})") from None
        if first is None:
            raise AlbertError(f"{path}: holds no records; pass {what} files written by the data tools")
        try:
            example = tf.train.Example.FromString(first.numpy())
        except Exception:  # protobuf's DecodeError
            raise AlbertError(f"{path}: its records are not tf.train.Example protos; pass {what} files") from None
        found = example.features.feature
        for name, (dtype, length) in spec.items():
            if name not in found:
                raise AlbertError(f"{path}: its records have no `{name}` feature: they are not {what}")
            values = found[name].float_list.value if dtype == "float32" else found[name].int64_list.value
            if len(values) != length:
                flag, value = flags.get(name, (None, None))
                fix = (f"; pass {flag}={len(values) * value // length}" if flag and len(values) * value % length == 0
                       else "")
                raise AlbertError(f"{path}: its records hold `{name}` of length {len(values)}, but "
                                  f"{flag + ' ' + str(value) if flag else 'this run'} needs {length}{fix}")
        ids = found["input_ids"].int64_list.value if "input_ids" in found else []
        if vocab_size is not None and ids and max(ids) >= vocab_size:
            raise AlbertError(f"{path}: its records hold token id {max(ids)}, outside vocab_size {vocab_size} of the "
                              "config: they were made with another SentencePiece model")
