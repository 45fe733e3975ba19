"""BERT-style WordPiece tokenization, used by the Chinese ALBERT models (vocab_chinese.txt).

BasicTokenizer: drop control characters, normalise whitespace, put spaces around CJK characters, split on
whitespace, lower-case and strip accents (NFD, drop Mn) when asked, split punctuation off. WordpieceTokenizer:
greedy longest-match-first against the vocabulary with `##` continuation pieces, `[UNK]` for a word that cannot be
covered or is longer than 200 characters.
"""

import os
import unicodedata

from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote


def load_vocab(path: str) -> dict[str, int]:
    """One piece per line (the first whitespace-separated field, so SentencePiece `.vocab` files load too)."""
    if is_remote(path):
        import tensorflow as tf

        exists, opener = tf.io.gfile.exists, lambda p: tf.io.gfile.GFile(p, "rb")
    else:
        exists, opener = os.path.isfile, lambda p: open(p, "rb")
    if not exists(path):
        raise AlbertError(f"{path}: vocabulary file not found; pass --vocab_file of the model")
    vocab = {}
    with opener(path) as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise AlbertError(f"{path}:{lineno}: invalid UTF-8 in the vocabulary file") from None
            fields = line.strip().split()
            if fields:
                vocab.setdefault(fields[0], len(vocab))
    if not vocab:
        raise AlbertError(f"{path}: the vocabulary file is empty")
    return vocab


def _is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _is_control(ch):
    return ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf")


def _is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF
            or 0x2F800 <= cp <= 0x2FA1F)


class BasicTokenizer:
    def __init__(self, do_lower_case: bool = True):
        self.do_lower_case = do_lower_case

    def tokenize(self, text: str) -> list[str]:
        chars = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or _is_control(ch):
                continue
            if _is_cjk(cp):
                chars.extend((" ", ch, " "))
            else:
                chars.append(" " if _is_whitespace(ch) else ch)
        tokens = []
        for word in "".join(chars).split():
            if self.do_lower_case:
                word = unicodedata.normalize("NFD", word.lower())
                word = "".join(ch for ch in word if unicodedata.category(ch) != "Mn")
            tokens.extend(self._split_punctuation(word))
        return tokens

    @staticmethod
    def _split_punctuation(word):
        pieces, current = [], []
        for ch in word:
            if _is_punctuation(ch):
                if current:
                    pieces.append("".join(current))
                    current = []
                pieces.append(ch)
            else:
                current.append(ch)
        if current:
            pieces.append("".join(current))
        return pieces


class WordpieceTokenizer:
    def __init__(self, vocab: dict[str, int], unk_token: str = "[UNK]", max_input_chars_per_word: int = 200):
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word

    def tokenize(self, word: str) -> list[str]:
        if len(word) > self.max_input_chars_per_word:
            return [self.unk_token]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            if end == start:
                return [self.unk_token]
            pieces.append(piece)
            start = end
        return pieces
