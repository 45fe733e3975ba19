"""Parameters, FLOPs and training memory of an ALBERT config.

The command line is albert.commands.info, installed by `pip install .` as `albert-info`;
`python -m albert.info` runs it with the same flags.
"""

from albert.commands.info import command

if __name__ == "__main__":
    command()
