"""create_pretraining_data's algorithm on a corpus of 300 documents: statistics, structure, format, determinism."""

import random

import numpy as np
import pytest
import tensorflow as tf

from albert.data import instances
from albert.data.generator import _instance_arrays, generate
from albert.data.features import pretraining_features
from albert.data.instances import Options, Vocabulary
from albert.text.tokenization import FullTokenizer
from tests.task_data_helpers import write_corpus_files

SEQ, PRED = 128, 20
# The original reader's feature spec (spec §5.1), written out independently of albert.data.features.
ORIGINAL_SPEC = {
    "input_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
    "input_mask": tf.io.FixedLenFeature([SEQ], tf.int64),
    "segment_ids": tf.io.FixedLenFeature([SEQ], tf.int64),
    "masked_lm_positions": tf.io.FixedLenFeature([PRED], tf.int64),
    "masked_lm_ids": tf.io.FixedLenFeature([PRED], tf.int64),
    "masked_lm_weights": tf.io.FixedLenFeature([PRED], tf.float32),
    "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
}


def read_records(path, spec):
    records = [r.numpy() for r in tf.data.TFRecordDataset(path)]
    parsed = [tf.io.parse_single_example(r, spec) for r in records]
    return records, {k: np.stack([p[k].numpy() for p in parsed]) for k in spec}


@pytest.fixture(scope="module")
def tokenizer(corpus_dir):
    return FullTokenizer(None, True, str(corpus_dir / "sp.model"))


@pytest.fixture(scope="module")
def generated(corpus_dir, tokenizer, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("gen") / "train.tfrecord")
    summary = generate([str(corpus_dir / "corpus.txt")], [out], tokenizer, Options(max_seq_length=SEQ),
                       dupe_factor=4, random_seed=3)
    spec = {k: tf.io.FixedLenFeature([n], tf.float32 if d == "float32" else tf.int64)
            for k, (d, n) in pretraining_features(SEQ, PRED).items()}
    records, arrays = read_records(out, spec)
    return summary, records, arrays


def test_every_record_parses_with_the_original_feature_spec(generated):
    summary, records, arrays = generated
    _, original = read_records_from_bytes(records)
    assert len(records) == summary.stats.instances > 1000
    assert set(original) == set(ORIGINAL_SPEC)
    assert set(tf.train.Example.FromString(records[0]).features.feature) == set(ORIGINAL_SPEC) | {"token_boundary"}


def read_records_from_bytes(records):
    parsed = [tf.io.parse_single_example(r, ORIGINAL_SPEC) for r in records]
    return records, {k: np.stack([p[k].numpy() for p in parsed]) for k in ORIGINAL_SPEC}


def test_masked_fraction_ngram_lengths_and_replacements(generated, tokenizer):
    summary, _, a = generated
    real = a["input_mask"].sum()
    weights = a["masked_lm_weights"]
    assert abs(weights.sum() / real - 0.15) <= 0.01
    draws = summary.stats.ngram_draws
    total = sum(draws.values())
    for n, p in zip((1, 2, 3), (6 / 11, 3 / 11, 2 / 11)):
        assert abs(draws[n] / total - p) <= 0.03, (n, draws[n] / total)
    mask_id = tokenizer.vocab["[MASK]"]
    real_slots = weights > 0
    shown = np.take_along_axis(a["input_ids"], a["masked_lm_positions"], 1)[real_slots]
    labels = a["masked_lm_ids"][real_slots]
    masked, kept = (shown == mask_id).mean(), (shown == labels).mean()
    assert abs(masked - 0.8) <= 0.03
    assert abs(kept - 0.1) <= 0.03
    assert abs(1 - masked - kept - 0.1) <= 0.03


def test_contiguous_masked_word_runs(generated):
    """In the written records adjacent spans merge: runs of 1/2/3 masked words come out near 0.55/0.26/0.15."""
    _, _, a = generated
    runs = []
    for row in range(len(a["input_ids"])):
        masked = np.zeros(SEQ, bool)
        masked[a["masked_lm_positions"][row][a["masked_lm_weights"][row] > 0]] = True
        starts = np.flatnonzero(a["token_boundary"][row] * a["input_mask"][row])
        words = [masked[s:e].all() for s, e in zip(starts, list(starts[1:]) + [int(a["input_mask"][row].sum())])]
        run = 0
        for is_masked in words + [False]:
            if is_masked:
                run += 1
            elif run:
                runs.append(run)
                run = 0
    counts = np.bincount(runs) / len(runs)
    for n, expected in ((1, 0.55), (2, 0.26), (3, 0.15)):
        assert abs(counts[n] - expected) <= 0.04, (n, counts[:5])


def test_structure_of_every_record(generated, tokenizer):
    _, _, a = generated
    cls_id, sep_id = tokenizer.vocab["[CLS]"], tokenizer.vocab["[SEP]"]
    for row in range(len(a["input_ids"])):
        ids, mask, seg, bound = (a[k][row] for k in ("input_ids", "input_mask", "segment_ids", "token_boundary"))
        n = int(mask.sum())
        assert (mask[:n] == 1).all()
        assert (mask[n:] == 0).all()
        assert (ids[n:] == 0).all()
        assert (seg[n:] == 0).all()
        assert (bound[n:] == 0).all()
        first = int(np.flatnonzero(seg[:n] == 0)[-1])  # the first [SEP] closes segment A
        # [CLS] A [SEP] B [SEP] with A and B not empty. (Inside A and B a random replacement may be any piece,
        # [SEP] included, as in the original.)
        assert ids[0] == cls_id
        assert ids[first] == sep_id
        assert ids[n - 1] == sep_id
        assert 1 < first < n - 2
        assert (seg[:first + 1] == 0).all()
        assert (seg[first + 1:n] == 1).all()
        assert bound[0] == bound[first] == bound[n - 1] == 1
        weights = a["masked_lm_weights"][row]
        p = int(weights.sum())
        positions = a["masked_lm_positions"][row]
        assert (weights[:p] == 1).all()
        assert (weights[p:] == 0).all()
        assert (positions[p:] == 0).all()
        assert (a["masked_lm_ids"][row][p:] == 0).all()
        assert (np.diff(positions[:p]) > 0).all()  # sorted, no duplicates
        assert not set(positions[:p]) & {0, first, n - 1}  # [CLS] / [SEP] never masked
        assert p == min(PRED, max(1, round(n * 0.15)))
        assert a["next_sentence_labels"][row, 0] in (0, 1)


def test_whole_words_are_masked_together(generated):
    """A word's continuation piece (token_boundary 0) is masked only together with the piece before it, unless
    that one is [CLS] or [SEP] (truncation can start a segment inside a word)."""
    _, _, a = generated
    continuations = 0
    for row in range(len(a["input_ids"])):
        p = int(a["masked_lm_weights"][row].sum())
        masked = set(a["masked_lm_positions"][row][:p].tolist())
        n = int(a["input_mask"][row].sum())
        special = {0, int(np.flatnonzero(a["segment_ids"][row][:n] == 0)[-1])}
        for pos in masked:
            if a["token_boundary"][row][pos] == 0:
                continuations += 1
                assert pos - 1 in masked or pos - 1 in special, (row, pos)
    assert continuations > 100


def unique_documents(count=60, seed=0):
    """Documents whose token ids name their document and position, so segments can be traced back."""
    rng = random.Random(seed)
    docs = []
    for d in range(count):
        sentences = [[10_000 * (d + 1) + 100 * s + j for j in range(rng.randint(3, 12))]
                     for s in range(rng.randint(2, 6))]
        docs.append(sentences)
    return docs


def synthetic_vocab():
    return Vocabulary(cls_id=2, sep_id=3, mask_id=4, size=1_000_000, start_table=np.ones(1_000_000, np.uint8))


def segments(instance, vocab):
    tokens = instance.tokens
    first = tokens.index(vocab.sep_id)
    return tokens[1:first], tokens[first + 1:-1]


def test_sop_negatives_are_exactly_the_positive_segments_swapped():
    docs, vocab = unique_documents(), synthetic_vocab()
    opts = Options(max_seq_length=512, short_seq_prob=0.0, masked_lm_prob=0.0)
    labels = []
    for d in range(len(docs)):
        stats = instances.Stats()
        for instance in instances.create_instances_from_document(docs, d, opts, vocab, random.Random(d), stats):
            a, b = segments(instance, vocab)
            whole = [t for s in docs[d] for t in s]
            assert (b + a if instance.is_random_next else a + b) == whole
            assert a
            assert b
            labels.append(instance.is_random_next)
    assert 0.35 < np.mean(labels) < 0.65


def test_next_sentence_mode_takes_negatives_from_other_documents():
    docs, vocab = unique_documents(), synthetic_vocab()
    opts = Options(max_seq_length=512, short_seq_prob=0.0, masked_lm_prob=0.0, random_next_sentence=True)
    labels = []
    for d in range(len(docs)):
        for instance in instances.create_instances_from_document(docs, d, opts, vocab, random.Random(d),
                                                                        instances.Stats()):
            a, b = segments(instance, vocab)
            assert all(t // 10_000 == d + 1 for t in a)
            assert all((t // 10_000 == d + 1) != instance.is_random_next for t in b)
            labels.append(instance.is_random_next)
    assert 0.35 < np.mean(labels) < 0.65


def test_truncation_keeps_the_pair_within_the_limit_and_contiguous():
    rng = random.Random(0)
    for _ in range(200):
        a, b = list(range(rng.randint(1, 60))), list(range(100, 100 + rng.randint(1, 60)))
        limit = rng.randint(2, 80)
        ta, tb = instances.truncate_seq_pair(a, b, limit, rng)
        assert len(ta) + len(tb) <= limit
        assert ta
        assert tb
        assert " ".join(map(str, ta)) in " ".join(map(str, a))
        assert " ".join(map(str, tb)) in " ".join(map(str, b))
        if len(a) + len(b) > limit:
            assert len(ta) + len(tb) == limit


def test_permutation_adds_permuted_predictions():
    docs, vocab = unique_documents(), synthetic_vocab()
    opts = Options(max_seq_length=64, short_seq_prob=0.0, max_predictions_per_seq=6, do_permutation=True)
    moved = changed = 0
    for d in range(len(docs)):
        for inst in instances.create_instances_from_document(docs, d, opts, vocab, random.Random(d),
                                                                    instances.Stats()):
            positions, labels = inst.masked_lm_positions, inst.masked_lm_ids
            assert positions == sorted(set(positions))
            assert len(positions) <= 2 * 6
            label_set = set(labels)
            for pos, label in zip(positions, labels):
                shown = inst.tokens[pos]
                if shown not in (vocab.mask_id, label):
                    changed += 1
                    moved += shown in label_set
    assert changed > 100
    assert moved / changed > 0.8  # mostly other predicted tokens: the permuted ones
    arrays = _instance_arrays([inst], opts)
    assert arrays["masked_lm_positions"].shape == (1, 12)


def test_same_seed_same_bytes_for_any_workers_and_buckets(corpus_dir, tokenizer, tmp_path):
    corpus = [str(corpus_dir / "corpus.txt")]
    opts = Options(max_seq_length=64, max_predictions_per_seq=10)
    outputs = {}
    for name, kwargs in {"one": {}, "two": {"num_workers": 2}, "buckets": {"bucket_bytes": 20_000},
                         "seed": {"random_seed": 4}}.items():
        path = str(tmp_path / f"{name}.tfrecord")
        generate(corpus, [path], tokenizer, opts, dupe_factor=2, random_seed=kwargs.pop("random_seed", 3), **kwargs)
        outputs[name] = open(path, "rb").read()
    assert outputs["one"] == outputs["two"] == outputs["buckets"]
    assert outputs["seed"] != outputs["one"]
    split = [str(tmp_path / f"part{i}.tfrecord") for i in range(3)]
    generate(corpus, split, tokenizer, opts, dupe_factor=2, random_seed=3, num_workers=2, bucket_bytes=20_000)
    parts = [[r.numpy() for r in tf.data.TFRecordDataset(p)] for p in split]
    whole = [r.numpy() for r in tf.data.TFRecordDataset(str(tmp_path / "one.tfrecord"))]
    assert [parts[i % 3][i // 3] for i in range(len(whole))] == whole  # round-robin over the outputs
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["one.tfrecord", "two.tfrecord", "buckets.tfrecord", "seed.tfrecord"] + [f"part{i}.tfrecord" for i in range(3)])


def test_ngram_length_near_the_end_is_drawn_from_all_lengths():
    """The original draws n from every length and lets a span starting 2 word groups from the end cover those 2
    (P = p(2) + p(3) = 5/11); renormalising over the lengths that fit would give 3/9 = 1/3."""
    cumulative = Options().ngram_cumulative()
    rng = random.Random(3)
    first_at_0, two_word = 0, 0
    for _ in range(20000):
        chosen = instances._select_ngrams([0, 1, 2], bytearray(2), 10, cumulative, 3, rng)
        if chosen[0][0] == 0:
            first_at_0 += 1
            two_word += chosen[0][1] == 2
    assert abs(two_word / first_at_0 - 5 / 11) < 0.02, two_word / first_at_0


@pytest.mark.parametrize("nsp", [False, True], ids=["sop", "nsp"])
def test_several_files_give_the_same_bytes_for_any_workers_order_and_buckets(corpus_dir, tokenizer, tmp_path, nsp):
    files = write_corpus_files(corpus_dir, tmp_path)
    opts = Options(max_seq_length=64, max_predictions_per_seq=10, random_next_sentence=nsp)
    outputs, summaries = {}, {}
    for name, inputs, kwargs in (("one", files, {}), ("two", files, {"num_workers": 2}),
                                 ("sorted_three", sorted(files), {"num_workers": 3, "bucket_bytes": 20_000})):
        path = str(tmp_path / f"{name}.tfrecord")
        summaries[name] = generate(inputs, [path], tokenizer, opts, dupe_factor=2, random_seed=3, **kwargs)
        outputs[name] = open(path, "rb").read()
    assert outputs["one"] == outputs["two"] == outputs["sorted_three"]
    assert len(outputs["one"]) > 10_000
    # documents end at the end of a file: 120 + 120 + (60 + the one-line document)
    assert summaries["one"].documents == summaries["two"].documents == 301
    assert summaries["one"].stats.instances == summaries["two"].stats.instances > 300
