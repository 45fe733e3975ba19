"""ALBERT tokenization: the original's text normalisation and SentencePiece rules, and the WordPiece mode.

- `preprocess_text`: collapse whitespace, NFKD, drop combining marks (accents), optionally lower-case -- exactly the
  original's normalisation (it does NOT rewrite `` and '' as XLNet's does).
- `encode_pieces`: SentencePiece pieces with the original's digit-comma rule in its intended form: a piece such as
  `2,` is re-encoded as `2` + `,`, and a leading `▁` that the re-encoding adds is dropped when the original piece had
  none. (Under Python 3 the original compared str with bytes there, so it kept a spurious `▁`; see the README.)
- `FullTokenizer`: SentencePiece mode (English models) or WordPiece mode (Chinese models). Unlike the original,
  SentencePiece mode honours `do_lower_case` (google-research/albert#88): `tokenize` normalises its input itself.
"""

import os
import re
import unicodedata

import sentencepiece as spm

from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote
from albert.ground.wire import WireError, fields
from albert.text.wordpiece import BasicTokenizer, WordpieceTokenizer, load_vocab

SPIECE_UNDERLINE = "\u2581"
SPECIAL_PIECES = ("<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]")
_DIGIT_COMMA = re.compile(r"\d,")


def preprocess_text(inputs: str, remove_space: bool = True, lower: bool = False) -> str:
    if remove_space:
        inputs = " ".join(inputs.strip().split())
    if not inputs.isascii():
        inputs = unicodedata.normalize("NFKD", inputs)
        inputs = "".join(c for c in inputs if not unicodedata.combining(c))
    if lower:
        inputs = inputs.lower()
    return inputs


def encode_pieces(sp_model: spm.SentencePieceProcessor, text: str, sample: bool = False) -> list[str]:
    if sample:
        pieces = sp_model.SampleEncodeAsPieces(text, 64, 0.1)
    else:
        pieces = sp_model.EncodeAsPieces(text)
    return split_digit_commas(pieces, sp_model)


def ends_in_digit_comma(piece: str) -> bool:
    """Whether the digit-comma rule splits `piece` (so the original never emits it): it ends in a digit and a
    comma."""
    return len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit()


def split_digit_commas(pieces: list, sp_model: spm.SentencePieceProcessor) -> list[str]:
    """The original's rule after SentencePiece: a piece ending in a digit and a comma (`▁45,`) becomes the pieces of
    its digits, then the comma."""
    out = []
    for piece in pieces:
        if ends_in_digit_comma(piece):
            again = sp_model.EncodeAsPieces(piece[:-1].replace(SPIECE_UNDERLINE, ""))
            if piece[0] != SPIECE_UNDERLINE and again and again[0][0] == SPIECE_UNDERLINE:
                if len(again[0]) == 1:
                    again = again[1:]
                else:
                    again[0] = again[0][1:]
            out.extend(again)
            out.append(piece[-1])
        else:
            out.append(piece)
    return out


def encode_ids(sp_model: spm.SentencePieceProcessor, text: str, sample: bool = False) -> list[int]:
    if not sample and not _DIGIT_COMMA.search(text):
        return sp_model.EncodeAsIds(text)  # same result, without the per-piece Python loop
    return [sp_model.PieceToId(piece) for piece in encode_pieces(sp_model, text, sample)]


def vocab_beside(spm_model_file: str) -> str | None:
    """The `.vocab` file SentencePiece writes beside a `.model` (its pieces and scores, as text), or None for a file
    not named `.model`."""
    return spm_model_file[:-len(".model")] + ".vocab" if spm_model_file.endswith(".model") else None


def load_sentencepiece(path: str) -> spm.SentencePieceProcessor:
    """Load a SentencePiece model through tf.io.gfile for URLs (gs://...), plain files otherwise."""
    if is_remote(path):
        import tensorflow as tf

        if not tf.io.gfile.exists(path):
            raise AlbertError(f"{path}: SentencePiece model not found; pass --spm_model_file of the model")
        with tf.io.gfile.GFile(path, "rb") as f:
            data = f.read()
    else:
        if not os.path.isfile(path):
            raise AlbertError(f"{path}: SentencePiece model not found; pass --spm_model_file of the model")
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise AlbertError(f"{path}: cannot read the SentencePiece model ({e.strerror})") from None
    try:  # the whole message walked first: SentencePiece's own parser accepts a cut file, the readers here do not
        for _ in fields(data):
            pass
    except WireError as e:
        raise AlbertError(f"{path}: not a SentencePiece model ({e}); pass the .model file, not the .vocab") from None
    sp_model = spm.SentencePieceProcessor()
    try:
        sp_model.LoadFromSerializedProto(data)
    except (RuntimeError, OSError) as e:
        raise AlbertError(f"{path}: not a SentencePiece model ({str(e).splitlines()[0]}); pass the .model file, "
                          "not the .vocab") from None
    return sp_model


class FullTokenizer:
    """Text -> pieces -> ids, in SentencePiece mode (`spm_model_file` given) or WordPiece mode."""

    def __init__(self, vocab_file: str | None, do_lower_case: bool = True, spm_model_file: str | None = None):
        self.do_lower_case = do_lower_case
        self.sp_model = None
        if spm_model_file:
            self.sp_model = load_sentencepiece(spm_model_file)
            self.vocab = {self.sp_model.IdToPiece(i): i for i in range(self.sp_model.GetPieceSize())}
        else:
            if not vocab_file:
                raise AlbertError("no vocabulary: pass --spm_model_file (SentencePiece) or --vocab_file (WordPiece)")
            self.vocab = load_vocab(vocab_file)
            self.basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
            self.wordpiece_tokenizer = WordpieceTokenizer(vocab=self.vocab)
        self.inv_vocab = {i: piece for piece, i in self.vocab.items()}

    def tokenize(self, text: str) -> list[str]:
        if self.sp_model is not None:
            return encode_pieces(self.sp_model, preprocess_text(text, lower=self.do_lower_case))
        return [sub for token in self.basic_tokenizer.tokenize(text)
                for sub in self.wordpiece_tokenizer.tokenize(token)]

    def tokenize_to_ids(self, text: str) -> list[int]:
        """`convert_tokens_to_ids(tokenize(text))`, faster in SentencePiece mode."""
        if self.sp_model is not None:
            return encode_ids(self.sp_model, preprocess_text(text, lower=self.do_lower_case))
        return self.convert_tokens_to_ids(self.tokenize(text))

    def convert_tokens_to_ids(self, tokens: list[str]) -> list[int]:
        if self.sp_model is not None:
            return [self.sp_model.PieceToId(token) for token in tokens]
        unk = self.vocab.get("[UNK]")
        return [self.vocab.get(token, unk) for token in tokens]

    def convert_ids_to_tokens(self, ids: list[int]) -> list[str]:
        if self.sp_model is not None:
            return [self.sp_model.IdToPiece(int(i)) for i in ids]
        return [self.inv_vocab[int(i)] for i in ids]


def train_sentencepiece(input_files: list[str], model_prefix: str, vocab_size: int = 30000,
                        input_sentence_size: int = 10_000_000, character_coverage: float = 0.99995,
                        **overrides) -> str:
    """Train a SentencePiece model with the original's `spm_train` settings (README of the release):
    unigram, <pad>=0 <unk>=1, no BOS/EOS, control symbols [CLS] [SEP] [MASK] (ids 2-4), user-defined symbols
    ( ) " - . – £ €. Feed it text normalised as the model will see it (`preprocess_text(line, lower=True)` for an
    uncased model). Returns the path of the `.model` file."""
    options = dict(
        input=",".join(input_files), model_prefix=model_prefix, vocab_size=vocab_size, pad_id=0, unk_id=1,
        eos_id=-1, bos_id=-1, control_symbols=["[CLS]", "[SEP]", "[MASK]"],
        user_defined_symbols=["(", ")", '"', "-", ".", "\u2013", "\u00a3", "\u20ac"],
        shuffle_input_sentence=True, input_sentence_size=input_sentence_size,
        character_coverage=character_coverage, model_type="unigram", minloglevel=2)
    options.update(overrides)
    spm.SentencePieceTrainer.Train(**options)
    return model_prefix + ".model"
