"""The command lines' shell: a user mistake is one line on stderr and exit status 2 (absl and argparse alike), the run
directory held by one run, TensorFlow's start-up chatter kept off stderr; and the flags a command line reads itself,
which set no setting of a job (`CommandLineOnly`). The runners' shared flags are listed under this module's name in
--helpfull (albert.ground.settings_flags.SHARED)."""

import argparse
import dataclasses
import os
import sys

from absl import app, flags, logging

from albert.ground import help, interrupts, stderr_filter
from albert.ground.cpu import prefer_onednn
from albert.ground.errors import AlbertError
from albert.ground.rundir import exclusive
from albert.ground.settings_flags import SHARED, Settings, define_pending, setting


@dataclasses.dataclass(frozen=True)
class CommandLineOnly(Settings):
    """The flags a command line reads itself (each command picks its own: `define(CommandLineOnly, only=...)`)."""

    albert_hub_module_handle: str | None = setting(
        None, "Weights, config and tokenizer from a TF Hub module: a handle such as "
        "https://tfhub.dev/google/albert_base/3, a directory or any model reference, whose weights, config and "
        "SentencePiece model are used (--albert_config_file and --spm_model_file then optional); with "
        "--init_checkpoint too, that checkpoint's weights are loaded.",
        group="model")  # becomes the job's init_checkpoint, albert_config_file and spm_model_file
    progress: bool = setting(True, "Show a progress bar while a model is downloaded: its size and rate, when stderr "
                             "is a terminal; --noprogress: never (also ALBERT_NOPROGRESS=1).", module=SHARED,
                             group="model")
    num_tpu_cores: int = setting(8, "Kept for compatibility (the TPU strategy finds its cores).", module=SHARED,
                                 group="compatibility")
    use_einsum: bool = setting(True, "Kept for compatibility (attention is always einsum-shaped).",
                               group="compatibility")
    do_lower_case: bool = setting(True, "Unused (kept for compatibility).",
                                  group="compatibility")  # export_checkpoints.py's
    masked_lm_budget: float = setting(0.0, "Not supported (online masking was never functional in the original).",
                                      group="compatibility")
    task_name: str = setting("race", "Only race.",
                             group="compatibility")  # run_race.py's: the original's flag, one value
    vocab_file: str | None = setting(None, "Unused: SQuAD features need the SentencePiece model.",
                                     group="compatibility")  # run_squad.py's


def program() -> str:
    return sys.argv[0].rsplit("/", 1)[-1]


HELP = ("--help", "-help", "--helpshort", "-helpshort", "-?")
HELPFULL = ("--helpfull", "-helpfull")


def help_asked(argv) -> str | None:
    """'help' or 'helpfull' when the command line asks for one (before any `--`), else None."""
    for arg in argv[1:]:
        if arg == "--":
            return None
        if arg in HELP:
            return "help"
        if arg in HELPFULL:
            return "helpfull"
    return None


def parse_flags(argv, known_only: bool = False, doc: str = ""):
    """absl's flag parsing with this project's error convention: a bad flag is one line and exit status 2 (absl:
    two lines, status 1); --help prints the command's docstring `doc` and its flags by group, --helpfull absl's full
    listing (albert.ground.help), and exit 0 (absl: 1). With `known_only`, flags this program does not define are
    left in the returned argv (Beam's pipeline options)."""
    asked = help_asked(argv)
    if asked:
        text = help.short_help(doc) if asked == "help" else help.full_help(doc)
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:  # `... --help | head`
            pass
        sys.exit(0)
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
        interrupts.install()  # `kill`, docker stop, Ctrl-C: unwind, so temporaries are removed
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
            except BaseException as e:
                if not (isinstance(e, KeyboardInterrupt) or interrupts.requested() and isinstance(e, Exception)):
                    raise
                print(f"{program()}: interrupted; run the command again to finish (training resumes from its last "
                      "checkpoint)", file=sys.stderr)
                code = 130
        sys.exit(code)

    define_pending(main.__module__)  # the command's flags exist from here on, not from its import
    doc = sys.modules[main.__module__].__doc__ or f"{program()} [flags]\n"
    app.run(guarded, flags_parser=lambda argv: parse_flags(argv, known_only=pass_unknown, doc=doc))


class ArgumentParser(argparse.ArgumentParser):
    """argparse with this project's error convention: a usage mistake is `<prog>: error: <message>; see --help`,
    one line, exit status 2 (argparse prints the whole usage first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}; see --help\n")
