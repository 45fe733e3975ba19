r"""Raw text -> TFRecords of masked-LM (n-gram, whole-word) + sentence-order instances, in the original format.

    python create_pretraining_data.py --input_file=corpus.txt --output_file=out/train.tfrecord \
        --spm_model_file=30k-clean.model --max_seq_length=512 --dupe_factor=40 --num_workers=8

Input: one sentence per line, a blank line between documents; comma-separated files or globs, plain or .gz,
local or gs://. The same --random_seed gives byte-identical files for any --num_workers.

    # the same job as an Apache Beam pipeline (pip install -r requirements-beam.txt); Beam's options pass through:
    python create_pretraining_data.py --input_file='corpus/*.txt' --output_file=out/train \
        --spm_model_file=30k-clean.model --runner=DirectRunner --direct_running_mode=multi_processing
    # on a dask.distributed cluster (dask scheduler; dask worker tcp://HOST:8786, the project on their PYTHONPATH):
    python create_pretraining_data.py ... --runner=DaskRunner --dask_client_address=tcp://HOST:8786
"""


import dataclasses

from albert.data import beam
from albert.data.beam import check_runner, import_beam, pipeline_options
from albert.data.corpus import expand_inputs
from albert.data.generator import generate
from albert.data.instances import Options
from albert.ground import cli
from albert.ground.errors import AlbertError
from albert.ground.settings_flags import at_least, define, setting
from albert.ground.stderr_filter import stderr_is_terminal
from albert.ground.validators import check_output_files
from albert.text.tokenization import FullTokenizer


def _input_file_mode(name: str, value: str):
    if value not in ("r", "rb"):
        raise AlbertError(f"--{name} must be r or rb, got {value!r}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class PretrainingData(Options):
    """create_pretraining_data.py's settings: the instances' Options, the files, the passes and the workers."""

    input_file: str = setting(help="Raw text file(s), comma-separated, globs allowed (plain or .gz).", group="inputs")
    output_file: str = setting(help="Output TFRecord file(s), comma-separated; instances go round-robin.",
                               group="inputs")
    vocab_file: str | None = setting(None, "WordPiece vocabulary (used when --spm_model_file is empty).", group="model")
    spm_model_file: str | None = setting(None, "SentencePiece model (e.g. 30k-clean.model).", group="model")
    input_file_mode: str = setting("r", "Kept for compatibility: input is always read as UTF-8 bytes.",
                                   check=_input_file_mode, group="compatibility")
    do_lower_case: bool = setting(True, "Lower-case the input.", group="model")
    random_seed: int = setting(12345, "Seed of every random choice: same seed, same bytes.", group="instances")
    dupe_factor: int = setting(40, "Passes over the corpus, each with new segmentation and masks.", check=at_least(1),
                               group="instances")
    num_workers: int = setting(1, "Worker processes (output is identical for any number).", check=at_least(1),
                               group="hardware")
    progress: bool = setting(True, "Show a progress bar on stderr.", group="inputs")
    runner: str | None = setting(None, "Run as an Apache Beam pipeline on this runner (DirectRunner, DaskRunner, "
                                 "DataflowRunner, FlinkRunner, SparkRunner, ...); Beam's own pipeline options pass "
                                 "through (DaskRunner: --dask_client_address=tcp://HOST:8786, else a local cluster). "
                                 "--output_file is then the prefix of <prefix>-00000-of-000NN shards. Needs pip "
                                 "install -r requirements-beam.txt.", group="hardware")
    num_output_shards: int = setting(0, "Output shards with --runner (0: about 256 MB each).",
                                     check=at_least(0), group="hardware")

    def options(self) -> Options:
        return Options(**{field.name: getattr(self, field.name) for field in dataclasses.fields(Options)})


DATA = define(PretrainingData)


def main(argv):
    unknown = argv[1:]
    if unknown and not DATA.value("runner"):
        raise AlbertError(f"unknown flag {unknown[0]!r}; see --help (Beam pipeline options need --runner)")
    s = DATA.build()
    if not s.spm_model_file and not s.vocab_file:
        raise AlbertError("--spm_model_file (SentencePiece) or --vocab_file (WordPiece) is required")
    if s.max_predictions_per_seq > s.max_seq_length - 3:
        raise AlbertError(f"--max_predictions_per_seq {s.max_predictions_per_seq} exceeds the tokens a sequence of "
                          f"--max_seq_length {s.max_seq_length} holds besides [CLS] and two [SEP]; pass at most "
                          f"{s.max_seq_length - 3}")

    input_files = expand_inputs(s.input_file)
    output_files = [p.strip() for p in s.output_file.split(",") if p.strip()]
    if s.runner:
        import_beam()  # one line naming the install command when Beam is missing
        check_runner(s.runner)
        pipeline_options(s.runner, unknown)
        if len(output_files) != 1:
            raise AlbertError("--runner writes shards named after one --output_file prefix; pass one path, not "
                              f"{len(output_files)}")
    check_output_files("output_file", output_files, (*input_files, s.spm_model_file, s.vocab_file))
    tokenizer = FullTokenizer(s.vocab_file, s.do_lower_case, s.spm_model_file)
    if s.runner:
        summary = beam.run(input_files, output_files[0], tokenizer, s.options(), runner=s.runner,
                           pipeline_args=unknown, do_lower_case=s.do_lower_case, dupe_factor=s.dupe_factor,
                           random_seed=s.random_seed, num_shards=s.num_output_shards)
        for line in summary.lines():
            print(line)
        print(f"wrote {summary.output_files[0]} ... {summary.output_files[-1]} (runner {s.runner})")
        return
    summary = generate(input_files, output_files, tokenizer, s.options(), do_lower_case=s.do_lower_case,
                       dupe_factor=s.dupe_factor, random_seed=s.random_seed, num_workers=s.num_workers,
                       progress=s.progress and stderr_is_terminal())
    for line in summary.lines():
        print(line)
    print("wrote " + ", ".join(output_files))


def command():
    """The command line: `python create_pretraining_data.py` and the console script albert-create-pretraining-data."""
    cli.run(main, pass_unknown=True)
