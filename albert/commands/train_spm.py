"""Train an ALBERT-style SentencePiece model (the release's `spm_train` settings) on a raw corpus.

    python -m albert.train_spm --input_file=corpus.txt --model_prefix=out/30k-clean --vocab_size=30000

Lines are normalised as the model will see them (`preprocess_text`, lower-cased unless --nodo_lower_case); blank
lines are skipped. Writes <model_prefix>.model and <model_prefix>.vocab.
"""

import dataclasses
import os
import tempfile

from albert.ground import cli
from albert.ground.atomic import new_directories, remove_leftovers
from albert.data.corpus import expand_inputs, read_lines
from albert.ground.errors import AlbertError
from albert.ground.settings_flags import Settings, at_least, define, setting
from albert.ground.validators import check_output_path
from albert.text.tokenization import preprocess_text, train_sentencepiece


@dataclasses.dataclass(frozen=True)
class SentencePieceTraining(Settings):
    input_file: str = setting(help="Raw text file(s), comma-separated, globs allowed (plain or .gz).", group="inputs")
    model_prefix: str = setting(help="Output prefix: writes <prefix>.model and <prefix>.vocab.", group="inputs")
    vocab_size: int = setting(30000, "Number of pieces, the 5 special ones and 8 user symbols included.",
                              check=at_least(14, "5 special pieces and 8 user symbols come first"), group="training")
    do_lower_case: bool = setting(True, "Lower-case the text (the released models are uncased).", group="model")
    input_sentence_size: int = setting(10_000_000, "Lines sampled for training (spm_train's default here).",
                                       group="training")


TRAINING = define(SentencePieceTraining)


def main(argv):
    del argv
    s = TRAINING.build()
    if not os.path.basename(s.model_prefix):
        raise AlbertError(f"--model_prefix {s.model_prefix} ends in a directory; add the file name prefix, e.g. "
                          f"{os.path.join(s.model_prefix, '30k-clean')}")
    files = expand_inputs(s.input_file)
    for suffix in (".model", ".vocab"):
        check_output_path("model_prefix", s.model_prefix + suffix, tuple(files))
    directory, name = os.path.split(os.path.abspath(s.model_prefix))
    with new_directories(directory):
        remove_leftovers(directory, name)  # a killed run's corpus copy or half-written model
        lines = train(s, files, directory, name)
    model = s.model_prefix + ".model"
    print(f"wrote {model} ({s.vocab_size} pieces from {lines:,} lines)")


def train(s: SentencePieceTraining, files: list, directory: str, name: str) -> int:
    """Normalise the corpus into a temporary file, train on it under a temporary prefix, then rename the .model and
    .vocab into place (both or neither). Returns the number of lines trained on."""
    with tempfile.NamedTemporaryFile("w", prefix=f".{name}.corpus-{os.getpid()}-", suffix=".txt", dir=directory,
                                     encoding="utf-8") as normalized:
        lines = 0
        for path in files:
            for _, line in read_lines(path):
                text = preprocess_text(line, lower=s.do_lower_case)
                if text:
                    normalized.write(text + "\n")
                    lines += 1
        normalized.flush()
        if not lines:
            raise AlbertError(f"{', '.join(files)}: no text to train on")
        temporary = os.path.join(directory, f".{name}.tmp-{os.getpid()}")
        try:
            train_sentencepiece([normalized.name], temporary, s.vocab_size,
                                input_sentence_size=s.input_sentence_size)
            for suffix in (".vocab", ".model"):  # the .model last: it is what a reader looks for
                os.replace(temporary + suffix, os.path.join(directory, name + suffix))
        except RuntimeError as e:
            raise AlbertError(f"--vocab_size {s.vocab_size}: SentencePiece training failed: "
                              f"{str(e).splitlines()[0]}") from None
        finally:
            for suffix in (".vocab", ".model"):
                if os.path.exists(temporary + suffix):
                    os.remove(temporary + suffix)
    return lines


def command():
    """The command line: `python -m albert.train_spm` and the console script albert-train-spm."""
    cli.run(main)
