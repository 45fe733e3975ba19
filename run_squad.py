"""Fine-tune ALBERT on SQuAD 1.1 or 2.0.

The command line is albert.commands.run_squad, installed by `pip install .` as `albert-run-squad`;
this script runs it with the same flags.
"""

from albert.commands.run_squad import command

if __name__ == "__main__":
    command()
