"""The command lines' shell: a user mistake is one line on stderr and exit status 2 (absl and argparse alike), the run
directory held by one run, TensorFlow's start-up chatter kept off stderr; and the flags a command line reads itself,
which set no setting of a job (`CommandLineOnly`). The runners' shared flags are listed under this module's name in
--helpfull (albert.ground.settings_flags.SHARED)."""

import argparse
import dataclasses
import os
import sys

from absl import app, flags, logging

from albert.ground import stderr_filter
from albert.ground.cpu import prefer_onednn
from albert.ground.errors import AlbertError
from albert.ground.rundir import exclusive
from albert.ground.settings_flags import SHARED, Settings, setting


@dataclasses.dataclass(frozen=True)
class CommandLineOnly(Settings):
    """The flags a command line reads itself (each command picks its own: `define(CommandLineOnly, only=...)`)."""

    albert_hub_module_handle: str | None = setting(
        None, "The original's flag: a TF Hub module (a handle such as https://tfhub.dev/google/albert_base/3, a "
        "directory or any model reference) that supplies the weights, the config and the SentencePiece model "
        "(--albert_config_file and --spm_model_file then optional); with --init_checkpoint too, that checkpoint's "
        "weights are loaded.")  # becomes the job's init_checkpoint, albert_config_file and spm_model_file
    progress: bool = setting(True, "Show a progress bar (size, rate) while a model is downloaded, when stderr is a "
                             "terminal; --noprogress: never (also ALBERT_NOPROGRESS=1).", module=SHARED)
    num_tpu_cores: int = setting(8, "Kept for compatibility (the TPU strategy finds its cores).", module=SHARED)
    use_einsum: bool = setting(True, "Kept for compatibility (attention is always einsum-shaped).")
    do_lower_case: bool = setting(True, "Unused (kept for compatibility).")  # export_checkpoints.py's
    masked_lm_budget: float = setting(0.0, "Not supported (online masking was never functional in the original).")
    task_name: str = setting("race", "Only race.")  # run_race.py's: the original's flag, one value
    vocab_file: str | None = setting(None, "Unused: SQuAD features need the SentencePiece model.")  # run_squad.py's


def program() -> str:
    return sys.argv[0].rsplit("/", 1)[-1]


def parse_flags(argv, known_only: bool = False):
    """absl's flag parsing with this project's error convention: a bad flag is one line and exit status 2 (absl:
    two lines, status 1); --help / --helpfull print the usage and exit 0 (absl: 1). With `known_only`, flags this
    program does not define are left in the returned argv (Beam's pipeline options)."""
    try:
        return flags.FLAGS(argv, known_only=known_only)
    except flags.Error as e:
        print(f"{program()}: error: {' '.join(str(e).split())}; see --help", file=sys.stderr)
        sys.exit(2)
    except SystemExit as e:  # absl's help flags print the usage, then exit 1
        sys.exit(0 if e.code == 1 else e.code)


def run(main, output_dir_flag: str | None = None, pass_unknown: bool = False):
    """`absl.app.run(main)`, turning an AlbertError into `<program>: error: <message>` and exit status 2. With
    `output_dir_flag`, the directory that flag names is held by this run alone (albert.ground.rundir.exclusive); with
    `pass_unknown`, flags the program does not define reach `main` in its argv. TensorFlow, which the command
    lines import only in `main`, then loads with oneDNN's kernels on any x86-64 CPU (albert.ground.cpu)."""
    prefer_onednn()

    def guarded(argv):
        logging.set_verbosity(logging.WARNING)  # TensorFlow's INFO chatter (checkpoint sharding, ...) stays out
        if "progress" in flags.FLAGS and not flags.FLAGS.progress:
            os.environ["ALBERT_NOPROGRESS"] = "1"  # albert.hub.download reads it (and hands it to child processes)
        with stderr_filter.filtered():
            try:
                if output_dir_flag:
                    with exclusive(getattr(flags.FLAGS, output_dir_flag)):
                        return main(argv)
                return main(argv)
            except AlbertError as e:
                print(f"{program()}: error: {e}", file=sys.stderr)
                sys.stderr.flush()
                code = 2
        sys.exit(code)

    app.run(guarded, flags_parser=lambda argv: parse_flags(argv, known_only=pass_unknown))


class ArgumentParser(argparse.ArgumentParser):
    """argparse with this project's error convention: a usage mistake is `<prog>: error: <message>; see --help`,
    one line, exit status 2 (argparse prints the whole usage first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}; see --help\n")
