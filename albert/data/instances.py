"""From tokenized documents to masked-LM + sentence-order instances: the original algorithm (spec §6).

A document is a list of sentences, a sentence a list of token ids. Every random choice comes from the `rng` handed
in (a `random.Random`), which the driver derives from (seed, pass, document): the output does not depend on the
order in which documents are processed, or by how many workers.

Differences from the original, none of which changes a distribution:
- the n-gram length is drawn from `rng` (the original used numpy's global, unseeded generator);
- candidate word groups are visited in a lazily shuffled order (a Fisher-Yates prefix), which stops as soon as
  enough tokens are masked -- the same order distribution as shuffling the whole list first;
- truncation decides how many tokens go from each end first and then slices, instead of popping one by one.
"""

import bisect
import collections
import dataclasses
import random

import numpy as np

from albert.ground.settings_flags import Settings, at_least, probability, setting

# Characters that make a SentencePiece piece a word start on their own (spec §6.3; no ' < = >).
_PUNCTUATION = set('!"#$%&()*+,-./:;?@[\\]^_`{|}~')
_WORD_CHARS = set("abcdefghijklmnopqrstuvwxyz") | _PUNCTUATION


def is_start_piece_sp(piece: str) -> bool:
    """The original's SentencePiece word-start rule."""
    if piece.startswith("\u2581") or piece.startswith("<") or piece in _PUNCTUATION:
        return True
    return any(c not in _WORD_CHARS for c in piece.lower())


def is_start_piece_wordpiece(piece: str) -> bool:
    return not piece.startswith("##")


@dataclasses.dataclass(frozen=True)
class Vocabulary:
    """What masking needs to know of the vocabulary, as ids."""

    cls_id: int
    sep_id: int
    mask_id: int
    size: int
    start_table: np.ndarray  # start_table[id] == 1 for word-start pieces (uint8)

    @classmethod
    def from_tokenizer(cls, tokenizer) -> "Vocabulary":
        rule = is_start_piece_sp if tokenizer.sp_model is not None else is_start_piece_wordpiece
        pieces = tokenizer.convert_ids_to_tokens(range(len(tokenizer.vocab)))
        ids = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]", "[MASK]"])
        return cls(ids[0], ids[1], ids[2], len(pieces), np.array([rule(p) for p in pieces], np.uint8))


@dataclasses.dataclass(frozen=True)
class Options(Settings):
    """How instances are made (create_pretraining_data.py's flags of the same names)."""

    max_seq_length: int = setting(512, "Maximum tokens per instance, [CLS] and [SEP]s included.",
                                  check=at_least(5, "[CLS] A [SEP] B [SEP] with a token in A and B"), group="instances")
    short_seq_prob: float = setting(0.1, "Probability of a shorter random target length (per document pass).",
                                    check=probability, group="instances")
    masked_lm_prob: float = setting(0.15, "Fraction of tokens to mask.", check=probability, group="instances")
    max_predictions_per_seq: int = setting(20, "Maximum masked positions per instance.", check=at_least(1),
                                           group="instances")
    do_whole_word_mask: bool = setting(True, "Mask whole words (all pieces of a word together).", group="instances")
    ngram: int = setting(3, "Maximum n-gram length (in words with whole-word masking).", check=at_least(1),
                         group="instances")
    favor_shorter_ngram: bool = setting(True, "n-gram length probabilities proportional to 1/n (else reversed).",
                                        group="instances")
    random_next_sentence: bool = setting(False, "BERT next-sentence negatives instead of sentence-order swaps.",
                                         group="instances")
    do_permutation: bool = setting(False, "Also add permuted-token predictions (doubles the masked-LM arrays).",
                                   group="instances")

    def ngram_cumulative(self) -> list:
        """The cumulative distribution of the n-gram length n over 1..ngram: p(n) proportional to 1/n (reversed
        when not favouring shorter n-grams). As the original, n is drawn from all lengths wherever the span
        starts; near the end of the sequence a long n simply covers the word groups that are left."""
        weights = [1.0 / n for n in range(1, self.ngram + 1)]
        if not self.favor_shorter_ngram:
            weights = weights[::-1]
        total, acc, table = sum(weights), 0.0, []
        for w in weights:
            acc += w / total
            table.append(acc)
        return table


@dataclasses.dataclass
class Instance:
    tokens: list
    segment_ids: list
    token_boundary: list
    masked_lm_positions: list
    masked_lm_ids: list
    is_random_next: bool


@dataclasses.dataclass
class Stats:
    """Counters for the summary (and for the tests of the masking distribution)."""

    instances: int = 0
    tokens: int = 0
    masked: int = 0
    random_next: int = 0
    ngram_draws: collections.Counter = dataclasses.field(default_factory=collections.Counter)  # n -> times drawn
    replaced_mask: int = 0
    replaced_keep: int = 0
    replaced_random: int = 0

    def add(self, other: "Stats"):
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))


def truncate_seq_pair(tokens_a: list, tokens_b: list, max_num_tokens: int, rng: random.Random):
    """Cut the longer list (B on ties) from the front or the back at random until both fit; returns new lists."""
    a_front = a_back = b_front = b_back = 0
    len_a, len_b = len(tokens_a), len(tokens_b)
    while len_a + len_b > max_num_tokens:
        front = rng.random() < 0.5
        if len_a > len_b:
            len_a -= 1
            a_front, a_back = a_front + front, a_back + (not front)
        else:
            len_b -= 1
            b_front, b_back = b_front + front, b_back + (not front)
    return (tokens_a[a_front:len(tokens_a) - a_back], tokens_b[b_front:len(tokens_b) - b_back])


def create_instances_from_document(documents: list, doc_index: int, opts: Options, vocab: Vocabulary,
                                   rng: random.Random, stats: Stats, cumulative=None) -> list:
    document = documents[doc_index]
    cumulative = cumulative or opts.ngram_cumulative()
    max_num_tokens = opts.max_seq_length - 3
    target_length = max_num_tokens
    if rng.random() < opts.short_seq_prob:
        target_length = rng.randint(2, max_num_tokens)
    instances, chunk, chunk_length, i = [], [], 0, 0
    while i < len(document):
        chunk.append(document[i])
        chunk_length += len(document[i])
        if i == len(document) - 1 or chunk_length >= target_length:
            a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
            tokens_a = [t for sentence in chunk[:a_end] for t in sentence]
            if len(chunk) == 1 or (opts.random_next_sentence and rng.random() < 0.5):
                # A segment B from another document (with a single sentence there is nothing to swap).
                is_random_next = True
                target_b_length = target_length - len(tokens_a)
                for _ in range(10):
                    other = rng.randint(0, len(documents) - 1)
                    if other != doc_index:
                        break
                random_document = documents[other]
                tokens_b = []
                for j in range(rng.randint(0, len(random_document) - 1), len(random_document)):
                    tokens_b.extend(random_document[j])
                    if len(tokens_b) >= target_b_length:
                        break
                i -= len(chunk) - a_end  # the unused sentences are used again
            else:
                tokens_b = [t for sentence in chunk[a_end:] for t in sentence]
                is_random_next = not opts.random_next_sentence and rng.random() < 0.5
                if is_random_next:  # sentence order: swap the two segments
                    tokens_a, tokens_b = tokens_b, tokens_a
            tokens_a, tokens_b = truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)
            tokens = [vocab.cls_id, *tokens_a, vocab.sep_id, *tokens_b, vocab.sep_id]
            segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
            instances.append(create_masked_lm_predictions(tokens, segment_ids, is_random_next, opts, vocab, rng,
                                                          stats, cumulative))
            chunk, chunk_length = [], 0
        i += 1
    return instances


def _select_ngrams(bounds, covered, num_to_predict, cumulative, ngram, rng, stats=None):
    """Visit word groups in random order; at each, draw an n-gram length n and take the n groups from there,
    shrinking n while they would overshoot `num_to_predict`, skipping spans that overlap a chosen one.

    Group g holds candidate positions [bounds[g], bounds[g+1]) (indices into the candidate position list).
    `covered` is a bytearray over groups, updated in place. Returns the chosen (first group, n) spans.
    """
    groups = len(bounds) - 1
    order = list(range(groups))
    chosen, count = [], 0
    for k in range(groups):
        if count >= num_to_predict:
            break
        j = k + int(rng.random() * (groups - k))  # a Fisher-Yates step: order[:k+1] is a uniform random prefix
        order[k], order[j] = order[j], order[k]
        g = order[k]
        n = min(bisect.bisect_right(cumulative, rng.random()) + 1, ngram)
        if stats is not None:
            stats.ngram_draws[n] += 1
        n = min(n, groups - g)  # the original's slice cand[g:g+n] holds fewer groups near the end
        while n > 1 and count + bounds[g + n] - bounds[g] > num_to_predict:
            n -= 1
        size = bounds[g + n] - bounds[g]
        if count + size > num_to_predict or 1 in covered[g:g + n]:
            continue
        covered[g:g + n] = b"\x01" * n
        chosen.append((g, n))
        count += size
    return chosen


def create_masked_lm_predictions(tokens, segment_ids, is_random_next, opts, vocab, rng, stats,
                                 cumulative=None) -> Instance:
    array = np.asarray(tokens)
    special = (array == vocab.cls_id) | (array == vocab.sep_id)  # never masked
    start = vocab.start_table[array]
    boundary = (start | special).tolist()
    positions = np.flatnonzero(~special)
    if opts.do_whole_word_mask:  # a group starts at a word-start piece (or at the first candidate)
        new_group = start[positions].astype(bool)
        new_group[0] = True
        bounds = np.flatnonzero(new_group).tolist() + [len(positions)]
    else:
        bounds = list(range(len(positions) + 1))
    positions = positions.tolist()
    output = list(tokens)
    predictions = []
    if opts.masked_lm_prob > 0:
        num_to_predict = min(opts.max_predictions_per_seq, max(1, int(round(len(tokens) * opts.masked_lm_prob))))
        cumulative = cumulative or opts.ngram_cumulative()
        covered = bytearray(len(bounds) - 1)
        for g, n in _select_ngrams(bounds, covered, num_to_predict, cumulative, opts.ngram, rng, stats):
            for p in positions[bounds[g]:bounds[g + n]]:  # 80% [MASK], 10% unchanged, 10% random: per token
                if rng.random() < 0.8:
                    output[p] = vocab.mask_id
                    stats.replaced_mask += 1
                elif rng.random() < 0.5:
                    stats.replaced_keep += 1
                else:
                    output[p] = int(rng.random() * vocab.size)
                    stats.replaced_random += 1
                predictions.append((p, tokens[p]))
        if opts.do_permutation:
            chosen = _select_ngrams(bounds, covered, num_to_predict, cumulative, opts.ngram, rng)
            permuted = sorted(p for g, n in chosen for p in positions[bounds[g]:bounds[g + n]])
            sources = list(permuted)
            rng.shuffle(sources)
            for p, source in zip(permuted, sources):
                output[p] = tokens[source]
                predictions.append((p, tokens[p]))
    predictions.sort()
    stats.instances += 1
    stats.tokens += len(tokens)
    stats.masked += len(predictions)
    stats.random_next += is_random_next
    return Instance(output, segment_ids, boundary, [p for p, _ in predictions], [t for _, t in predictions],
                    is_random_next)
