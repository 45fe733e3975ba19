"""ALBERT pretraining: masked-LM + sentence-order prediction.

The command line is albert.commands.run_pretraining, installed by `pip install .` as `albert-run-pretraining`;
this script runs it with the same flags.
"""

from albert.commands.run_pretraining import command

if __name__ == "__main__":
    command()
