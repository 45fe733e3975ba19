"""Train an ALBERT-style SentencePiece model (the release's `spm_train` settings) on a raw corpus.

    python -m albert.train_spm --input_file=corpus.txt --model_prefix=out/30k-clean --vocab_size=30000

Lines are normalised as the model will see them (`preprocess_text`, lower-cased unless --nodo_lower_case); blank
lines are skipped. Writes <model_prefix>.model and <model_prefix>.vocab.
"""

import os
import tempfile

from absl import flags

from albert.ground import cli
from albert.ground.atomic import new_directories, remove_leftovers
from albert.data.corpus import expand_inputs, read_lines
from albert.ground.errors import AlbertError
from albert.text.tokenization import preprocess_text, train_sentencepiece

flags.DEFINE_string("input_file", None, "Raw text file(s), comma-separated, globs allowed (plain or .gz).")
flags.DEFINE_string("model_prefix", None, "Output prefix: writes <prefix>.model and <prefix>.vocab.")
flags.DEFINE_integer("vocab_size", 30000, "Number of pieces, the 5 special ones and 8 user symbols included.")
flags.DEFINE_bool("do_lower_case", True, "Lower-case the text (the released models are uncased).")
flags.DEFINE_integer("input_sentence_size", 10_000_000, "Lines sampled for training (spm_train's default here).")
FLAGS = flags.FLAGS


def main(argv):
    del argv
    cli.require({"input_file": FLAGS.input_file, "model_prefix": FLAGS.model_prefix})
    cli.check_at_least("vocab_size", FLAGS.vocab_size, 14, "5 special pieces and 8 user symbols come first")
    if not os.path.basename(FLAGS.model_prefix):
        raise AlbertError(f"--model_prefix {FLAGS.model_prefix} ends in a directory; add the file name prefix, e.g. "
                          f"{os.path.join(FLAGS.model_prefix, '30k-clean')}")
    files = expand_inputs(FLAGS.input_file)
    for suffix in (".model", ".vocab"):
        cli.check_output_path("model_prefix", FLAGS.model_prefix + suffix, tuple(files))
    directory, name = os.path.split(os.path.abspath(FLAGS.model_prefix))
    with new_directories(directory):
        remove_leftovers(directory, name)  # a killed run's corpus copy or half-written model
        lines = train(files, directory, name)
    model = FLAGS.model_prefix + ".model"
    print(f"wrote {model} ({FLAGS.vocab_size} pieces from {lines:,} lines)")


def train(files: list, directory: str, name: str) -> int:
    """Normalise the corpus into a temporary file, train on it under a temporary prefix, then rename the .model and
    .vocab into place (both or neither). Returns the number of lines trained on."""
    with tempfile.NamedTemporaryFile("w", prefix=f".{name}.corpus-{os.getpid()}-", suffix=".txt", dir=directory,
                                     encoding="utf-8") as normalized:
        lines = 0
        for path in files:
            for _, line in read_lines(path):
                text = preprocess_text(line, lower=FLAGS.do_lower_case)
                if text:
                    normalized.write(text + "\n")
                    lines += 1
        normalized.flush()
        if not lines:
            raise AlbertError(f"{', '.join(files)}: no text to train on")
        temporary = os.path.join(directory, f".{name}.tmp-{os.getpid()}")
        try:
            train_sentencepiece([normalized.name], temporary, FLAGS.vocab_size,
                                input_sentence_size=FLAGS.input_sentence_size)
            for suffix in (".vocab", ".model"):  # the .model last: it is what a reader looks for
                os.replace(temporary + suffix, os.path.join(directory, name + suffix))
        except RuntimeError as e:
            raise AlbertError(f"--vocab_size {FLAGS.vocab_size}: SentencePiece training failed: "
                              f"{str(e).splitlines()[0]}") from None
        finally:
            for suffix in (".vocab", ".model"):
                if os.path.exists(temporary + suffix):
                    os.remove(temporary + suffix)
    return lines


if __name__ == "__main__":
    cli.run(main)
