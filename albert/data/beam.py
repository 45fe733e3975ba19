"""create_pretraining_data as an Apache Beam pipeline: the same job on DirectRunner, Dask, Dataflow, Flink or Spark.

One algorithm with the local generator (albert/data/generator.py): each task -- an input file (its place in the
sorted list of inputs, its path) and a range of its passes, as the local generator's tasks -- goes through
`generator.file_records` -- the same random streams, the same 64-bit sort keys -- then every record is sent to the
output shard that holds its key range, each shard is sorted by key and written as TFRecords. Shard i holds the
keys in [i, i + 1) * 2^64 / N, so the shards in order are the global sort: their concatenation is, byte for byte,
the local generator's single-file output for the same seed.

The counts of the summary travel with the data, not in runner metrics (which Dask does not have): each task adds
one `Counts` element (its documents and instance statistics) to a shard's group, and each shard's write puts what
it received beside the shard (`<shard>.tmp-<job>.counts`, JSON), summed by the client after the run. The pipeline
is one chain with one sink, as the DaskRunner computes only the last transform's graph.

Shards are written under temporary names (`<prefix>-00000-of-00004.tmp-<job>`) and renamed when the pipeline has
finished; a failed pipeline leaves nothing under the final names and its temporary files are removed.
"""

import contextlib
import dataclasses
import json
import math
import os
import sys
import tempfile
import time
import uuid

from albert.data import beam_dask, generator
from albert.data.corpus import no_documents
from albert.data.instances import Options, Stats, Vocabulary
from albert.data.tfrecord import frame
from albert.ground import extras
from albert.ground.errors import AlbertError
from albert.ground.paths import is_remote

SHARD_BYTES = 256 << 20  # records per output shard, about: each shard is sorted in one worker's memory


def import_beam():
    """apache_beam, or one line naming the extra and its install command. Beam's import-time warnings (apitools) are
    dropped."""
    import logging

    extras.require("beam", "--runner")
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        import apache_beam
    except ImportError as error:  # there, but broken
        raise AlbertError(f"--runner: apache_beam is installed but does not import ({error}): "
                          f"{extras.EXTRAS['beam'].install()}") from None
    finally:
        root.setLevel(level)
    return apache_beam


def runner_path(name: str) -> str:
    """The name Beam takes for a --runner value: DaskRunner (which Beam knows only by its module path) mapped."""
    return beam_dask.RUNNER_PATH if beam_dask.is_dask(name) else name


def check_runner(name: str):
    """A runner name Beam knows (or a module path to one), checked before any work; the Dask runner also needs
    dask and distributed installed."""
    from apache_beam.options.pipeline_options import StandardOptions
    from apache_beam.runners.runner import create_runner

    if beam_dask.is_dask(name):
        extras.require("dask", f"--runner={name}")
    try:
        create_runner(runner_path(name))
    except (ValueError, ImportError, AttributeError):
        known = ", ".join((*StandardOptions.KNOWN_RUNNER_NAMES, "DaskRunner"))
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

    args = [f"--runner={runner_path(runner)}", *pipeline_args]
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


@dataclasses.dataclass
class Counts:
    """What a task made, for the summary: the file's documents (counted by its task with the first pass) and the
    instance statistics of its passes. It travels in the data, to one shard's write, which records it."""

    documents: int
    stats: Stats

    def to_json(self) -> dict:
        fields = dataclasses.asdict(self.stats)
        fields["ngram_draws"] = {str(n): times for n, times in self.stats.ngram_draws.items()}
        return {"documents": self.documents, "stats": fields}

    @classmethod
    def from_json(cls, value: dict) -> "Counts":
        fields = dict(value["stats"])
        stats = Stats(**{**fields, "ngram_draws": Stats().ngram_draws})
        stats.ngram_draws.update({int(n): times for n, times in fields["ngram_draws"].items()})
        return cls(value["documents"], stats)


def beam_tasks(files: list, dupe_factor: int) -> list:
    """(file index, path, first pass, end pass): a file with all its passes when there are enough files to keep a
    cluster busy (each file tokenized once), else one task per (file, pass), so that a few large files spread over
    the workers too (a worker keeps its last file's documents for its next task)."""
    return generator.make_tasks(files, dupe_factor, 1 if len(files) >= 16 else 8)


_DOCUMENTS = {}  # a worker process's last file: path -> tokenized documents


class _Job:
    """What the workers need (pickled to them): the tokenizer, the options, the seed, the shards."""

    def __init__(self, tokenizer, opts, do_lower_case, seed, num_shards, temp_names):
        self.tokenizer, self.opts, self.do_lower_case = tokenizer, opts, do_lower_case
        self.seed, self.num_shards, self.temp_names = seed, num_shards, temp_names
        self.vocab = Vocabulary.from_tokenizer(tokenizer)

    def _documents(self, path: str) -> list:
        if path not in _DOCUMENTS:
            documents = generator.tokenize_corpus([path], self.tokenizer, self.do_lower_case)
            generator.check_file_documents(path, documents, self.opts)
            _DOCUMENTS.clear()
            _DOCUMENTS[path] = documents
        return _DOCUMENTS[path]

    def records(self, task):
        """A task -> (shard, (key, file, pass, document, j, record)) for every instance it makes, then (shard,
        Counts) once."""
        file_index, path, lo, hi = task
        documents = self._documents(path)
        stats = Stats()
        for records, chunk_stats, _ in generator.file_records(documents, file_index, range(lo, hi), self.opts,
                                                              self.vocab, self.seed):
            stats.add(chunk_stats)
            for record in records:
                yield (record[0] * self.num_shards) >> 64, record
        yield (file_index + lo) % self.num_shards, Counts(len(documents) if lo == 0 else 0, stats)

    def write(self, shard_and_records):
        """Sort one shard by key and write it as TFRecords under its temporary name, and the Counts it received
        beside it."""
        from apache_beam.io.filesystems import FileSystems

        shard, elements = shard_and_records
        counts = [e for e in elements if isinstance(e, Counts)]
        records = sorted((e for e in elements if not isinstance(e, Counts)), key=lambda r: r[:5])
        with FileSystems.create(self.temp_names[shard]) as f:
            for record in records:
                f.write(frame(record[5]))
        with FileSystems.create(self.temp_names[shard] + ".counts") as f:
            f.write(json.dumps([c.to_json() for c in counts]).encode("utf-8"))
        return shard


def _gathered_counts(temps: list) -> tuple:
    """(documents, Stats) summed over the shards' .counts files."""
    from apache_beam.io.filesystems import FileSystems

    documents, stats = 0, Stats()
    for temp in temps:
        if FileSystems.exists(temp + ".counts"):
            with FileSystems.open(temp + ".counts") as f:
                for value in json.loads(f.read().decode("utf-8")):
                    counts = Counts.from_json(value)
                    documents += counts.documents
                    stats.add(counts.stats)
    return documents, stats


def run(input_files: list, output_prefix: str, tokenizer, opts: Options, *, runner: str,
        pipeline_args: list, do_lower_case: bool = True, dupe_factor: int = 40, random_seed: int = 12345,
        num_shards: int = 0) -> generator.Summary:
    """Run the pipeline; returns the local generator's Summary (documents, instance statistics, the shards)."""
    beam = import_beam()
    from apache_beam.io.filesystems import FileSystems

    start = time.time()
    files = sorted(input_files)
    tasks = beam_tasks(files, dupe_factor)
    dask = beam_dask.is_dask(runner)
    if dask:
        pipeline_args = beam_dask.with_partitions(pipeline_args, len(tasks))
    options = pipeline_options(runner, pipeline_args)
    num_shards = num_shards or default_shards(files, opts, dupe_factor)
    finals = shard_names(output_prefix, num_shards)
    job_id = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    temps = [f"{name}.tmp-{job_id}" for name in finals]
    job = _Job(tokenizer, opts, do_lower_case, random_seed, num_shards, temps)
    directory = os.path.dirname(os.path.abspath(output_prefix)) if not is_remote(output_prefix) else None
    made = directory is not None and not os.path.isdir(directory)
    if made:
        os.makedirs(directory)
    try:
        pipeline = beam.Pipeline(options=options)
        (pipeline
         | "tasks" >> beam.Create(tasks)
         | "spread" >> beam.Reshuffle()
         | "instances" >> beam.FlatMap(job.records)
         | "by shard" >> beam.GroupByKey()
         | "sort and write" >> beam.Map(job.write))
        with _captured_stderr() as captured:
            result = None
            try:
                if dask:  # a cluster given by address: reachable, with workers that can import this project
                    beam_dask.check_cluster(options)
                result = pipeline.run()
                if dask:
                    beam_dask.wait(result)
                else:
                    result.wait_until_finish()
                failure = None
            except Exception as e:
                failure = e
            finally:
                if dask:
                    beam_dask.close(result)  # the client, and a LocalCluster the runner started
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
        documents, stats = _gathered_counts(temps)
        # A shard with no key in its range has no group: write it empty, so that every name exists.
        for temp in temps:
            if not FileSystems.exists(temp):
                FileSystems.create(temp).close()
        if not documents:
            raise no_documents(files)
        FileSystems.rename(temps, finals)
    finally:
        leftovers = [name for t in temps for name in (t, t + ".counts") if FileSystems.exists(name)]
        if leftovers:
            FileSystems.delete(leftovers)
        if made and not os.listdir(directory):  # a failed run leaves no directory behind either
            os.rmdir(directory)
    return generator.Summary(documents, stats, time.time() - start, finals)
