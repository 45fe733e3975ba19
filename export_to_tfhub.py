"""Export a pretrained ALBERT as TF Hub–style SavedModels.

The command line is albert.commands.export_to_tfhub, installed by `pip install .` as `albert-export-to-tfhub`;
this script runs it with the same flags.
"""

from albert.commands.export_to_tfhub import command

if __name__ == "__main__":
    command()
