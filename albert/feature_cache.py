"""Feature caches (GLUE, RACE): a TFRecord of features is reused only while everything it was made from is the same.

The key, written as `<record>.json` beside the record, holds a SHA-256 of the examples as read (texts, labels,
ids: so an edited data file, a flipped label or another split or level filter is seen), a SHA-256 of the tokenizer
(the SentencePiece model proto, or the vocabulary, and its lower-casing) and every feature setting. Anything else
rebuilds the record (written under a temporary name, then renamed; the key last).
"""

import dataclasses
import hashlib
import json
import os


def tokenizer_digest(tokenizer) -> str:
    digest = hashlib.sha256()
    sp_model = getattr(tokenizer, "sp_model", None)
    if sp_model is not None:
        digest.update(sp_model.serialized_model_proto())
    else:
        digest.update(json.dumps(sorted(tokenizer.vocab.items())).encode("utf-8"))
    digest.update(repr(getattr(tokenizer, "do_lower_case", None)).encode())
    return digest.hexdigest()


def cache_key(examples: list, tokenizer, **settings) -> dict:
    """The key of a feature record: settings (JSON values), the examples' count and digest, the tokenizer's."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(repr(dataclasses.astuple(example)).encode("utf-8"))
    return {**settings, "examples": len(examples), "examples_sha256": digest.hexdigest(),
            "tokenizer_sha256": tokenizer_digest(tokenizer)}


def is_fresh(record_path: str, key: dict) -> bool:
    """True when the record exists and was built from exactly `key`."""
    if not (os.path.exists(record_path) and os.path.exists(record_path + ".json")):
        return False
    try:
        with open(record_path + ".json", encoding="utf-8") as f:
            return json.load(f) == key
    except (OSError, ValueError):
        return False


def build(record_path: str, key: dict, write) -> bool:
    """Reuse the record when it was built from `key`; else drop the old key, `write(record_path)` and stamp the
    new key last (a kill in between leaves no key, so the next run rebuilds). Returns True when it rebuilt."""
    if is_fresh(record_path, key):
        return False
    if os.path.exists(record_path + ".json"):
        os.remove(record_path + ".json")
    write(record_path)
    write_key(record_path, key)
    return True


def write_key(record_path: str, key: dict):
    tmp = f"{record_path}.json.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(key, f, indent=1, sort_keys=True)
    os.replace(tmp, record_path + ".json")
