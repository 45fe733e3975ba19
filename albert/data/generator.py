"""The create_pretraining_data job: corpus files -> keyed instances (in parallel) -> globally shuffled TFRecords.

Reproducible: a document is identified by (its file's place in the sorted list of inputs, its place in the file);
every (file, pass, document) has its own random stream derived from the seed, and each instance gets a random
64-bit sort key from that stream; the output is the instances in key order, written round-robin over the output
files. Nothing depends on the number of workers or on the order in which they finish, so the same seed gives the
same bytes for any `num_workers` -- and for the Beam pipeline (albert/data/beam.py), built from the same
`file_records`.

Memory independent of the corpus: files are read one at a time (a worker holds one tokenized file; next-sentence
negatives and single-sentence chunks draw their random document from the same file, as the original's one-job-per-
shard habit did), instances are spilled to temporary bucket files by the top bits of their key and each bucket is
sorted alone (about `bucket_bytes`). Bucketing by the key's top bits keeps the order a global sort by key.
"""

import contextlib
import dataclasses
import math
import multiprocessing
import os
import queue
import random
import shutil
import sys
import tempfile
import time

import numpy as np

from albert.ground.atomic import die_with_parent, new_directories, remove_leftovers, replacing_files
from albert.data.corpus import no_documents, read_documents
from albert.data.example_proto import serialize_examples
from albert.data.features import pretraining_features
from albert.data.instances import Options, Stats, Vocabulary, create_instances_from_document
from albert.data.spill import Spiller, assemble, merge_bucket
from albert.ground.errors import AlbertError
from albert.ground.paths import file_size, is_remote, open_file
from albert.text.tokenization import encode_ids, preprocess_text

_CHUNK_DOCUMENTS = 64  # documents serialized together (a few hundred records)
_STATE = {}  # set before the worker processes fork, read by them: the corpus is shared, not pickled


@dataclasses.dataclass
class Summary:
    documents: int
    stats: Stats
    seconds: float
    output_files: list

    def lines(self) -> list:
        s = self.stats
        draws = sum(s.ngram_draws.values()) or 1
        replaced = (s.replaced_mask + s.replaced_keep + s.replaced_random) or 1
        return [
            f"documents {self.documents:,}, instances {s.instances:,}, tokens {s.tokens:,} "
            f"(in {len(self.output_files)} file(s), {self.seconds:.1f} s, {s.instances / max(self.seconds, 1e-9):,.0f} "
            "instances/s)",
            f"masked {s.masked:,} = {s.masked / max(s.tokens, 1):.4f} of tokens; replacements [MASK] "
            f"{s.replaced_mask / replaced:.3f} / kept {s.replaced_keep / replaced:.3f} / random "
            f"{s.replaced_random / replaced:.3f}",
            "n-gram lengths drawn: " + ", ".join(f"{n}: {s.ngram_draws[n] / draws:.3f}" for n in sorted(s.ngram_draws)),
            f"labels: in order {s.instances - s.random_next:,} "
            f"({(s.instances - s.random_next) / max(s.instances, 1):.3f}),"
            f" swapped/random {s.random_next:,} ({s.random_next / max(s.instances, 1):.3f})",
        ]


def _instance_arrays(instances: list, opts: Options) -> dict:
    """Pad a list of instances into the feature arrays of the original record."""
    spec = pretraining_features(opts.max_seq_length, opts.max_predictions_per_seq, opts.do_permutation)
    count, seq, predictions = len(instances), opts.max_seq_length, spec["masked_lm_ids"][1]
    arrays = {name: np.zeros((count, length), np.float32 if dtype == "float32" else np.int64)
              for name, (dtype, length) in spec.items()}
    for row, instance in enumerate(instances):
        n, p = len(instance.tokens), len(instance.masked_lm_positions)
        arrays["input_ids"][row, :n] = instance.tokens
        arrays["input_mask"][row, :n] = 1
        arrays["segment_ids"][row, :n] = instance.segment_ids
        arrays["token_boundary"][row, :n] = instance.token_boundary
        arrays["masked_lm_positions"][row, :p] = instance.masked_lm_positions
        arrays["masked_lm_ids"][row, :p] = instance.masked_lm_ids
        arrays["masked_lm_weights"][row, :p] = 1.0
        arrays["next_sentence_labels"][row, 0] = int(instance.is_random_next)
        assert n <= seq and p <= predictions
    return arrays


def _document_rng(seed: int, file_index: int, dupe: int, doc: int) -> random.Random:
    return random.Random(f"albert/{seed}/{file_index}/{dupe}/{doc}")


def check_file_documents(path: str, documents: list, opts: Options):
    """A file whose pairs would take segment B from the document itself is refused (its random documents come
    from the same file)."""
    if documents and len(documents) < 2 and (opts.random_next_sentence or len(documents[0]) < 2):
        raise AlbertError(f"{path}: one document of {len(documents[0])} sentence(s): its pairs would take segment B "
                          "from itself; give each input file at least two documents (a blank line between them)")


def file_records(documents: list, file_index: int, dupes, opts: Options, vocab, seed: int):
    """Yield (records, stats, pass) for the tokenized `documents` of one input file, a chunk of documents at a time,
    for each pass in `dupes`; a record is (key, file_index, pass, document, j, serialized tf.train.Example)."""
    cumulative = opts.ngram_cumulative()
    for dupe in dupes:
        for lo in range(0, len(documents), _CHUNK_DOCUMENTS):
            stats = Stats()
            instances, keys = [], []
            for doc in range(lo, min(lo + _CHUNK_DOCUMENTS, len(documents))):
                rng = _document_rng(seed, file_index, dupe, doc)
                made = create_instances_from_document(documents, doc, opts, vocab, rng, stats,
                                                                       cumulative)
                instances.extend(made)
                keys.extend((rng.getrandbits(64), file_index, dupe, doc, j) for j in range(len(made)))
            records = serialize_examples(_instance_arrays(instances, opts)) if instances else []
            yield [(*key, record) for key, record in zip(keys, records)], stats, dupe


def _file_documents(path: str) -> list:
    """The tokenized documents of one input file; the last one read is kept (a worker's consecutive tasks share
    their file)."""
    cache = _STATE.setdefault("cache", {})
    if path not in cache:
        cache.clear()
        documents = tokenize_corpus([path], _STATE["tokenizer"], _STATE["do_lower_case"])
        check_file_documents(path, documents, _STATE["options"])
        cache[path] = documents
    return cache[path]


def _run_task(task, spiller, report):
    """Make the instances of one file's passes [lo, hi) and spill them; report(stats, instances, documents) after
    each pass (the file's documents counted with its first pass)."""
    file_index, path, lo, hi = task
    documents = _file_documents(path)
    for dupe in range(lo, hi):
        stats, count = Stats(), 0
        for records, chunk_stats, _ in file_records(documents, file_index, [dupe], _STATE["options"],
                                                    _STATE["vocab"], _STATE["seed"]):
            for item in records:
                spiller.add(*item)
            stats.add(chunk_stats)
            count += len(records)
        report(stats, count, len(documents) if dupe == 0 else 0)


def estimated_tokens(input_files: list) -> float:
    """Tokens in the corpus, estimated from the files' sizes (gzip counted as 3x): sizes the sort buckets."""
    total = 0.0
    for path in input_files:
        size = file_size(path)
        with open_file(path, "rb") as f:
            gzipped = f.read(2) == b"\x1f\x8b"
        total += size * (3 if gzipped else 1)
    return total / 4.0  # about 4 bytes of English text a SentencePiece / WordPiece token


def estimated_record_bytes(input_files: list, opts, dupe_factor: int) -> float:
    """Bytes of serialized instances the job will make, estimated from the inputs' sizes (sizes the sort buckets
    and the Beam shards)."""
    instances = dupe_factor * estimated_tokens(input_files) / (0.9 * (opts.max_seq_length - 3)) * 1.1
    predictions = opts.max_predictions_per_seq * (2 if opts.do_permutation else 1)
    return instances * (6 * opts.max_seq_length + 12 * predictions + 150)


def _bucket_bits(record_bytes: float, bucket_bytes: int) -> int:
    """log2 of the number of buckets: enough for about `bucket_bytes` of records each (at most 4096 buckets)."""
    return min(12, max(0, math.ceil(math.log2(max(1.0, record_bytes / bucket_bytes)))))


class _Progress:
    def __init__(self, total_tasks: int, enabled: bool):
        self.total, self.done, self.instances = total_tasks, 0, 0
        self.enabled, self.start, self.last = enabled, time.time(), 0.0

    def update(self, instances: int):
        self.done += 1
        self.instances += instances
        now = time.time()
        if self.enabled and (now - self.last > 0.5 or self.done == self.total):
            self.last = now
            width = 30
            filled = int(width * self.done / self.total)
            rate = self.instances / max(now - self.start, 1e-9)
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done / self.total:4.0%} "
                             f"{self.instances:,} instances, {rate:,.0f}/s")
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def tokenize_corpus(input_files: list, tokenizer, do_lower_case: bool) -> list:
    """Documents of token ids, normalised as the original: `preprocess_text` for SentencePiece, strip for WordPiece."""
    if tokenizer.sp_model is not None:
        sp_model = tokenizer.sp_model
        return read_documents(input_files, lambda text: encode_ids(sp_model, text),
                              lambda line: preprocess_text(line, lower=do_lower_case))
    return read_documents(input_files, tokenizer.tokenize_to_ids, str.strip)


def _run_worker(worker_id: int, tasks, results, spill_dir: str, bucket_bits: int):
    """A generation worker: make the instances of each task and spill them to its own bucket files."""
    die_with_parent()
    try:
        spiller = Spiller(spill_dir, bucket_bits, f"w{worker_id}")
        for task in iter(tasks.get, None):
            _run_task(task, spiller, lambda *message: results.put(("pass", *message)))
        results.put(("done", spiller.close()))
    except BaseException as e:  # reported to the parent, which raises it
        results.put(("error", e))


def _generate_parallel(tasks, num_workers, spill_dir, bucket_bits, report) -> list:
    """Phase 1 in `num_workers` forked processes; returns the records per bucket."""
    context = multiprocessing.get_context("fork")
    task_queue, results = context.Queue(), context.Queue()
    for task in tasks:
        task_queue.put(task)
    for _ in range(num_workers):
        task_queue.put(None)
    workers = [context.Process(target=_run_worker, args=(w, task_queue, results, spill_dir, bucket_bits),
                               daemon=True) for w in range(num_workers)]
    for worker in workers:
        worker.start()
    counts, finished = [0] * (1 << bucket_bits), 0
    try:
        while finished < num_workers:
            try:
                message = results.get(timeout=1.0)
            except queue.Empty:
                dead = [w.exitcode for w in workers if w.exitcode not in (None, 0)]
                if dead:
                    raise RuntimeError(f"a data-generation worker died (exit code {dead[0]})") from None
                continue
            if message[0] == "pass":
                report(*message[1:])
            elif message[0] == "done":
                counts = [x + y for x, y in zip(counts, message[1])]
                finished += 1
            else:
                raise message[1]
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
            worker.join()
    return counts


def make_tasks(input_files: list, dupe_factor: int, num_workers: int) -> list:
    """(file index, path, first pass, end pass) over the sorted inputs: a file with all its passes when there are
    enough files to keep the workers busy (each file tokenized once), else one task per (file, pass)."""
    files = sorted(input_files)
    if num_workers == 1 or len(files) >= 2 * num_workers:
        return [(i, path, 0, dupe_factor) for i, path in enumerate(files)]
    return [(i, path, dupe, dupe + 1) for i, path in enumerate(files) for dupe in range(dupe_factor)]


def generate(input_files: list, output_files: list, tokenizer, opts: Options, *,
             do_lower_case: bool = True, dupe_factor: int = 40, random_seed: int = 12345, num_workers: int = 1,
             bucket_bytes: int = 16 << 20, progress: bool = False) -> Summary:
    start = time.time()
    vocab = Vocabulary.from_tokenizer(tokenizer)
    tasks = make_tasks(input_files, dupe_factor, num_workers)
    bucket_bits = _bucket_bits(estimated_record_bytes(input_files, opts, dupe_factor), bucket_bytes)
    for path in output_files:
        if not is_remote(path):  # what a killed earlier run left beside this output (its pid is gone)
            remove_leftovers(*os.path.split(os.path.abspath(path)))
    with contextlib.ExitStack() as stack:  # a failed run leaves no output, and no directory it made, behind
        for directory in sorted({os.path.dirname(os.path.abspath(p)) for p in output_files if not is_remote(p)}):
            stack.enter_context(new_directories(directory))
        temp_outputs = stack.enter_context(replacing_files(output_files))
        spill_dir = _spill_directory(output_files[0])
        stats = Stats()
        meter = _Progress(len(input_files) * dupe_factor, progress)
        documents = [0]

        def report(pass_stats, instances, file_documents):
            stats.add(pass_stats)
            documents[0] += file_documents
            meter.update(instances)

        _STATE.update(options=opts, vocab=vocab, seed=random_seed, tokenizer=tokenizer, do_lower_case=do_lower_case)
        try:
            if num_workers > 1:
                counts = _generate_parallel(tasks, num_workers, spill_dir, bucket_bits, report)
            else:
                spiller = Spiller(spill_dir, bucket_bits, "w0")
                for task in tasks:
                    _run_task(task, spiller, report)
                counts = spiller.close()
            if not documents[0]:
                raise no_documents(input_files)
            firsts = [sum(counts[:b]) for b in range(len(counts))]
            jobs = [(spill_dir, b, firsts[b], len(output_files)) for b in range(len(counts))]
            if num_workers > 1 and len(jobs) > 1:
                with multiprocessing.get_context("fork").Pool(min(num_workers, len(jobs)), die_with_parent) as pool:
                    pool.starmap(merge_bucket, jobs)
            else:
                for job in jobs:
                    merge_bucket(*job)
            assemble(spill_dir, len(counts), temp_outputs)
        finally:
            _STATE.clear()
            shutil.rmtree(spill_dir, ignore_errors=True)
        return Summary(documents[0], stats, time.time() - start, list(output_files))


def _spill_directory(first_output: str) -> str:
    """The spill directory: beside the first local output (`.<name>.spill-<pid>-...`, so that a killed run's is found
    and removed by the next run), in the system's temporary directory for a remote output."""
    if is_remote(first_output):
        return tempfile.mkdtemp(prefix="albert-pretraining-data-")
    directory, name = os.path.split(os.path.abspath(first_output))
    os.makedirs(directory, exist_ok=True)
    return tempfile.mkdtemp(prefix=f".{name}.spill-{os.getpid()}-", dir=directory)
