"""albert/tasks/ner/entities.py against seqeval (requirements-dev.txt), the reference users compare NER scores with: on
random sentences of IOB1, IOB2 and IOBES tags, malformed ones included (an I- after O, an E- without B-), in
seqeval's default (conlleval) mode and its strict mode, micro and per type; and on the real CoNLL-2003 dev tags."""

import os
import random

import pytest
from seqeval import metrics
from seqeval.scheme import IOB1, IOB2, IOBES

from albert.ground.errors import AlbertError
from albert.tasks.ner.entities import check_tag, entities, score
from tests.helpers import shared_directory

SEQEVAL_SCHEMES = {"IOB1": IOB1, "IOB2": IOB2, "IOBES": IOBES}
PREFIXES = {"IOB1": "BI", "IOB2": "BI", "IOBES": "BIES"}


def random_sentences(rng, scheme, lengths):
    tags = ["O"] * 4 + [f"{p}-{t}" for p in PREFIXES[scheme] for t in ("PER", "LOC", "MISC")]
    return [[rng.choice(tags) for _ in range(length)] for length in lengths]


def reference(gold, predicted, strict, scheme):
    arguments = {"mode": "strict", "scheme": SEQEVAL_SCHEMES[scheme]} if strict else {}
    report = metrics.classification_report(gold, predicted, output_dict=True, zero_division=0, **arguments)
    micro = [metrics.precision_score(gold, predicted, zero_division=0, **arguments),
             metrics.recall_score(gold, predicted, zero_division=0, **arguments),
             metrics.f1_score(gold, predicted, zero_division=0, **arguments)]
    return micro, {kind: values for kind, values in report.items() if "avg" not in kind}


@pytest.mark.parametrize("scheme", ["IOB1", "IOB2", "IOBES"])
@pytest.mark.parametrize("strict", [False, True], ids=["conlleval", "strict"])
def test_scores_equal_seqeval_on_random_and_malformed_tags(scheme, strict):
    rng = random.Random(f"{scheme}{strict}")
    lengths = [rng.randint(1, 12) for _ in range(300)]
    gold, predicted = random_sentences(rng, scheme, lengths), random_sentences(rng, scheme, lengths)
    predicted[:100] = [list(tags) for tags in gold[:100]]  # many entities right, so the scores are not all near 0
    ours = score(gold, predicted, strict, scheme)
    micro, types = reference(gold, predicted, strict, scheme)
    assert [ours["micro"].precision, ours["micro"].recall, ours["micro"].f1] == pytest.approx(micro, abs=1e-12)
    assert {kind for kind, s in ours["types"].items() if s.support} == {k for k, v in types.items() if v["support"]}
    for kind, values in types.items():
        mine = ours["types"][kind]
        assert [mine.precision, mine.recall, mine.f1, mine.support] == pytest.approx(
            [values["precision"], values["recall"], values["f1-score"], values["support"]], abs=1e-12), kind


def test_conlleval_reads_a_malformed_i_as_an_entity_and_strict_does_not():
    tags = ["O", "I-PER", "I-PER", "O", "B-LOC", "I-MISC", "E-LOC"]
    assert entities(tags) == [("PER", 1, 2), ("LOC", 4, 4), ("MISC", 5, 5), ("LOC", 6, 6)]
    assert entities(tags[:6], strict=True, scheme="IOB2") == [("LOC", 4, 4)]
    assert entities(["B-PER", "I-PER", "E-PER", "S-LOC", "I-LOC"], strict=True, scheme="IOBES") == [
        ("PER", 0, 2), ("LOC", 3, 3)]


def test_real_conll_dev_tags_score_one_against_themselves_and_equal_seqeval_against_a_shift():
    sentences, tags = [], []
    with open(os.path.join(shared_directory(), "conll2003", "valid.txt"), encoding="utf-8") as f:
        for line in f.read().split("\n"):
            if not line.strip() or line.startswith("-DOCSTART-"):
                if tags:
                    sentences.append(tags)
                tags = []
            else:
                tags.append(line.split()[-1])
    assert len(sentences) == 3250
    same = score(sentences, sentences)
    assert same["micro"].f1 == 1.0 and same["micro"].support == 1842 + 1341 + 1837 + 922
    assert {kind: s.support for kind, s in same["types"].items()} == {"PER": 1842, "ORG": 1341, "LOC": 1837,
                                                                      "MISC": 922}
    shifted = [tags[1:] + ["O"] for tags in sentences]  # every entity off by one: malformed I- tags appear
    ours = score(sentences, shifted)
    micro, _ = reference(sentences, shifted, False, "IOB2")
    assert [ours["micro"].precision, ours["micro"].recall, ours["micro"].f1] == pytest.approx(micro, abs=1e-12)
    assert ours["accuracy"] == pytest.approx(sum(a == b for g, p in zip(sentences, shifted) for a, b in zip(g, p))
                                             / sum(map(len, sentences)))


def test_a_tag_outside_the_scheme_is_one_line():
    check_tag("B-PER", "IOB2", "train.txt:3")
    with pytest.raises(AlbertError) as e:
        check_tag("S-PER", "IOB2", "train.txt:3")
    assert str(e.value) == "train.txt:3: tag 'S-PER' is not an IOB2 tag; pass --tag_scheme=IOBES for E- and S- tags"
    with pytest.raises(AlbertError) as e:
        check_tag("PER", "IOB2", "train.txt:4")
    assert str(e.value) == "train.txt:4: tag 'PER' is not O or B-/I-/E-/S- followed by a type without spaces (e.g. B-PER)"
