"""Train an ALBERT-style SentencePiece model.

The command line is albert.commands.train_spm, installed by `pip install .` as `albert-train-spm`;
`python -m albert.train_spm` runs it with the same flags.
"""

from albert.commands.train_spm import command

if __name__ == "__main__":
    command()
