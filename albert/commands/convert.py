"""Convert ALBERT weights between layouts: any supported input, the release layout or Hugging Face out.

    python -m albert.convert --input=hf_dir --output=albert_base --to=release
    python -m albert.convert --input=albert_base --output=hf_dir --to=huggingface

--input is a model directory: the release layout (albert_config.json, the SentencePiece .model, a checkpoint with
the original TF1 names or one of ours), a Hugging Face directory (config.json, model.safetensors, spiece.model) or
a keras-hub preset; a fine-tuning run's --output_dir is one (it records albert_config.json and the SentencePiece
model). The library call is albert.tasks.conversion.convert.
"""

import dataclasses
import os

from albert.ground import cli, outputs
from albert.ground.errors import AlbertError
from albert.ground.rundir import BEST_CHECKPOINT
from albert.ground.settings_flags import Settings, define, setting
from albert.hub.resolve import resolve
from albert.runner.preflight import check_local_files
from albert.weights.huggingface import ARCHITECTURES

FORMATS = ("release", "huggingface")
FLAG_NAMES = {"output": "--output", "directory": "--input", "checkpoint": "--checkpoint_name",
              "spm": "--spm_model_file"}  # in errors


@dataclasses.dataclass(frozen=True)
class Conversion(Settings):
    input: str = setting(help="Model reference: a model directory (release layout, Hugging Face, keras-hub, TF1 Hub "
                         "module, Model Garden SavedModel), an archive, a name, a hub id or handle, a URL.",
                         group="model")
    output: str = setting(help="Output directory: new, empty, or an earlier output of this conversion (a "
                          "directory holding other files is refused).", group="inputs")
    to: str = setting(help="Output layout: release (albert_config.json, 30k-clean.model, model.ckpt-best with the "
                      "original names) or huggingface (config.json, model.safetensors, spiece.model).",
                      choices=FORMATS, group="inputs")
    architecture: str | None = setting(None, "Hugging Face class the weights hold or are written as (default: read "
                                       f"from the input; {', '.join(ARCHITECTURES)}).", group="model")
    checkpoint_name: str = setting(BEST_CHECKPOINT, "Checkpoint prefix inside a release-layout --input.", group="model")
    spm_model_file: str | None = setting(None, "SentencePiece model (default: the one of --input).", group="model")


CONVERSION = define(Conversion)
COMMAND_LINE = define(cli.CommandLineOnly, only=("progress",))


def main(argv):
    del argv
    s = CONVERSION.build()
    check_local_files(None, s.spm_model_file, None)  # before a model reference is resolved (it may download)
    command = f"albert.convert --to={s.to}"  # what the output's marker names (albert.ground.outputs)
    outputs.check(s.output, command, "--output", (s.input, s.spm_model_file))
    directory = resolve(s.input)
    if not os.path.isdir(directory):
        raise AlbertError(f"{directory}: --input not found (a model directory)")
    outputs.check(s.output, command, "--output", (directory, s.spm_model_file))
    from albert.tasks.conversion import convert  # TensorFlow loads here, once the flags are checked

    report = convert(directory, s.output, s.to, s.architecture, s.checkpoint_name, s.spm_model_file, FLAG_NAMES)
    fresh = f"; freshly initialised (not in the input): {', '.join(report.missing)}" if report.missing else ""
    print(f"wrote {s.output} ({s.to}) from {report.path}: {len(report.loaded)} tensors{fresh}")


def command():
    """The command line: `python -m albert.convert` and the console script albert-convert."""
    cli.run(main)
