"""Feature caches (GLUE, RACE): a TFRecord of features is reused only while everything it was made from is the same.

The key, written as `<record>.json` beside the record, holds a SHA-256 of the examples as read (texts, labels,
ids: so an edited data file, a flipped label or another split or level filter is seen), a SHA-256 of the tokenizer
(the SentencePiece model proto, or the vocabulary, and its lower-casing), every feature setting and the record's
size in bytes (a truncated or replaced record is seen). Anything else rebuilds the record (written under a
temporary name, then renamed; the key last).
"""

import dataclasses
import hashlib
import json
import os

from albert.ground.atomic import write_text
from albert.ground.errors import AlbertError


def tokenizer_digest(tokenizer) -> str:
    digest = hashlib.sha256()
    sp_model = tokenizer if hasattr(tokenizer, "serialized_model_proto") else getattr(tokenizer, "sp_model", None)
    if sp_model is not None:
        digest.update(sp_model.serialized_model_proto())
    else:
        digest.update(json.dumps(sorted(tokenizer.vocab.items())).encode("utf-8"))
    digest.update(repr(getattr(tokenizer, "do_lower_case", None)).encode())
    return digest.hexdigest()


def examples_digest(examples: list) -> str:
    digest = hashlib.sha256()
    for example in examples:
        digest.update(repr(dataclasses.astuple(example)).encode("utf-8"))
    return digest.hexdigest()


def cache_key(examples: list, tokenizer, **settings) -> dict:
    """The key of a feature record: settings (JSON values), the examples' count and digest, the tokenizer's."""
    return {**settings, "examples": len(examples), "examples_sha256": examples_digest(examples),
            "tokenizer_sha256": tokenizer_digest(tokenizer)}


def stale_reason(record_path: str, stored: dict | None, key: dict) -> str | None:
    """Why a record whose stored key is `stored` cannot be reused for `key` (None: it can)."""
    if stored is None or not os.path.exists(record_path):
        return "no complete record yet"
    stored = dict(stored)
    if stored.pop("record_bytes", None) != os.path.getsize(record_path):
        return "the record is not the one its key describes (truncated or replaced)"
    changed = sorted(k for k in set(stored) | set(key) if stored.get(k) != key.get(k))
    if changed:
        what = [k.replace("_sha256", "") for k in changed]
        return f"built from other {', '.join(what)}"
    return None


def is_key(stored) -> bool:
    """Whether `stored` (a `<record>.json` as read) is a key this module wrote (`cache_key`'s digests in it)."""
    return isinstance(stored, dict) and {"examples_sha256", "tokenizer_sha256", "record_bytes"} <= set(stored)


def read_key(record_path: str) -> dict | None:
    try:
        with open(record_path + ".json", encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def refuse_rebuild(record_path: str, reason: str, resumed_run: str | None):
    """A resumed run's checkpoints were trained on the training record in its own directory (`resumed_run`): a
    record there made from other data or flags is refused, not rebuilt (the run would be refused after it, at its
    saved data position, with the directory already changed)."""
    if resumed_run and os.path.exists(record_path) and \
            os.path.dirname(os.path.abspath(record_path)) == os.path.abspath(resumed_run):
        raise AlbertError(f"{record_path}: {reason}, and the checkpoints in {resumed_run} were trained on it; rerun "
                          "with the data and flags they were trained with, or use another --output_dir")


def build(record_path: str, key: dict, write, resumed_run: str | None = None) -> bool:
    """Reuse the record when it was built from `key`; else (refuse_rebuild unless) mark the path as this command's
    (the key without the record's size: a kill while writing leaves a key that matches nothing, so the next run
    rebuilds), `write(record_path)` and stamp the whole key last. A record or a `<record>.json` there that this
    module did not write (no key of its own beside it) is refused in one line, never written over.
    Returns True when it rebuilt."""
    stored = read_key(record_path)
    reason = stale_reason(record_path, stored, key)
    if reason is None:
        return False
    refuse_rebuild(record_path, reason, resumed_run)
    if not is_key(stored):
        if os.path.exists(record_path + ".json"):
            raise AlbertError(f"{record_path}.json: not a feature key of this project, and the features' key would "
                              "replace it; move it, or write the features elsewhere (--cached_dir, --output_dir)")
        if os.path.exists(record_path):
            raise AlbertError(f"{record_path}: a file this project did not write as features (no key "
                              f"{os.path.basename(record_path)}.json beside it) is where they would go; move it, or "
                              "write the features elsewhere")
    write_key(record_path, dict(key, record_bytes=None))
    write(record_path)
    write_key(record_path, dict(key, record_bytes=os.path.getsize(record_path)))
    return True


def write_key(record_path: str, key: dict):
    write_text(record_path + ".json", json.dumps(key, indent=1, sort_keys=True))
