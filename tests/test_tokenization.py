import pytest

from albert import AlbertError
from albert.text.tokenization import FullTokenizer, encode_ids, encode_pieces, load_sentencepiece, preprocess_text

U = "\u2581"


@pytest.mark.parametrize("text, lower, expected", [
    ("Hello World", True, "hello world"),
    ("Hello World", False, "Hello World"),
    ("  tabs\tand \n\n  runs   of    spaces  ", False, "tabs and runs of spaces"),
    ("Café naïve Zürich résumé", True, "cafe naive zurich resume"),
    ("São Paulo ÅNGSTRÖM", True, "sao paulo angstrom"),
    ("ＡＢＣ １２３", False, "ABC 123"),  # NFKD folds full-width forms
    ("``quoted'' “curly” 'single'", False, "``quoted'' “curly” 'single'"),  # quotes untouched (unlike XLNet)
    ("北京 東京", False, "北京 東京"),
    ("12,345.67 and 1,000", False, "12,345.67 and 1,000"),
    ("", True, ""),
    ("   ", True, ""),
])
def test_preprocess_text(text, lower, expected):
    assert preprocess_text(text, lower=lower) == expected


def test_preprocess_text_keeps_spaces_when_asked():
    assert preprocess_text(" a  b ", remove_space=False) == " a  b "


@pytest.fixture(scope="module")
def sp(corpus_dir):
    return load_sentencepiece(str(corpus_dir / "sp.model"))


@pytest.fixture(scope="module")
def digit_sp(tmp_path_factory):
    """A tiny model whose pieces glue digits to commas (`▁1,000,`, and the user symbols `5,` / `45,`), as ALBERT's
    30k model does for some numbers: the digit-comma rule of encode_pieces then has work to do."""
    import random

    from albert.text.tokenization import train_sentencepiece

    rng = random.Random(0)
    directory = tmp_path_factory.mktemp("digits")
    lines = []
    for _ in range(3000):
        words = [f"{rng.choice(['2', '12', '345', '1', '99'])},{rng.choice(['345', '000', '5'])},"
                 if rng.random() < 0.5 else rng.choice(["cost", "units", "total", "the", "of"]) for _ in range(8)]
        lines.append(" ".join(words) + "\n")
    (directory / "digits.txt").write_text("".join(lines))
    model = train_sentencepiece([str(directory / "digits.txt")], str(directory / "digits"), vocab_size=40,
                                user_defined_symbols=["5,", "45,"])
    return load_sentencepiece(model)


@pytest.mark.parametrize("text, pieces", [
    # a piece without a leading ▁ ("45,"): re-encoding "45" adds a ▁, which the intended rule drops
    ("cost345,", [U + "cost", "3", "45", ","]),
    ("x45, 5,", [U, "x", "45", ",", U, "5", ","]),
    # a piece with a leading ▁ keeps it
    ("a 2,5, total", [U, "a", U, "2", ",", "5", ",", U + "total"]),
])
def test_encode_pieces_digit_comma_rule(digit_sp, text, pieces):
    raw = digit_sp.EncodeAsPieces(text)
    assert any(p[-1] == "," and p[-2].isdigit() for p in raw if len(p) > 1)  # the rule applies to this text
    assert encode_pieces(digit_sp, text) == pieces
    assert "".join(pieces) == "".join(raw)  # no spurious ▁ (the original's Python 3 behaviour added some)
    assert encode_ids(digit_sp, text) == [digit_sp.PieceToId(p) for p in pieces]


def test_encode_pieces_leaves_other_text_alone(sp):
    for text in ["hello world.", "naive cafe", "no digits, here", ""]:
        assert encode_pieces(sp, text) == sp.EncodeAsPieces(text)
        assert encode_ids(sp, text) == sp.EncodeAsIds(text)


def test_sentencepiece_model_has_the_original_special_ids(sp):
    assert [sp.IdToPiece(i) for i in range(13)] == ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]",
                                                    "(", ")", '"', "-", ".", "\u2013", "\u00a3", "\u20ac"]


def test_full_tokenizer_sentencepiece_honours_do_lower_case(corpus_dir):
    model = str(corpus_dir / "sp.model")
    lower = FullTokenizer(None, do_lower_case=True, spm_model_file=model)
    cased = FullTokenizer(None, do_lower_case=False, spm_model_file=model)
    assert lower.tokenize("THE Café") == lower.tokenize("the cafe")
    assert any(any(c.isupper() for c in p) for p in cased.tokenize("THE Café"))
    ids = lower.tokenize_to_ids("Hello,   World 12,345")
    assert ids == lower.convert_tokens_to_ids(lower.tokenize("Hello,   World 12,345"))
    assert lower.convert_ids_to_tokens(ids) == lower.tokenize("hello, world 12,345")
    assert len(lower.vocab) == 1000
    assert lower.vocab["[MASK]"] == 4


def test_full_tokenizer_wordpiece_mode(tmp_path):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "hello", "北", "京", ",", "!",
             "run", "##ning"]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = FullTokenizer(str(path), do_lower_case=True)
    assert tokenizer.tokenize("UnAffable, 北京!") == ["un", "##aff", "##able", ",", "北", "京", "!"]
    assert tokenizer.tokenize("Héllo\tRUNNING xyz") == ["hello", "run", "##ning", "[UNK]"]
    assert tokenizer.tokenize_to_ids("hello 北京") == [8, 9, 10]
    assert tokenizer.convert_ids_to_tokens([13, 14]) == ["run", "##ning"]
    cased = FullTokenizer(str(path), do_lower_case=False)
    assert cased.tokenize("Hello") == ["[UNK]"]


def test_tokenizer_file_errors(tmp_path):
    with pytest.raises(AlbertError, match=r"nope.model: SentencePiece model not found; pass --spm_model_file"):
        FullTokenizer(None, spm_model_file=str(tmp_path / "nope.model"))
    garbage = tmp_path / "garbage.model"
    garbage.write_bytes(b"this is not a model")
    with pytest.raises(AlbertError, match=r"garbage.model: not a SentencePiece model \(.*\); pass the .model file"):
        FullTokenizer(None, spm_model_file=str(garbage))
    with pytest.raises(AlbertError, match=r"vocab.txt: vocabulary file not found; pass --vocab_file"):
        FullTokenizer(str(tmp_path / "vocab.txt"))
    with pytest.raises(AlbertError, match="no vocabulary: pass --spm_model_file"):
        FullTokenizer(None)


def test_train_spm_cli(corpus_dir, tmp_path):
    import subprocess
    import sys

    from tests.helpers import ROOT

    prefix = tmp_path / "models" / "30k-clean"
    result = subprocess.run([sys.executable, "-m", "albert.train_spm", f"--input_file={corpus_dir / 'corpus.txt'}",
                             f"--model_prefix={prefix}", "--vocab_size=300"], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"wrote {prefix}.model (300 pieces from ")
    sp = load_sentencepiece(f"{prefix}.model")
    assert sp.GetPieceSize() == 300
    assert sp.IdToPiece(4) == "[MASK]"
    assert sp.IdToPiece(12) == "\u20ac"
    assert not any(c.isupper() for i in range(300) for c in sp.IdToPiece(i) if i > 4)  # trained on lower-cased text
    bad = subprocess.run([sys.executable, "-m", "albert.train_spm", f"--input_file={tmp_path}/none.txt",
                          f"--model_prefix={prefix}"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.strip().endswith(f"error: {tmp_path}/none.txt: no input file matches; check --input_file")
