"""Raw text -> TFRecords of pretraining instances, in the original format.

The command line is albert.commands.create_pretraining_data, installed by `pip install .` as
`albert-create-pretraining-data`; this script runs it with the same flags.
"""

from albert.commands.create_pretraining_data import command

if __name__ == "__main__":
    command()
