"""Entity scores of tagged sentences: the entities a tag sequence holds and their precision / recall / F1, micro and
per type, with token accuracy -- what run_ner.py reports.

Two readings of a sequence:
    conlleval (default)  the rules of the CoNLL shared task's conlleval script, the same for IOB1, IOB2 and IOBES:
                         an entity starts at B- or S-, at an I- or E- after O or after another type (a malformed
                         `O I-PER` is an entity), and ends before the next start, an O or another type.
    strict               only the entities the scheme's grammar allows (seqeval's strict mode): IOB2 `B-X (I-X)*`;
                         IOBES `S-X`, `B-X (I-X)* E-X`; IOB1 a run of `I-X`, or a `B-X (I-X)*` right after a tag
                         of type X; any other run of tags is no entity.
An entity is (type, first position, last position); sentences never share one.
"""

import collections
import dataclasses
import re

from albert.ground.errors import AlbertError, shown

SCHEMES = ("IOB1", "IOB2", "IOBES")
PREFIXES = {"IOB1": "BI", "IOB2": "BI", "IOBES": "BIES"}
_TAG = re.compile(r"O|([BIES])-(\S+)")  # a type holds no whitespace: tags are written back as CoNLL columns


def split_tag(tag: str) -> tuple:
    """(prefix, type) of a tag: ("O", "") or e.g. ("B", "PER")."""
    match = _TAG.fullmatch(tag) if isinstance(tag, str) else None
    if match is None:
        raise ValueError(tag)
    return ("O", "") if tag == "O" else (match.group(1), match.group(2))


def check_tag(tag: str, scheme: str, where: str):
    """A tag of `scheme`, or one line naming `where` (file:line) and the fix."""
    try:
        prefix, _ = split_tag(tag)
    except ValueError:
        raise AlbertError(f"{where}: tag {shown(tag)} is not O or B-/I-/E-/S- followed by a type without spaces "
                          "(e.g. B-PER)") from None
    if prefix != "O" and prefix not in PREFIXES[scheme]:
        raise AlbertError(f"{where}: tag {shown(tag)} is not an {scheme} tag; pass --tag_scheme=IOBES for E- and S- "
                          "tags")


def _conlleval_entities(tags) -> list:
    found, start, previous, previous_type = [], 0, "O", ""
    for i, tag in enumerate([*tags, "O"]):
        prefix, kind = split_tag(tag)
        kind = kind or "_"
        ends = (previous in "ES" or (previous in "BI" and prefix in "BSO")
                or (previous != "O" and previous_type != kind))
        starts = (prefix in "BS" or (prefix in "EI" and previous in "ESO")
                  or (prefix != "O" and previous_type != kind))
        if ends and previous != "O":
            found.append((previous_type, start, i - 1))
        if starts:
            start = i
        previous, previous_type = prefix, kind
    return found


# Strict mode's grammar, per scheme: (previous tag's prefixes, this tag's prefixes, types: "same" / "other" / "any").
# An entity opens at a START, grows while INSIDE holds, and counts only if the tag after it is an END of it.
_ANY = "BIESO"
_GRAMMAR = {
    "IOB2": {"start": [(_ANY, "B", "any")],
             "inside": [("BI", "I", "same")],
             "end": [("BI", "O", "any"), ("BI", "I", "other"), ("BI", "B", "any")]},
    "IOB1": {"start": [("O", "I", "any"), ("I", "I", "other"), ("B", "I", "any"), ("BI", "B", "same")],
             "inside": [("BI", "I", "same")],
             "end": [("BI", "O", "any"), ("BI", "I", "other"), ("I", "B", "any"), ("B", "B", "same")]},
    "IOBES": {"start": [(_ANY, "BS", "any")],
              "inside": [("BI", "IE", "same")],
              "end": [("SE", _ANY, "any")]},
}


def _matches(rules, previous: tuple, current: tuple) -> bool:
    for before, now, types in rules:
        if previous[0] in before and current[0] in now and (
                types == "any" or (types == "same") == (previous[1] == current[1])):
            return True
    return False


def _strict_entities(tags, scheme: str) -> list:
    grammar = _GRAMMAR[scheme]
    parts = [(prefix, kind or "_") for prefix, kind in map(split_tag, tags)] + [("O", "_")]
    found, i = [], 0
    while i < len(parts):
        previous = parts[i - 1] if i else ("O", "_")
        if not _matches(grammar["start"], previous, parts[i]):
            i += 1
            continue
        end = i + 1
        while _matches(grammar["inside"], parts[end - 1], parts[end]):
            end += 1
        if _matches(grammar["end"], parts[end - 1], parts[end]):
            found.append((parts[i][1], i, end - 1))
        i = end
    return found


def entities(tags, strict: bool = False, scheme: str = "IOB2") -> list:
    """The entities (type, first, last) of one sentence's tags."""
    return _strict_entities(tags, scheme) if strict else _conlleval_entities(tags)


@dataclasses.dataclass(frozen=True)
class Scores:
    precision: float
    recall: float
    f1: float
    support: int  # gold entities


def _scores(correct: int, predicted: int, gold: int) -> Scores:
    precision = correct / predicted if predicted else 0.0
    recall = correct / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(precision, recall, f1, gold)


def score(gold: list, predicted: list, strict: bool = False, scheme: str = "IOB2") -> dict:
    """{"micro": Scores, "types": {type: Scores}, "accuracy": token accuracy} of sentences of gold and predicted
    tags (lists of lists, one tag per word)."""
    correct, guessed, wanted = collections.Counter(), collections.Counter(), collections.Counter()
    right = total = 0
    for gold_tags, predicted_tags in zip(gold, predicted, strict=True):
        if len(gold_tags) != len(predicted_tags):
            raise ValueError(f"{len(predicted_tags)} predicted tags for {len(gold_tags)} words")
        right += sum(a == b for a, b in zip(gold_tags, predicted_tags))
        total += len(gold_tags)
        true, guess = set(entities(gold_tags, strict, scheme)), set(entities(predicted_tags, strict, scheme))
        for kind, _, _ in true:
            wanted[kind] += 1
        for kind, _, _ in guess:
            guessed[kind] += 1
        for kind, _, _ in true & guess:
            correct[kind] += 1
    types = {kind: _scores(correct[kind], guessed[kind], wanted[kind]) for kind in sorted(set(wanted) | set(guessed))}
    micro = _scores(sum(correct.values()), sum(guessed.values()), sum(wanted.values()))
    return {"micro": micro, "types": types, "accuracy": right / total if total else 0.0}
