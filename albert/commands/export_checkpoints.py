r"""Re-save a checkpoint under the original TF1 variable names, without optimizer slots: the encoder, the MLM and
sentence-order heads and global_step, as the original export_checkpoints.py did.

    python export_checkpoints.py --albert_directory=out/pretrain --checkpoint_name=model.ckpt-125000 \
        --export_path=out/albert_base/model.ckpt-best

--albert_directory holds albert_config.json, the SentencePiece .model and the checkpoint (original or ours).
"""

import os

from albert.export.options import CheckpointExport
from albert.ground import cli
from albert.ground.errors import AlbertError
from albert.ground.settings_flags import define
from albert.ground.validators import check_output_path
from albert.hub.resolve import resolve
from albert.runner.preflight import check_local_files

EXPORT = define(CheckpointExport)
COMMAND_LINE = define(cli.CommandLineOnly, only=("do_lower_case", "progress"))


def main(argv):
    del argv
    s = EXPORT.build()
    check_local_files(None, s.spm_model_file, None)  # before a model reference is resolved (it may download)
    check_output_path("export_path", s.export_path, (s.albert_directory,))
    directory = resolve(s.albert_directory)
    check_output_path("export_path", s.export_path, (directory,))
    inside = os.path.realpath(s.export_path).startswith(os.path.realpath(directory) + os.sep)
    if inside and os.path.exists(s.export_path + ".index"):
        raise AlbertError(f"--export_path {s.export_path} is a checkpoint of --albert_directory {directory}, the "
                          "input: write the export under another name")
    # TensorFlow loads here, once the flags are checked
    from albert.tasks.pretraining.tfhub import export_release_checkpoint

    print(export_release_checkpoint(directory, s.export_path, s.checkpoint_name, s.spm_model_file))


def command():
    """The command line: `python export_checkpoints.py` and the console script albert-export-checkpoints."""
    cli.run(main)
