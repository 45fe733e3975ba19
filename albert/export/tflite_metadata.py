"""TFLite metadata in a model.tflite: what MediaPipe Tasks (TextClassifier, TextEmbedder) and the TFLite Task
Library (BertNLClassifier, BertQuestionAnswerer) read to run the file on raw text.

    blob = with_metadata(blob, Described("ALBERT SST-2 classifier", "...", sp_model, labels=["0", "1"]))

What goes in, in the public metadata schema (`metadata_schema.fbs` of tflite-support / MediaPipe, file identifier
`M001`), written here with the `flatbuffers` package (a TensorFlow dependency):
- the model's name, description, version and license, and `min_parser_version` 1.1.0 (input process units);
- a TensorMetadata per input in the subgraph's order, named by role: `ids`, `mask`, `segment_ids` (the names both
  runtimes look up), `p_mask` for SQuAD 2.0; and per output, named as the SavedModel's outputs (`logits`,
  `start_logits` / `end_logits`, `pooled_output`, ...); the classifier's output carries `labels.txt`
  (TENSOR_AXIS_LABELS: the GLUE label names, one per line, in the logits' order);
- the tokenizer as the subgraph's input process unit, its file one of the associated files: for SentencePiece,
  `albert.text.device_spm.preprocessing_model` of the export's model, so that the runtime's SentencePiece does the
  original's preprocessing and gives the original's ids; for a WordPiece vocabulary (`--vocab_file`), BERT's
  tokenizer with that vocabulary.
The TFLite model gets a `TFLITE_METADATA` entry pointing to a buffer holding that flatbuffer, and the associated
files travel in a zip archive appended to the flatbuffer (the file stays a valid TFLite model and a valid zip).
"""

import dataclasses
import io
import zipfile

import flatbuffers
import numpy as np
import tensorflow as tf
from tensorflow.lite.python import schema_py_generated as schema
from tensorflow.lite.tools import flatbuffer_utils

from albert.export.options import TFLITE_METADATA
from albert.ground.errors import AlbertError
from albert.text.device_spm import preprocessing_model

METADATA_NAME = "TFLITE_METADATA"
IDENTIFIER = b"M001"
MIN_PARSER_VERSION = "1.1.0"  # input_process_units and SentencePieceTokenizerOptions were added in 1.1.0
INPUT_ROLES = {"input_ids": "ids", "input_word_ids": "ids", "input_mask": "mask", "segment_ids": "segment_ids",
               "input_type_ids": "segment_ids", "p_mask": "p_mask"}
ROLE_DESCRIPTIONS = {
    "ids": "Token ids of the input text: [CLS] text [SEP] (and text_b [SEP] for a pair), 0-padded.",
    "mask": "1 for real tokens, 0 for padding.",
    "segment_ids": "0 for the first text, 1 for the second if there is one.",
    "p_mask": "1 for tokens that cannot be part of an answer (the question, [SEP], padding), 0 for context tokens.",
}
SPM_FILE, VOCAB_FILE, LABELS_FILE = "sentencepiece.model", "vocab.txt", "labels.txt"

# Field slots (declaration order; a union takes two: its type, then its value) and enum values of the schema.
ASSOCIATED_FILE = {"name": 0, "description": 1, "type": 2}
UNKNOWN_FILE, TENSOR_AXIS_LABELS, VOCABULARY = 0, 2, 5
SENTENCEPIECE_OPTIONS = {"sentencePiece_model": 0}
BERT_OPTIONS = {"vocab_file": 0}
PROCESS_UNIT = {"options_type": 0, "options": 1}
BERT_TOKENIZER, SENTENCEPIECE_TOKENIZER = 4, 5  # ProcessUnitOptions
CONTENT = {"content_properties_type": 0, "content_properties": 1}
FEATURE_PROPERTIES = 1  # ContentProperties.FeatureProperties
TENSOR = {"name": 0, "description": 1, "content": 3, "associated_files": 6}
SUBGRAPH = {"name": 0, "description": 1, "input_tensor_metadata": 2, "output_tensor_metadata": 3,
            "input_process_units": 5}
MODEL = {"name": 0, "description": 1, "version": 2, "subgraph_metadata": 3, "author": 4, "license": 5,
         "min_parser_version": 7}


@dataclasses.dataclass
class Described:
    """What a model.tflite's metadata says. `sp_model`: the SentencePiece model (serialized) the runtime tokenizes
    with, or `vocab`: a WordPiece vocabulary (vocab.txt's bytes); `labels`: the classifier's label names (None: no
    label file; `regression` says the one output is a score); `outputs`: a description per output name."""
    name: str
    description: str
    sp_model: bytes | None = None
    vocab: bytes | None = None
    labels: list | None = None
    regression: bool = False
    outputs: dict = dataclasses.field(default_factory=dict)
    version: str = ""
    author: str = "albert (ALBERT for TensorFlow 2 / Keras 3)"
    license: str = "Apache-2.0"


def signature_tensors(blob: bytes) -> tuple:
    """([input names], [output names]) of a model.tflite's one signature, in its subgraph's tensor order."""
    model = schema.Model.GetRootAs(blob, 0)
    signature = model.SignatureDefs(0)
    graph = model.Subgraphs(signature.SubgraphIndex())
    by_index = [{}, {}]
    for side, (count, entry) in enumerate(((signature.InputsLength(), signature.Inputs),
                                           (signature.OutputsLength(), signature.Outputs))):
        for i in range(count):
            by_index[side][entry(i).TensorIndex()] = entry(i).Name().decode()
    inputs = [by_index[0][graph.Inputs(i)] for i in range(graph.InputsLength())]
    outputs = [by_index[1][graph.Outputs(i)] for i in range(graph.OutputsLength())]
    return inputs, outputs


def metadata_flatbuffer(described: Described, inputs: list, outputs: list) -> bytes:
    """The ModelMetadata flatbuffer (identifier M001) for a model whose signature has `inputs` and `outputs`
    (names, in the subgraph's order)."""
    b = flatbuffers.Builder(1024)

    def table(slots: dict, values: dict) -> int:
        """A table from already-built offsets (int), strings (str) and scalars ((byte,) tuples)."""
        built = {k: b.CreateString(v) if isinstance(v, str) else v for k, v in values.items() if v is not None}
        b.StartObject(max(slots.values()) + 1)
        for key, value in built.items():
            if isinstance(value, tuple):
                b.PrependInt8Slot(slots[key], value[0], 0)
            else:
                b.PrependUOffsetTRelativeSlot(slots[key], value, 0)
        return b.EndObject()

    def vector(offsets: list) -> int:
        b.StartVector(4, len(offsets), 4)
        for offset in reversed(offsets):
            b.PrependUOffsetTRelative(offset)
        return b.EndVector()

    def associated(name: str, description: str, kind: int) -> int:
        return table(ASSOCIATED_FILE, {"name": name, "description": description, "type": (kind,)})

    def features() -> int:
        b.StartObject(0)
        properties = b.EndObject()
        return table(CONTENT, {"content_properties_type": (FEATURE_PROPERTIES,), "content_properties": properties})

    def tensor(name: str, description: str, files: list | None = None) -> int:
        files = vector(files) if files else None
        return table(TENSOR, {"name": name, "description": description, "content": features(),
                              "associated_files": files})

    roles = [INPUT_ROLES.get(name, name) for name in inputs]
    input_tensors = [tensor(role, ROLE_DESCRIPTIONS.get(role, role)) for role in roles]
    output_tensors = []
    for name in outputs:
        files = None
        if described.labels and name == "logits":
            files = [associated(LABELS_FILE, "The label of each logit, one per line.", TENSOR_AXIS_LABELS)]
        text = described.outputs.get(name) or (
            "The regression score." if described.regression and name == "logits" else name)
        output_tensors.append(tensor(name, text, files))
    if described.sp_model is not None:
        model_file = associated(SPM_FILE, "SentencePiece model that does the original ALBERT preprocessing "
                                "(whitespace, accents stripped, lower case) before its own normalization.",
                                UNKNOWN_FILE)
        options = table(SENTENCEPIECE_OPTIONS, {"sentencePiece_model": vector([model_file])})
        kind = SENTENCEPIECE_TOKENIZER
    else:
        vocab_file = associated(VOCAB_FILE, "WordPiece vocabulary, one token per line.", VOCABULARY)
        options, kind = table(BERT_OPTIONS, {"vocab_file": vector([vocab_file])}), BERT_TOKENIZER
    tokenizer = table(PROCESS_UNIT, {"options_type": (kind,), "options": options})
    subgraph = table(SUBGRAPH, {"name": described.name, "description": described.description,
                                "input_tensor_metadata": vector(input_tensors),
                                "output_tensor_metadata": vector(output_tensors),
                                "input_process_units": vector([tokenizer])})
    root = table(MODEL, {"name": described.name, "description": described.description,
                         "version": described.version or None, "subgraph_metadata": vector([subgraph]),
                         "author": described.author, "license": described.license,
                         "min_parser_version": MIN_PARSER_VERSION})
    b.Finish(root, file_identifier=IDENTIFIER)
    return bytes(b.Output())


def associated_files(described: Described) -> dict:
    """{name: bytes} of the files the metadata names."""
    files = {SPM_FILE: described.sp_model} if described.sp_model is not None else {VOCAB_FILE: described.vocab}
    if described.labels:
        files[LABELS_FILE] = "".join(f"{label}\n" for label in described.labels).encode()
    return files


def with_metadata(blob: bytes, described: Described) -> bytes:
    """`blob` (a model.tflite's bytes, without metadata) with the metadata of `described` and its associated
    files."""
    inputs, outputs = signature_tensors(blob)
    model = flatbuffer_utils.convert_bytearray_to_object(bytearray(blob))
    entry = schema.MetadataT()
    entry.name = METADATA_NAME
    entry.buffer = len(model.buffers)
    buffer = schema.BufferT()
    buffer.data = np.frombuffer(metadata_flatbuffer(described, inputs, outputs), np.uint8)
    model.buffers.append(buffer)
    model.metadata = [m for m in (model.metadata or []) if m.name not in (METADATA_NAME, METADATA_NAME.encode())]
    model.metadata.append(entry)
    out = io.BytesIO(bytes(flatbuffer_utils.convert_object_to_bytearray(model)))
    out.seek(0, io.SEEK_END)
    with zipfile.ZipFile(out, "a", zipfile.ZIP_STORED) as archive:
        for name, data in associated_files(described).items():
            archive.writestr(name, data)
    return out.getvalue()


def describe(choice: str, name: str, description: str, spm_model_file: str | None, vocab_file: str | None,
             do_lower_case: bool, **details) -> Described | None:
    """The metadata of a task's model.tflite for `--tflite_metadata` `choice` (None for `none`): its tokenizer
    from the run's SentencePiece model (made to do the original's preprocessing) or WordPiece vocabulary."""
    if choice not in TFLITE_METADATA:
        raise AlbertError(f"--tflite_metadata {choice!r} is unknown; use one of {', '.join(TFLITE_METADATA)}")
    if choice == "none":
        return None
    if spm_model_file:
        with tf.io.gfile.GFile(spm_model_file, "rb") as f:
            return Described(name, description, sp_model=preprocessing_model(f.read(), do_lower_case), **details)
    with tf.io.gfile.GFile(vocab_file, "rb") as f:
        return Described(name, description, vocab=f.read(), **details)
