"""Parameters, FLOPs and training memory of an ALBERT config, computed (albert.model.sizing), not built.

    python -m albert.info --preset base_v2 --batch_size 8 --seq_length 512
    python -m albert.info --albert_config_file albert_config.json
    python -m albert.info --batch_table
"""

import sys

from albert.ground.cli import ArgumentParser, program
from albert.config import PRESETS, AlbertConfig
from albert.train.settings import PRECISIONS
from albert.ground.errors import AlbertError
from albert.model.sizing import batch_table, report

SEQ_LENGTH = 512  # --seq_length's default: the released models' max_position_embeddings


def main(argv=None, prog: str | None = None) -> int:
    parser = ArgumentParser(prog=prog or program(), description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--albert_config_file", help="an albert_config.json")
    source.add_argument("--preset", choices=sorted(PRESETS), help="a released configuration")
    source.add_argument("--batch_table", action="store_true",
                        help="the largest training batch of base/large/xlarge/xxlarge (v2) at --seq_length")
    parser.add_argument("--batch_size", type=int, default=8,
                        help="sequences per training step, for the memory estimate (default: 8)")
    parser.add_argument("--seq_length", type=int, default=None,
                        help=f"tokens per sequence (default: {SEQ_LENGTH}, or the config's max_position_embeddings "
                        "when it is smaller)")
    parser.add_argument("--precision", choices=PRECISIONS, default="fp32",
                        help="the training precision the memory estimate assumes (default: fp32)")
    args = parser.parse_args(argv)
    if args.batch_table:
        args.seq_length = SEQ_LENGTH if args.seq_length is None else args.seq_length
        if not 1 <= args.seq_length <= 512:
            print(f"{parser.prog}: error: --seq_length must be 1..512 (max_position_embeddings of the "
                  "released models)", file=sys.stderr)
            return 2
        print(batch_table(args.seq_length))
        return 0
    try:
        config = (AlbertConfig.from_json_file(args.albert_config_file) if args.albert_config_file
                  else AlbertConfig.preset(args.preset))
        seq_length, clipped = default_length(config, args.seq_length)
        if args.batch_size < 1 or seq_length < 1:
            raise AlbertError("--batch_size and --seq_length must be positive")
        config.check_sequence_length(seq_length, "--seq_length")
    except AlbertError as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 2
    if clipped:
        print(f"--seq_length {seq_length}: the config's max_position_embeddings (the default {SEQ_LENGTH} is longer "
              "than the model takes)\n")
    print(report(config, args.batch_size, seq_length, args.precision))
    return 0


def default_length(config: AlbertConfig, given: int | None) -> tuple:
    """(the length to size the model at, whether the default was clipped): --seq_length as given, else SEQ_LENGTH,
    or the config's max_position_embeddings when that is smaller (the demo's model takes 64)."""
    if given is not None:
        return given, False
    return min(SEQ_LENGTH, config.max_position_embeddings), config.max_position_embeddings < SEQ_LENGTH


def command():
    """The command line: `python -m albert.info` and the console script albert-info."""
    sys.exit(main(prog="python -m albert.info" if program() == "info.py" else None))
