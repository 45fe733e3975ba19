"""The readers of a user's files as fuzz targets: each target writes one input (bytes) where its reader looks and
reads it; a seed corpus per target (small slices of the real files in ../shared, read in place, and files written
here); a deterministic mutator; and the judge of one outcome: a result, or one AlbertError line of bounded length
naming the file -- anything else (another exception, a message of several lines or without the file, a hang) is a
failure, keyed by (exception type, innermost place in albert/). A result is checked too: no lone surrogate, labels
and tags trimmed and on one line, no blank text, no word holding a space. Used by tests/test_reader_fuzz.py (the
fast tier) and tools/fuzz_readers.py (the long campaign)."""

import csv
import dataclasses
import functools
import gzip
import io
import json
import os
import random
import re
import signal
import time
import traceback

from albert.ground.errors import AlbertError
from albert.tasks.ner import conll
from albert.tasks.classification import glue
from albert.tasks.classification import own_data
from albert.tasks.race import examples as race
from albert.tasks.squad import examples as squad
from albert.tasks.squad import evaluate as squad_eval
from albert.data import corpus

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_MESSAGE = 1500  # the longest one-line refusal accepted: a few values of at most ~200 characters each, a path
PER_INPUT_SECONDS = 5.0  # an input read for longer than this is a hang


def shared() -> str:
    from tests.helpers import shared_directory
    return shared_directory()


# ------------------------------------------------------------------------------------------------------ targets
def _write(path: str, data: bytes | None) -> str:
    """`data` written at `path` (None: whatever is there already is read: a FIFO, a directory...)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if data is not None:
        with open(path, "wb") as f:
            f.write(data)
    return path


def _own(name, columns, **options):
    def read(data, work):
        path = _write(os.path.join(work, name), data)
        return own_data.read_rows(path, columns, **options)
    return read


def _ner(name, **options):
    def read(data, work):
        path = _write(os.path.join(work, name), data)
        return conll.read_sentences(path, **options)
    return read


def _glue(task_name, split):
    def read(data, work):
        task = glue.get_task(task_name)
        _write(os.path.join(work, task.directory, task.splits[split].file), data)
        return glue.read_examples(task, work, split)
    return read


def _squad(training, version_2=None):
    def read(data, work):
        return squad.read_examples(_write(os.path.join(work, "squad.json"), data), training, version_2=version_2)
    return read


def _own_task(name, columns):
    def read(data, work):
        return own_data.own_task({"train": _write(os.path.join(work, name), data)}, columns)
    return read


def _squad_eval(fuzzed):
    """squad_eval's reading and scoring of a data file and a predictions file, `fuzzed` being the input's and the
    other a good one (`_scored`)."""
    def read(data, work):
        paths = {name: _write(os.path.join(work, name), data if name == fuzzed else good)
                 for name, good in _scored().items()}
        return squad_eval.score_files(paths["data.json"], paths["pred.json"], log=io.StringIO())
    return read


def _race(file_name):
    def read(data, work):
        _write(os.path.join(work, "RACE", "train", "middle", file_name), data)
        return race.read_examples(work, "train", middle_only=True)
    return read


def _corpus(data, work):
    return list(corpus.read_lines(_write(os.path.join(work, "corpus.txt"), data)))


TARGETS = {  # name -> read(bytes, work directory): the reader's result for a file holding those bytes
    "own-csv": _own("train.csv", own_data.Columns("sentence", None, "label")),
    "own-csv-noheader": _own("train.csv", own_data.Columns(0, 1, 2), header=False),
    "own-tsv": _own("train.tsv", own_data.Columns("sentence", None, "label")),
    "own-tsv-test": _own("test.tsv", own_data.Columns(3, None, 1), header=False, labelled=False),
    "own-jsonl": _own("train.jsonl", own_data.Columns("sentence", "other", "label")),
    "own-json": _own("train.json", own_data.Columns("sentence", None, "label")),
    "conll": _ner("train.txt"),
    "conll-test": _ner("test.txt", labelled=False),
    "conll-iobes": _ner("train.txt", scheme="IOBES"),
    "ner-jsonl": _ner("train.jsonl"),
    "glue-sst-2": _glue("sst-2", "train"),
    "glue-cola": _glue("cola", "train"),
    "glue-rte": _glue("rte", "dev"),
    "glue-qnli-test": _glue("qnli", "test"),
    "glue-sts-b": _glue("sts-b", "train"),
    "own-csv-utf16": _own("train.csv", own_data.Columns("sentence", None, "label"),
                          encoding="utf-16"),
    "conll-latin1": _ner("train.txt", encoding="latin-1"),
    "squad-train": _squad(True),
    "squad-predict": _squad(False),
    "squad-predict-v1": _squad(False, version_2=False),
    "squad-eval-data": _squad_eval("data.json"),
    "squad-eval-predictions": _squad_eval("pred.json"),
    "own-task": _own_task("train.csv", own_data.Columns("sentence", None, "label")),
    "glue-qqp": _glue("qqp", "train"),
    "race-all": _race("all.txt"),
    "race-article": _race("1.txt"),
    "corpus": _corpus,
}

FILES = {  # target -> the file it reads, relative to its work directory
    "own-csv": "train.csv", "own-csv-noheader": "train.csv", "own-tsv": "train.tsv", "own-tsv-test": "test.tsv",
    "own-jsonl": "train.jsonl", "own-json": "train.json", "conll": "train.txt", "conll-test": "test.txt",
    "conll-iobes": "train.txt", "ner-jsonl": "train.jsonl", "glue-sst-2": "SST-2/train.tsv",
    "glue-cola": "CoLA/train.tsv", "glue-rte": "RTE/dev.tsv", "glue-qnli-test": "QNLI/test.tsv",
    "glue-sts-b": "STS-B/train.tsv", "own-csv-utf16": "train.csv", "conll-latin1": "train.txt",
    "squad-train": "squad.json", "squad-predict": "squad.json", "squad-predict-v1": "squad.json",
    "squad-eval-data": "data.json", "squad-eval-predictions": "pred.json", "own-task": "train.csv",
    "glue-qqp": "QQP/train.tsv",
    "race-all": "RACE/train/middle/all.txt", "race-article": "RACE/train/middle/1.txt", "corpus": "corpus.txt",
}

# ------------------------------------------------------------------------------------------------------- seeds
def _slice(path: str, offset: int, lines: int) -> bytes:
    """`lines` whole lines of the file from the first line start at or after `offset` (read in place)."""
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(1000 * lines)
    if offset:
        data = data[data.find(b"\n") + 1:]
    whole = [line for line in data.splitlines(keepends=True) if line.endswith(b"\n")]  # a cut last line left out
    return b"".join(whole[:lines])


def _real(relative: str, lines: int = 12, header: bool = False) -> list:
    path = os.path.join(shared(), relative)
    if not os.path.isfile(path):
        return []
    size = os.path.getsize(path)
    head = _slice(path, 0, 1) if header else b""
    return [head + _slice(path, offset, lines) if offset else _slice(path, 0, lines + 1)
            for offset in (0, size // 3, 2 * size // 3)]


def _sst_rows() -> list:
    rows = []
    for seed in _real("glue_real/SST-2/train.tsv", 10, header=True):
        for line in seed.decode("utf-8").splitlines()[1:]:
            text, _, label = line.rpartition("\t")
            rows.append((text, label))
    return rows or [("a fine film ", "1"), ("dull", "0")]


def _csv(rows, header=("sentence", "label"), **options) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, **options)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def _ner_jsonl(conll_bytes: bytes) -> bytes:
    lines, words, tags = [], [], []
    for line in conll_bytes.decode("utf-8").splitlines() + [""]:
        fields = line.split()
        if fields and fields[0] != "-DOCSTART-":
            words.append(fields[0])
            tags.append(fields[-1])
        elif words:
            lines.append(json.dumps({"tokens": words, "tags": tags}))
            words, tags = [], []
    return ("\n".join(lines) + "\n").encode("utf-8")


def _squad_file(rows) -> bytes:
    paragraphs = []
    for i, (text, _) in enumerate(rows[:4]):
        word = text.split()[0] if text.split() else text
        paragraphs.append({"context": text, "qas": [{"id": f"q{i}", "question": f"what of {word}?", "answers": [
            {"text": word, "answer_start": text.find(word)}], "is_impossible": False}]})
    return json.dumps({"version": "v2.0", "data": [{"title": "t", "paragraphs": paragraphs}]}, indent=1).encode()


@functools.lru_cache(1)
def _scored() -> dict:
    """The good data and predictions files squad_eval's targets read beside the fuzzed one."""
    rows = _sst_rows()
    return {"data.json": _squad_file(rows), "pred.json": json.dumps({"q0": rows[0][0], "q1": "", "q3": "x"}).encode()}


def _race_article(rows, number: int) -> dict:
    return {"id": f"middle{number}.txt", "article": " ".join(text for text, _ in rows[:3]),
            "questions": ["Which is true?", "The film is _ ."],
            "options": [[text for text, _ in rows[:4]], ["good", "bad", "long", "short"]], "answers": ["A", " B"]}


def seeds() -> dict:
    """target -> [bytes]: the seed corpus, deterministic; each target's seeds and the same files cut short (a copy
    or a download stopped half-way: a common user file)."""
    whole = _seeds()
    return {name: files + [data[:len(data) // 2 + 1] for data in files if len(data) > 2]
            for name, files in whole.items()}


def _seeds() -> dict:
    rows = _sst_rows()
    conll_real = _real("conll2003/train.txt", 16) + _real("conll2003/valid.txt", 10)
    sst = _real("glue_real/SST-2/train.tsv", 10, header=True)
    cola = _real("glue_real/CoLA/train.tsv", 10)
    rte = _real("glue_real/RTE/dev.tsv", 4, header=True)
    qnli = _real("glue_real/QNLI/dev.tsv", 4, header=True)
    own_csv = [_csv(rows[:8]), _csv(rows[8:16], quoting=csv.QUOTE_ALL),
               _csv([("say \"hi\", then\r\nleave", " 1 "), ("é, ü", "0")], lineterminator="\n"),
               b'sentence,label\n1, "a, b"\n"x""y",0\n']
    jsonl = [("\n".join(json.dumps({"sentence": t, "other": t[:5], "label": int(l) if l.isdigit() else l})
                        for t, l in rows[:8]) + "\n").encode(),
             b'{"sentence": "caf\\u00e9", "other": "x", "label": 1}\r\n\r\n{"sentence": "b", "other": "y", '
             b'"label": "0"}\r\n']
    conll_bytes = conll_real or [b"EU B-ORG\nrejects O\n\nPeter B-PER\n"]
    iobes = b"-DOCSTART- O\n\nEU S-ORG\nrejects O\nPeter B-PER\nBlackburn E-PER\n\n"
    sts = (b"index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n" +
           b"".join(f"{i}\tmain\tf\t2012\t{i}\tnone\tnone\t{t}\t{t[::-1]}\t{i % 5}.{i}\n".encode()
                    for i, (t, _) in enumerate(rows[:6])))
    race_all = ("\n".join(json.dumps(_race_article(rows[i:], i)) for i in range(3)) + "\n").encode()
    scored = _scored()
    labels = [(text, f"{label}.0") for text, label in rows[8:16]]  # numbers as a spreadsheet writes them
    qqp = b"id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n" + b"".join(
        f"{i}\t{2 * i}\t{2 * i + 1}\t{t}\t{t[::-1]}\t{i % 2}\n".encode() for i, (t, _) in enumerate(rows[:6])) + \
        b"7\t14\t15\ta question cut short\n"  # the released train file has rows too short: skipped
    corpus_text = ("\n".join(t for t, _ in rows[:6]) + "\n\n" + "\n".join(t for t, _ in rows[6:12]) + "\n").encode()
    return {
        "own-csv": own_csv,
        "own-csv-noheader": [b"a,b,1\r\n\"c\nd\",e, 0\r\n",
                             _csv([(t, t[:9], l) for t, l in rows[:5]], header=("x", "y", "z"))],
        "own-tsv": sst + [b"\xef\xbb\xbfsentence\tlabel\r\n\"quoted\"\t 1\r\nplain\t0\r\n"],
        "own-tsv-test": cola + [b"s\t1\t\tonly text\rs\t0\t\tmore\r"],
        "own-jsonl": jsonl,
        "own-json": [json.dumps([{"sentence": t, "label": l} for t, l in rows[:6]], indent=1).encode(),
                     b'[{"sentence": "a", "label": 1.0}, {"sentence": "b", "label": true}]'],
        "conll": conll_bytes,
        "conll-test": [b"\n".join(line.split(b" ")[0] for line in seed.split(b"\n")) for seed in conll_bytes[:3]],
        "conll-iobes": [iobes] + conll_bytes[:2],
        "ner-jsonl": [_ner_jsonl(seed) for seed in conll_bytes[:3]],
        "glue-sst-2": sst,
        "glue-cola": cola,
        "glue-rte": rte or [b"index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n"],
        "glue-qnli-test": [b"\n".join(line.rsplit(b"\t", 1)[0] for line in seed.split(b"\n")) for seed in qnli],
        "glue-sts-b": [sts],
        "own-csv-utf16": [data.decode("utf-8").encode("utf-16") for data in own_csv],
        "conll-latin1": [data.decode("utf-8").encode("latin-1", "replace") for data in conll_bytes[:3]] + [
            "Müller B-PER\r\nnaïve O\r\n\x85 O\r\n".encode("latin-1")],
        "squad-train": [_squad_file(rows)],
        "squad-predict": [_squad_file(rows[4:])],
        "squad-predict-v1": [_squad_file(rows[4:]).replace(b'"v2.0"', b'"1.1"')],
        "squad-eval-data": [scored["data.json"], scored["data.json"].replace(b'"v2.0"', b'"1.1"'),
                            _squad_file(rows[2:])],
        "squad-eval-predictions": [scored["pred.json"], json.dumps(
            {f"q{i}": text for i, (text, _) in enumerate(rows[:4])}, indent=1).encode()],
        "own-task": [_csv(labels), _csv(rows[:8])],
        "glue-qqp": [qqp],
        "race-all": [race_all],
        "race-article": [json.dumps(_race_article(rows, 0), indent=2).encode()],
        "corpus": [corpus_text, gzip.compress(corpus_text, mtime=0), b"\xef\xbb\xbfone\r\ntwo\rthree\u2028x\n"],
    }


# ----------------------------------------------------------------------------------------------------- mutator
TOKENS = (b"\r", b"\n", b"\r\n", b"\t", b" ", b'"', b'""', b",", b"\\", b"{", b"}", b"[", b"]", b":", b"\x00",
          b"\xff", b"\xef\xbb\xbf", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xc2\x85", b"\x0c", b"\x0b", b"\x1c",
          b"\\ud800", b"\\udc00", b'"\\ud83d\\ude00"', b"\\u0000", b"-DOCSTART-", b"B-", b"I-", b"E-", b"S-", b"O",
          b"-1", b"1e999", b"NaN", b"Infinity", b"true", b"null", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
          b'"sentence"', b'"label"', b'"tokens"', b'"tags"', b'"context"', b'"answer_start"', b'"answers"',
          b'"options"', b"\x1f\x8b", b" , ", b'{"a": 1, "a": 2}')
BIG = (b"9" * 5000, b"[" * 3000, b'{"a":' * 2000, b"x" * 3000, b"\t" * 500, b"\r" * 500, b'"' * 301)


def mutate(rng: random.Random, seed_list: list) -> bytes:
    """One input: random bytes, or a seed mutated one to four times (bit flips, tokens put in, slices removed or
    doubled, another seed spliced in, a cut)."""
    if not seed_list or rng.random() < 0.1:
        return bytes(rng.choice(b"\r\n\t \",{}[]:\\abc01-BIO\xff\xc3\xa9\x00") if rng.random() < 0.7
                     else rng.randrange(256) for _ in range(rng.randrange(0, 200)))
    data = bytearray(rng.choice(seed_list))
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(data))
        op = rng.randrange(8)
        if op == 0 and data:
            at = min(at, len(data) - 1)
            data[at] ^= 1 << rng.randrange(8)
        elif op in (1, 2):
            data[at:at] = rng.choice(TOKENS)
        elif op == 3 and data:
            end = min(len(data), at + rng.randint(1, 40))
            del data[at:end]
        elif op == 4:
            end = min(len(data), at + rng.randint(1, 60))
            data[at:at] = data[at:end] * rng.randint(1, 3)
        elif op == 5:
            other = rng.choice(seed_list)
            start = rng.randint(0, len(other))
            data[at:] = other[start:start + rng.randint(0, 300)] + data[at:]
        elif op == 6:
            del data[rng.randint(0, len(data)):]
        elif rng.random() < 0.3:
            data[at:at] = rng.choice(BIG)
    return bytes(data)


# ------------------------------------------------------------------------------------------------------- judge
@dataclasses.dataclass(frozen=True)
class Outcome:
    kind: str  # "result", "refused" (a good one-line AlbertError), or "failure"
    key: str = ""  # a failure's kind and place: "ValueError at albert/x.py:12 (f)", "hang", "message: ..."
    detail: str = ""  # the message or the traceback's last lines


class _Hang(BaseException):
    pass


def _alarm(signum, frame):
    raise _Hang()


def _place(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if f"{os.sep}albert{os.sep}" in f.filename]
    frame = (ours or frames or [None])[-1]
    if frame is None:
        return "?"
    return f"{os.path.relpath(frame.filename, ROOT)}:{frame.lineno} ({frame.name})"


_SURROGATE = re.compile("[\ud800-\udfff]")
_BREAK = re.compile(r"[\t\n\r]")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            yield from _strings(getattr(value, field.name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def result_fault(result) -> str | None:
    """What a reader's result breaks of the rules (None: nothing): no lone surrogate in any text; a label or tag
    trimmed, on one line; a text never blank (own files); a CoNLL word without a space or a tab."""
    if any(_SURROGATE.search(text) for text in _strings(result)):
        return "a lone surrogate in the result"
    for item in result if isinstance(result, list) else ():
        labels = [getattr(item, "label", None)] if hasattr(item, "text_a") and not isinstance(
            getattr(item, "label", None), float) else list(getattr(item, "tags", None) or ())
        if any(isinstance(x, str) and (x != x.strip() or _BREAK.search(x) or not x) for x in labels):
            return "a label or tag not trimmed, empty or holding a line break"
        if hasattr(item, "text_a") and hasattr(item, "line") and not item.text_a.strip():
            return "a row without text"
        if any(not word or " " in word or "\t" in word for word in getattr(item, "words", ())):
            return "a word empty or holding a space"
    return None


def message_fault(message: str, work: str) -> str | None:
    """What is wrong with a refusal's message (None: one line, bounded, naming the file)."""
    if len(message.splitlines()) != 1 or "\r" in message or "\n" in message:
        return "not one line"
    if len(message) > MAX_MESSAGE:
        return f"{len(message)} characters"
    if work not in message and repr(work)[1:-1] not in message:  # a path with a line break in it is quoted
        return "names no file"
    return None


def judge(name: str, data: bytes, work: str, seconds: float = PER_INPUT_SECONDS) -> Outcome:
    """Read `data` with target `name` in directory `work` (emptied of the previous input's files first; `data`
    None: read what is there)."""
    for directory, _, files in os.walk(work) if data is not None else ():
        for file in files:
            os.remove(os.path.join(directory, file))
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        result = TARGETS[name](data, work)
        fault = result_fault(result)
        outcome = Outcome("result") if fault is None else Outcome("failure", f"result: {fault}", repr(result)[:2000])
    except _Hang:
        outcome = Outcome("failure", "hang", f"over {seconds:g} s")
    except AlbertError as e:
        fault = message_fault(str(e), work)
        outcome = Outcome("refused", detail=str(e)) if fault is None else Outcome(
            "failure", f"message {fault} at {_place(e)}", str(e)[:2000])
    except Exception as e:  # noqa: BLE001 -- any other exception is what the fuzz looks for
        lines = traceback.format_exception(e)
        outcome = Outcome("failure", f"{type(e).__name__} at {_place(e)}", "".join(lines[-6:])[-2000:])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if outcome.kind != "failure" and time.monotonic() - started > seconds:
        outcome = Outcome("failure", "hang", f"over {seconds:g} s")
    return outcome
