"""Convert ALBERT weights between layouts.

The command line is albert.commands.convert, installed by `pip install .` as `albert-convert`;
`python -m albert.convert` runs it with the same flags.
"""

from albert.commands.convert import command

if __name__ == "__main__":
    command()
