"""`Model.from_pretrained(reference, ...)`: the encoder or a task model of any model reference, its weights loaded
and its preprocessor attached.

The reference is resolved to local files (albert.hub.resolve: names, Hugging Face ids, TF Hub handles, URLs,
archives, directories), the model directory described once (albert.weights.formats.read_model_directory),
the weights loaded in whatever format they are (albert.weights.loader.load_located: task heads the checkpoint lacks
stay freshly initialised and are reported), and an AlbertPreprocessor attached, so the model takes raw strings
(albert.model.text_inputs).
"""

import logging

from albert.config import AlbertConfig
from albert.ground.errors import AlbertError
from albert.hub.resolve import resolve
from albert.model.preprocessor import DEFAULT_SEQ_LENGTH, AlbertPreprocessor
from albert.model.sizing import check_weights_fit
from albert.ground.rundir import BEST_CHECKPOINT
from albert.weights.formats import check_vocabulary, read_model_directory
from albert.weights import huggingface
from albert.weights.heads import heads_of
from albert.weights.loader import load_located
from albert.weights.run_record import read_record

log = logging.getLogger("albert")


class FromPretrained:
    """Adds `from_pretrained` to a Keras model whose first constructor argument is its AlbertConfig (and which
    takes a `preprocessor`: albert.model.text_inputs.TextInputs)."""

    @classmethod
    def from_pretrained(cls, directory: str, checkpoint_name: str = BEST_CHECKPOINT, seq_length: int | None = None,
                        do_lower_case: bool | None = None, spm_model_file: str | None = None, **arguments):
        """The model of a model reference with its weights loaded and its preprocessor attached.

        The reference is a model name (`albert_base_v2`, docs/weights.md), a Hugging Face id, a TF Hub handle, a
        URL, an archive or a model directory: a released one (albert_config.json, the .model, a checkpoint with the
        original TF1 names or one of ours), a Hugging Face one (config.json, model.safetensors, spiece.model), a
        keras-hub preset, a TF1 Hub module or a Model Garden SavedModel; what is downloaded is cached.
        `arguments` go to the constructor (e.g. `num_labels=2`); those the weights fix (a classifier's `num_labels`)
        are read from them when left out. A fine-tuning run's directory gives back its task model as trained: its
        labels (`model.labels`, in logits order) and preprocessing (`seq_length`, `do_lower_case`, a tagger's
        `doc_stride`) come from its albert_run.json. What the weights lack -- a task head -- stays freshly
        initialised and is listed in `model.load_report.missing` (and logged). `seq_length` defaults to 128 (at
        most max_position_embeddings); `do_lower_case` (default True, or the run's) must match the model."""
        files = read_model_directory(resolve(directory), checkpoint_name, spm_model_file)
        config = AlbertConfig.from_json_file(files.config)
        check_weights_fit(config, files.config)
        check_vocabulary(files, config)
        record = read_record(files.path)
        own = record is not None and record.model_class == cls.__name__  # the run's own task model
        recorded = record.preprocessing if own else {}
        if do_lower_case is None:
            do_lower_case = recorded.get("do_lower_case", True)
        if seq_length is None:
            seq_length = min(recorded.get("max_seq_length", DEFAULT_SEQ_LENGTH), config.max_position_embeddings)
        for name, value in _fixed_arguments(cls, files, record if own else None).items():
            arguments.setdefault(name, value)
        if "num_labels" in getattr(cls, "config_arguments", ()) and "num_labels" not in arguments:
            held = f"is {record.describe()}" if record is not None else f"holds no {cls.__name__} head"
            raise AlbertError(f"{cls.__name__}.from_pretrained: {directory} {held}; pass num_labels= to start a "
                              "fresh head on its encoder")
        if seq_length < 3:
            raise AlbertError(f"{cls.__name__}.from_pretrained: seq_length {seq_length} leaves no room for a piece "
                              "between [CLS] and [SEP]; pass at least 3")
        config.check_sequence_length(seq_length, f"{cls.__name__}.from_pretrained: seq_length", files.config)
        model = cls(config, **arguments)
        model.load_report = load_located(model, files.weights, files.format)
        if model.load_report.missing:
            log.warning("%s: freshly initialised (not in %s): %s", cls.__name__, files.weights,
                        ", ".join(model.load_report.missing))
        model.preprocessor = AlbertPreprocessor(files.spm_model, seq_length=seq_length,
                                                do_lower_case=do_lower_case, name="preprocessor")
        labels = record.labels if own else _config_labels(files) if record is None else None
        if labels is not None and hasattr(model, "labels") and len(labels) == getattr(model, "num_labels", -1):
            model.labels = labels
        if own and recorded.get("doc_stride") and hasattr(model, "doc_stride"):
            model.doc_stride = recorded["doc_stride"]
        return model


def _config_labels(files) -> tuple | None:
    """The label names a Hugging Face config.json gives (id2label), or None."""
    return huggingface.label_names(huggingface.read_config(files.weights)) if files.format == "huggingface" else None


def _fixed_arguments(cls, files, record) -> dict:
    """The constructor arguments of `cls` that the weights fix (a classifier's or a tagger's `num_labels`), from the
    run's `record` when it is this task's, else from the heads the weights hold when they are `cls`'s."""
    if "num_labels" not in getattr(cls, "config_arguments", ()):
        return {}
    if record is not None:
        return {"num_labels": 1 if record.regression else len(record.labels)}
    heads = heads_of(files)
    return {"num_labels": heads.num_labels} if heads.model_class == cls.__name__ else {}

