"""create_pretraining_data as an Apache Beam pipeline: the same job on DirectRunner, Dataflow, Flink or Spark.

One algorithm with the local generator (albert/data/generator.py): each input file (its place in the sorted list
of inputs, its path) goes through `generator.file_records` -- the same random streams, the same 64-bit sort
keys -- then every record is sent to the output shard that holds its key range, each shard is sorted by key and
written as TFRecords. Shard i holds the keys in [i, i + 1) * 2^64 / N, so the shards in order are the global sort:
their concatenation is, byte for byte, the local generator's single-file output for the same seed.

Shards are written under temporary names (`<prefix>-00000-of-00004.tmp-<job>`) and renamed when the pipeline has
finished; a failed pipeline leaves nothing under the final names and its temporary files are removed.
"""

import contextlib
import math
import os
import sys
import tempfile
import uuid

from albert.data import generator
from albert.data.instances import Options, Vocabulary
from albert.data.tfrecord import frame
from albert.errors import AlbertError

INSTALL = "pip install -r requirements-beam.txt (or pip install .[beam])"
SHARD_BYTES = 256 << 20  # records per output shard, about: each shard is sorted in one worker's memory


def import_beam():
    """apache_beam, or one line naming the install command. Beam's import-time warnings (apitools) are dropped."""
    import logging

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        import apache_beam
    except ImportError:
        raise AlbertError(f"--runner needs Apache Beam, which is not installed: {INSTALL}") from None
    finally:
        root.setLevel(level)
    return apache_beam


def check_runner(name: str):
    """A runner name Beam knows (or a module path to one), checked before any work."""
    from apache_beam.options.pipeline_options import StandardOptions
    from apache_beam.runners.runner import create_runner

    try:
        create_runner(name)
    except (ValueError, ImportError, AttributeError):
        known = ", ".join(StandardOptions.KNOWN_RUNNER_NAMES)
        raise AlbertError(f"--runner {name!r} is not a Beam runner here; use one of {known} or the module path of "
                          "a PipelineRunner class") from None


def _worker_error(error: BaseException):
    """The AlbertError a worker raised (Beam wraps it, or passes only its text), else None."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, AlbertError):
            return error
        error = error.__cause__ or error.__context__
    return None


@contextlib.contextmanager
def _captured_stderr():
    """Everything written to file descriptor 2 while inside -- Beam's logging, its worker processes' INFO lines and
    tracebacks -- goes to a temporary file; yields a function returning what was captured."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        try:
            yield lambda: (sys.stderr.flush(), log.seek(0), log.read().decode("utf-8", "replace"))[-1]
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def pipeline_options(runner: str, pipeline_args: list):
    """Beam's PipelineOptions from the pass-through flags, checked before any work: a malformed value or a flag
    that is neither this program's nor Beam's is one line."""
    from apache_beam.options.pipeline_options import PipelineOptions

    args = [f"--runner={runner}", *pipeline_args]
    if not any(a.startswith("--default_sdk_harness_log_level") for a in args):
        args.append("--default_sdk_harness_log_level=WARNING")
    with _captured_stderr() as captured:
        try:
            options = PipelineOptions(args)
            options.get_all_options(retain_unknown_options=False)
        except SystemExit:
            lines = [line for line in captured().splitlines() if ": error: " in line]
            reason = lines[-1].split(": error: ", 1)[1] if lines else "not valid"
            raise AlbertError(f"a Beam pipeline option: {reason}; see --help and Beam's options for "
                              f"{runner}") from None
        discarded = [line for line in captured().splitlines() if "Discarding unparseable args" in line]
    if discarded:
        raise AlbertError(f"unknown flag(s) {discarded[-1].split('args:', 1)[1].strip()}: neither this program's "
                          "nor a Beam pipeline option; see --help")
    return options


def shard_names(prefix: str, num_shards: int) -> list:
    return [f"{prefix}-{i:05d}-of-{num_shards:05d}" for i in range(num_shards)]


def default_shards(input_files: list, opts: Options, dupe_factor: int) -> int:
    """Enough shards for about SHARD_BYTES of records each (estimated from the inputs' sizes)."""
    return max(1, math.ceil(generator.estimated_record_bytes(input_files, opts, dupe_factor) / SHARD_BYTES))


class _Job:
    """What the workers need (pickled to them): the tokenizer, the options, the seed, the shards."""

    def __init__(self, tokenizer, opts, do_lower_case, dupe_factor, seed, num_shards, temp_names):
        self.tokenizer, self.opts, self.do_lower_case = tokenizer, opts, do_lower_case
        self.dupe_factor, self.seed, self.num_shards, self.temp_names = dupe_factor, seed, num_shards, temp_names
        self.vocab = Vocabulary.from_tokenizer(tokenizer)

    def records(self, item):
        """(file index, path) -> (shard, (key, file, pass, document, j, record)) for every instance of the file."""
        from apache_beam.metrics import Metrics

        file_index, path = item
        documents = generator.tokenize_corpus([path], self.tokenizer, self.do_lower_case)
        generator.check_file_documents(path, documents, self.opts)
        Metrics.counter("albert", "documents").inc(len(documents))
        instances = Metrics.counter("albert", "instances")
        for records, stats, _ in generator.file_records(documents, file_index, range(self.dupe_factor),
                                                              self.opts, self.vocab, self.seed):
            instances.inc(len(records))
            Metrics.counter("albert", "tokens").inc(stats.tokens)
            for record in records:
                yield (record[0] * self.num_shards) >> 64, record

    def write(self, shard_and_records):
        """Sort one shard by key and write it as TFRecords under its temporary name."""
        from apache_beam.io.filesystems import FileSystems

        shard, records = shard_and_records
        records = sorted(records, key=lambda r: r[:5])
        with FileSystems.create(self.temp_names[shard]) as f:
            for record in records:
                f.write(frame(record[5]))
        return shard


def run(input_files: list, output_prefix: str, tokenizer, opts: Options, *, runner: str,
        pipeline_args: list, do_lower_case: bool = True, dupe_factor: int = 40, random_seed: int = 12345,
        num_shards: int = 0) -> dict:
    """Run the pipeline; returns {"output_files": [...], "documents": n, "instances": n, "tokens": n}."""
    beam = import_beam()
    from apache_beam.io.filesystems import FileSystems

    options = pipeline_options(runner, pipeline_args)

    files = sorted(input_files)
    num_shards = num_shards or default_shards(files, opts, dupe_factor)
    finals = shard_names(output_prefix, num_shards)
    job_id = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    temps = [f"{name}.tmp-{job_id}" for name in finals]
    job = _Job(tokenizer, opts, do_lower_case, dupe_factor, random_seed, num_shards, temps)
    directory = os.path.dirname(os.path.abspath(output_prefix)) if "://" not in output_prefix else None
    made = directory is not None and not os.path.isdir(directory)
    if made:
        os.makedirs(directory)
    try:
        pipeline = beam.Pipeline(options=options)
        (pipeline
         | "files" >> beam.Create(list(enumerate(files)))
         | "spread" >> beam.Reshuffle()
         | "instances" >> beam.FlatMap(job.records)
         | "by shard" >> beam.GroupByKey()
         | "sort and write" >> beam.Map(job.write))
        with _captured_stderr() as captured:
            try:
                result = pipeline.run()
                result.wait_until_finish()
                failure = None
            except Exception as e:
                failure = e
            log = captured()
        if failure is not None:
            error = _worker_error(failure)
            if error is not None:
                raise error from None
            text = str(failure) + "\n" + log
            if "AlbertError: " in text:  # the worker's exception crossed a process boundary as text
                message = text[text.rindex("AlbertError: ") + len("AlbertError: "):]
                for end in ("\n", "\\n", " [while running"):
                    message = message.split(end, 1)[0]
                raise AlbertError(message.strip()) from None
            sys.stderr.write(log)
            raise failure
        counters = {c.key.metric.name: c.committed if c.committed is not None else c.attempted
                    for c in result.metrics().query()["counters"]}
        # A shard with no key in its range has no group: write it empty, so that every name exists.
        for temp in temps:
            if not FileSystems.exists(temp):
                FileSystems.create(temp).close()
        if not counters.get("documents"):
            raise AlbertError(f"{', '.join(files)}: no documents (no non-blank line); the input must be text, one "
                              "sentence per line, a blank line between documents")
        FileSystems.rename(temps, finals)
    finally:
        leftovers = [t for t in temps if FileSystems.exists(t)]
        if leftovers:
            FileSystems.delete(leftovers)
        if made and not os.listdir(directory):  # a failed run leaves no directory behind either
            os.rmdir(directory)
    return {"output_files": finals, **{k: counters.get(k, 0) for k in ("documents", "instances", "tokens")}}
