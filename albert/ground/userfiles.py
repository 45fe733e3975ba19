"""Every file a user hands over, opened, decoded and split here, once: the readers of tasks/ and data/ (own
classification files, CoNLL and JSON Lines, GLUE, SQuAD and RACE files, pretraining corpora) build their examples
from what this module yields, so one set of rules holds for all of them.

    opening     what the OS refused (a missing file, permission, a directory, a FIFO, a device) is one line with the
                OS's reason; a FIFO or a device is never read (it could block forever or never end).
    decoding    the encoding a user names (--encoding), a byte order mark dropped, a byte the encoding cannot read one
                line naming file:line and the fix.
    line ends   LF, CRLF and CR end a line in every format (outside a CSV field's quotes); U+2028, U+2029, U+0085,
                form feed and the other Unicode separators are text, as in a CSV or TSV reader.
    CSV         RFC 4180 (fields holding commas, quotes and line ends are quoted, quotes doubled); a quoted field may
                follow spaces (`1, "a, b"` reads `a, b`); text after a closing quote is refused.
    widths      a CSV or TSV row holds as many fields as its file's first line (`check_width`): one of more or fewer
                is refused, never read with its cells in other columns.
    JSON        albert.ground.user_json (parsed with the same rules, one line naming file:line).
    cells       label and tag cells trimmed of surrounding whitespace, texts kept as written; a label or tag holding
                a tab or a line break is refused (it could not be written back on one line).
Every message is one line, values quoted and cut (albert.ground.errors.shown).
"""

import codecs
import itertools
import json
import os
import re
import stat

from albert.ground.errors import AlbertError, shown, shown_path

LINE_END = re.compile(r"\r\n|\r|\n")
_BYTE_LINE_END = re.compile(rb"\r\n|\r|\n")
_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")  # tabs, line breaks, other control characters
UTF8_FIX = "save the file as UTF-8"
ENCODING_FIX = "pass the file's encoding with --encoding (e.g. --encoding=latin-1)"
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def where(path, line: int | None = None) -> str:
    """`path` or `path:line`, as every message begins."""
    return shown_path(path) if line is None else f"{shown_path(path)}:{line}"


# ------------------------------------------------------------------------------------------------------- opening
def read_bytes(path: str, what: str = "file") -> bytes:
    """The bytes of the regular file `path` (`what` names it in messages: "--train_file", "SQuAD file", ...)."""
    with _opened(path, what) as f:
        try:
            return f.read()
        except OSError as e:
            raise AlbertError(f"{shown_path(path)}: cannot read the {what} ({e.strerror})") from None


def check_readable(path: str, what: str = "file"):
    """The checks of `read_bytes` without the reading: the file exists, is a regular file and may be opened."""
    with _opened(path, what):
        pass


def _opened(path: str, what: str):
    """`path` opened for reading, once it is known to be a regular file (a FIFO opens at once without blocking, and is
    refused before anything is read)."""
    name = shown_path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise AlbertError(f"{name}: {what} not found") from None
    except OSError as e:
        raise AlbertError(f"{name}: cannot read the {what} ({e.strerror})") from None
    try:
        _check_regular(os.fstat(fd).st_mode, name, what)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _check_regular(mode: int, name: str, what: str):
    if stat.S_ISDIR(mode):
        raise AlbertError(f"{name}: is a directory; pass the {what} itself")
    for test, kind in _KINDS:
        if test(mode):
            raise AlbertError(f"{name}: is {kind}, not a regular file; pass a regular file as the {what}")


# ------------------------------------------------------------------------------------------------------ decoding
def codec(encoding: str) -> str:
    """The codec an --encoding names, or one line."""
    try:
        return codecs.lookup(encoding).name
    except (LookupError, TypeError, ValueError):
        raise AlbertError(f"--encoding {shown(encoding)} is not an encoding Python knows (e.g. utf-8, latin-1, "
                          "cp1252)") from None


def decode(data: bytes, path: str, encoding: str = "utf-8", fix: str = UTF8_FIX) -> str:
    """`data` (the bytes of `path`) as text, a leading byte order mark left out; a byte the encoding cannot read is
    one line naming the line and `fix`."""
    name = codec(encoding)
    try:
        text = data.decode(name)
    except UnicodeDecodeError as e:
        line = line_of(data[:e.start].decode(name, "replace"), None)
        said = "UTF-8" if name == "utf-8" else name
        if fix == ENCODING_FIX:
            fix = f"pass the file's encoding with --encoding (e.g. --encoding={likely_encoding(data)})"
        raise AlbertError(f"{where(path, line)}: byte 0x{data[e.start]:02x} is not {said} text; {fix}") from None
    if name not in _NO_SURROGATES:
        check_no_surrogate(text, path)
    return text.removeprefix("\ufeff")


def likely_encoding(data: bytes) -> str:
    """The encoding a file that is not UTF-8 most likely has, for a message's example: UTF-16 (a byte order mark,
    or a NUL in every other byte of ASCII text), cp1252 (Windows: bytes 0x80-0x9f, its curly quotes and dashes),
    else latin-1."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or data[:200].count(0) * 3 >= len(data[:200]) > 0:
        return "utf-16"
    return "cp1252" if any(0x80 <= byte <= 0x9f for byte in data) else "latin-1"


_NO_SURROGATES = {"utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be", "utf-8-sig",
                  "latin-1", "ascii", "iso8859-1"}  # codecs that never give one (they refuse such bytes)
_SURROGATE_CHARACTER = re.compile("[\ud800-\udfff]")


def check_no_surrogate(text: str, path: str):
    """A text decoded by a codec that can yield lone UTF-16 surrogates (utf-7, unicode_escape, ...) holds none: they
    are no characters, and no tokenizer or UTF-8 file can take them."""
    match = _SURROGATE_CHARACTER.search(text)
    if match:
        raise AlbertError(f"{where(path, line_of(text, match.start()))}: {shown(match.group())} is half of a UTF-16 "
                          "surrogate pair, not a character; save the file as UTF-8")


def read_text(path: str, what: str = "file", encoding: str = "utf-8", fix: str = UTF8_FIX) -> str:
    """A user's text file, whole and decoded."""
    return decode(read_bytes(path, what), path, encoding, fix)


# ----------------------------------------------------------------------------------------------------- line ends
def lines(text: str) -> list:
    """The lines of `text` split at LF, CRLF and CR (a final line end ends the last line; it starts none)."""
    parts = LINE_END.split(text)
    if parts[-1] == "":
        parts.pop()
    return parts


def line_of(text: str, offset: int | None) -> int:
    """The 1-based line of character `offset` of `text` (None: its end)."""
    return len(LINE_END.findall(text if offset is None else text[:offset])) + 1


def stream_lines(raw, path: str, chunk: int = 1 << 20):
    """(line number, text) of a binary file object read in chunks (flat memory, linear time however long a line),
    split at LF, CRLF and CR, each line decoded as strict UTF-8, a byte order mark at the start left out."""
    number, held, after_cr = 0, [], False

    def decoded(data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise AlbertError(f"{where(path, number)}: invalid UTF-8 (byte {e.start + 1} of the line); the corpus "
                              "must be UTF-8 text") from None

    first = raw.read(3).removeprefix(b"\xef\xbb\xbf")  # the byte order mark, before any line is split
    for data in itertools.chain([first], iter(lambda: raw.read(chunk), b"")):
        if after_cr and data.startswith(b"\n"):
            data = data[1:]  # the LF of a CRLF whose CR ended the previous chunk
        after_cr = data.endswith(b"\r")
        if not data:
            continue
        parts = _BYTE_LINE_END.split(data)  # only the new bytes are searched
        held.append(parts[0])
        if len(parts) == 1:
            continue
        number += 1
        yield number, decoded(b"".join(held))
        for part in parts[1:-1]:
            number += 1
            yield number, decoded(part)
        held = [parts[-1]]
    if any(held):
        number += 1
        yield number, decoded(b"".join(held))


# ------------------------------------------------------------------------------------------------ CSV and TSV
def tsv_records(text: str):
    """(line, fields) of tab-separated values: one record a line, a quote is text (GLUE's files, the IANA format);
    an empty line is a record of no fields."""
    for number, line in enumerate(lines(text), 1):
        yield number, line.split("\t") if line else []


def csv_records(text: str, path: str, delimiter: str = ","):
    """(line a record starts on, fields) of RFC 4180 CSV. Outside quotes LF, CRLF and CR end a record; inside they
    are kept as written. A field whose first character after spaces is a quote is a quoted field; text after its
    closing quote, or a quote never closed, is one line naming file:line."""
    d = re.escape(delimiter)
    opening = re.compile(r'[ \t]*"')
    quoted = re.compile(r'[ \t]*"((?:[^"]++|"")*+)"[ \t]*')  # possessive: a quote never closed fails at once
    unquoted = re.compile(rf"[^{d}\r\n]*")
    position, line, size = 0, 1, len(text)
    while position < size:
        start, fields = line, []
        while True:
            if opening.match(text, position):
                match = quoted.match(text, position)
                if match is None:
                    raise AlbertError(f"{where(path, line)}: a quote opens field {len(fields) + 1} and is never "
                                      "closed; close it, or double the quotes inside a quoted field (\"\")")
                value = match.group(1)
                if "\r" in value or "\n" in value:
                    line += len(LINE_END.findall(value))
                fields.append(value.replace('""', '"'))
                position = match.end()
                if position < size and text[position] not in (delimiter, "\r", "\n"):
                    raise AlbertError(f"{where(path, line)}: text after the closing quote of field {len(fields)}; "
                                      "quote the whole field, doubling the quotes inside it (\"\")")
            else:
                match = unquoted.match(text, position)
                fields.append(match.group())
                position = match.end()
            if position < size and text[position] == delimiter:
                position += 1
                continue
            if position < size:
                position += 2 if text.startswith("\r\n", position) else 1
                line += 1
            break
        yield start, fields


_WIDTH_FIX = {",": "put a field holding a comma in double quotes (\"a, b\")",
              "\t": "a TSV cell cannot hold a tab: take the tab out of the text"}


def check_width(fields: list, width: int, place: str, delimiter: str, first: str = "the header"):
    """A CSV or TSV row holds as many fields as the first line of its file (`first`: "the header", or "the first
    row" of a file without one): a row of more had a separator inside a text, a row of fewer lost a cell, and
    either would put another cell in a column (a text's second half read as its label). One line naming `place`."""
    if len(fields) == width:
        return
    said = f"{len(fields)} field{'' if len(fields) == 1 else 's'} where {first} has {width}"
    if len(fields) > width:
        raise AlbertError(f"{place}: {said}; {_WIDTH_FIX[delimiter]}")
    separators = "commas" if delimiter == "," else "tabs"
    raise AlbertError(f"{place}: {said}; give the row a cell for every column (an empty cell is nothing between two "
                      f"{separators})")


_JSON_KINDS = ((bool, "a boolean"), (int, "a number"), (float, "a number"), (list, "an array"), (dict, "an object"))


def described(value) -> str:
    """A JSON value as a message says it, for a field of the wrong type: `'false' (a string)`, `1 (a number)`,
    `null`, `["a"] (an array)`; its JSON text in ASCII (nothing in it can break the line), cut after 60 characters."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"{shown(value)} (a string)"
    try:
        text = json.dumps(value)
    except (RecursionError, ValueError):
        text = "…"
    kind = next((name for cls, name in _JSON_KINDS if isinstance(value, cls)), type(value).__name__)
    return f"{text if len(text) <= 60 else text[:60] + '…'} ({kind})"


# -------------------------------------------------------------------------------------------------------- cells
def label_cell(value: str, place: str, what: str = "label") -> str | None:
    """A label or tag cell trimmed of surrounding whitespace (None when nothing is left); one holding a tab or a line
    break inside is one line naming `place` (file:line)."""
    text = value.strip()
    if _BREAKS.search(text):
        fix = " (a NUL: is the file UTF-16? pass --encoding=utf-16)" if "\x00" in text else ""
        raise AlbertError(f"{place}: {what} {shown(value)} holds a tab, a line break or another control character; "
                          f"a {what} is one line of text{fix}")
    return text or None


def column_index(flag: str, value) -> int:
    """A column given by 0-based index: an int, or ASCII digits (`²` and other Unicode digits are no index)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,9}", value):
        return int(value)
    raise AlbertError(f"{flag} {shown(value)}: a file without a header names its columns by 0-based index (e.g. 0)")
