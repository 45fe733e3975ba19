"""Fine-tune ALBERT on a GLUE task or on your own files.

The command line is albert.commands.run_classifier, installed by `pip install .` as `albert-run-classifier`;
this script runs it with the same flags.
"""

from albert.commands.run_classifier import command

if __name__ == "__main__":
    command()
