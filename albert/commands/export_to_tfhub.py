"""Export a pretrained ALBERT as TF Hub–style SavedModels: OUT/encoder, OUT/preprocessor (in-graph tokenization
with tensorflow-text) and OUT/mlm (masked-LM and sentence-order logits).

    python export_to_tfhub.py --albert_directory=albert_base --export_path=out/hub

--albert_directory holds albert_config.json, the SentencePiece .model (and .vocab) and the checkpoint
(--checkpoint_name, default model.ckpt-best: the original TF1 names, or a checkpoint of run_pretraining.py); or it
is a Hugging Face AlbertForPreTraining directory (config.json, model.safetensors, spiece.model): the MLM export
needs both pretraining heads.
Everything is written under a temporary name and renamed into place; a failed export leaves nothing behind.
"""

from albert.data.features import boundaries
from albert.export.options import HUB_EXPORT_COMMAND, HubExport
from albert.ground import cli, outputs
from albert.ground.settings_flags import define
from albert.hub.resolve import resolve
from albert.runner.preflight import check_local_files

HUB = define(HubExport, helps={  # what this command's model.tflite is for
    "tflite_metadata": "TFLite metadata in the model.tflite: tokenizer (input roles, the tokenizer -- a "
    "SentencePiece model that does the original's preprocessing itself -- and the label names, so that "
    "MediaPipe Tasks' TextEmbedder runs it on raw text) or none.",
    "tflite_length": "The model.tflite's sequence axis: fixed (--seq_length), dynamic (any length up to it: a caller "
    "feeds each batch cut to its longest example) or default: fixed, as MediaPipe's TextEmbedder needs."})
COMMAND_LINE = define(cli.CommandLineOnly, only=("use_einsum", "progress"))


def main(argv):
    del argv
    s = HUB.build()
    boundaries(s.seq_length or 128, s.length_buckets)  # a malformed value is one line here
    check_local_files(None, s.spm_model_file, None)  # before a model reference is resolved (it may download)
    outputs.check(s.export_path, HUB_EXPORT_COMMAND, "--export_path", (s.albert_directory, s.spm_model_file))
    directory = resolve(s.albert_directory)
    outputs.check(s.export_path, HUB_EXPORT_COMMAND, "--export_path", (directory, s.spm_model_file))
    from albert.tasks.pretraining.tfhub import export_hub_models  # TensorFlow loads here, once the flags are checked

    print(export_hub_models(directory, s.export_path, s.checkpoint_name, s.spm_model_file, s.do_lower_case,
                            s.seq_length, s.tflite_quantization, s.length_buckets, s.tflite_metadata,
                            s.tflite_length))


def command():
    """The command line: `python export_to_tfhub.py` and the console script albert-export-to-tfhub."""
    cli.run(main)
