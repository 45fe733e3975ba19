"""Fine-tune ALBERT for token classification (NER).

The command line is albert.commands.run_ner, installed by `pip install .` as `albert-run-ner`;
this script runs it with the same flags.
"""

from albert.commands.run_ner import command

if __name__ == "__main__":
    command()
