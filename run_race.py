"""Fine-tune ALBERT on RACE.

The command line is albert.commands.run_race, installed by `pip install .` as `albert-run-race`;
this script runs it with the same flags.
"""

from albert.commands.run_race import command

if __name__ == "__main__":
    command()
