"""Re-save a checkpoint under the original TF1 variable names.

The command line is albert.commands.export_checkpoints, installed by `pip install .` as `albert-export-checkpoints`;
this script runs it with the same flags.
"""

from albert.commands.export_checkpoints import command

if __name__ == "__main__":
    command()
