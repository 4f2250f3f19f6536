"""Streaming readers for export files: JSON arrays, single JSON documents and JSON Lines, recognised by content."""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

import orjson

CHUNK = 1 << 20
SUFFIXES = (".json", ".jsonl", ".ndjson")


@dataclass
class FileReport:
    """What reading one file found wrong; nothing read is dropped without a line here."""

    path: Path
    problems: list[str] = field(default_factory=list)
    skipped: int = 0  # entries (or lines) that could not be read
    replaced_bytes: bool = False
    line: int = 0  # the JSON Lines line of the value last read (0: not JSON Lines)
    entry: int = 0  # the array element last read, counted from 1 (0: not an array)

    def where(self) -> str:
        """The file and the place in it of the value last read, as problems name it."""
        if self.line:
            return f"{self.path.name}:{self.line}"
        return f"{self.path.name}: entry {self.entry}" if self.entry else self.path.name


def list_files(folder: Path) -> list[Path]:
    """The export files of a folder, in a stable order; other files (notes, expected.yaml) are ignored."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)


def iter_documents(path: Path, report: FileReport) -> Generator[object, None, None]:
    """Every top-level JSON value of a file: elements of an array, the one document, or each JSON line."""
    with open(path, "rb") as fb:
        head = fb.read(4096)
    if b"\xef\xbb\xbf" == head[:3]:
        head = head[3:]
    first = head.lstrip()[:1]
    if not first:
        report.problems.append(f"{path.name}: empty file")
        return
    if first == b"[":
        yield from _iter_array(path, report)
    else:
        yield from _iter_doc_or_lines(path, report)


class NotFast(Exception):
    """A file the fast reader cannot vouch for; the caller reads it with iter_documents instead."""


def element(raw: bytes, loads=orjson.loads) -> dict:
    """One array element of an export, which the fast readers vouch for only when it is a JSON object."""
    try:
        doc = loads(raw)
    except orjson.JSONDecodeError:
        raise NotFast("element") from None
    if type(doc) is not dict:
        raise NotFast("element")
    return doc


ELEMENT_SEP = b"\n  },\n  {"  # between two elements of gcloud's 2-space-indented array
BLOCK = 16 << 20  # bytes read at a time by the fast reader; what it holds in memory, whatever the file size


SPAN_READ = 1 << 18  # bytes SpanReader reads at a time: the entries a pass visits are often far apart


class SpanReader:
    """Byte ranges of a file, read in sequential blocks (ranges must come in increasing order)."""

    def __init__(self, path: Path):
        self.f = open(path, "rb")
        self.buf, self.base = b"", 0

    def get(self, a: int, b: int) -> bytes:
        """The bytes [a, b) of the file."""
        end = self.base + len(self.buf)
        if not (self.base <= a and b <= end):
            if self.base <= a < end:
                keep = self.buf[a - self.base:]
            else:
                self.f.seek(a)
                keep = b""
            self.buf, self.base = keep + self.f.read(max(SPAN_READ, b - a - len(keep))), a
        at = a - self.base
        return self.buf[at:at + b - a]

    def close(self) -> None:
        self.f.close()


def _tail(path: Path, size: int, n: int = 1 << 16) -> tuple[int, bytes]:
    with open(path, "rb") as f:
        at = max(0, size - n)
        f.seek(at)
        return at, f.read()


def iter_spans(path: Path) -> Iterator[tuple[int, int, object, bytes]]:
    """(start, end, value, its bytes) for each element of a gcloud-format array or each line of a JSON Lines file.

    The fast path: elements are split on gcloud's indentation (`  {` ... `  }` at exactly two spaces, which
    only element boundaries have, since strings never hold raw newlines) and parsed with orjson. Anything it
    can't vouch for (another layout, a BOM, a value orjson rejects, bytes that are not UTF-8) raises NotFast
    before the caller commits what it read, so broken files are reported by iter_documents, position by position.
    """
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    stripped = head.lstrip(b" \t\r\n")
    if not stripped:
        raise NotFast("empty or blank start")
    lines = path.suffix.lower() in (".jsonl", ".ndjson")
    if stripped[:1] == b"[" and not lines:
        yield from _array_spans(path, size, head, len(head) - len(stripped))
    elif stripped[:1] == b"{" and lines:
        yield from _line_spans(path)
    else:
        raise NotFast("not a gcloud array or JSON Lines")


def array_bounds(path: Path, size: int, head: bytes, i: int) -> tuple[int, int]:
    """(start of the first element, end of the last) of a gcloud-format array; (-1, -1) for an empty array."""
    at, tail = _tail(path, size)
    close = tail.rfind(b"]")
    if close == -1 or tail[close + 1:].strip():
        raise NotFast("array not closed")
    first = head.find(b"{", i)
    if first == -1:
        if head[i + 1:].strip() == b"]" or (size <= len(head) and not head[i + 1:].strip(b" \t\r\n]")):
            return -1, -1  # an empty array
        raise NotFast("not an array of objects")
    if head[i + 1:first].strip():
        raise NotFast("not an array of objects")
    last = tail.rfind(b"\n  }", 0, close)
    if last == -1 or tail[last + 4:close].strip():
        raise NotFast("not gcloud's layout")
    return first, last + at + 4  # absolute end of the last element


def _array_spans(path: Path, size: int, head: bytes, i: int) -> Iterator[tuple[int, int, object, bytes]]:
    first, last = array_bounds(path, size, head, i)
    if first < 0:
        return
    loads = orjson.loads
    with open(path, "rb") as f:
        buf, base, pos = f.read(BLOCK), 0, first
        while True:
            j = buf.find(ELEMENT_SEP, pos - base)
            if j == -1 and base + len(buf) < last:
                more = f.read(BLOCK)
                if not more:
                    raise NotFast("file changed while read")
                buf, base = buf[pos - base:] + more, pos
                continue
            stop = last if j == -1 or base + j + 4 > last else base + j + 4
            raw = buf[pos - base:stop - base]
            yield pos, stop, element(raw, loads), raw
            if stop == last:
                return
            pos = stop + 4  # past ",\n  " to the next "{"


def _line_spans(path: Path) -> Iterator[tuple[int, int, object, bytes]]:
    loads = orjson.loads
    pos = 0
    with open(path, "rb") as f:
        for line in f:
            stop = pos + len(line)
            if line.strip():
                try:
                    obj = loads(line)
                except orjson.JSONDecodeError:
                    raise NotFast("line") from None
                yield pos, stop, obj, line
            pos = stop


def _open_text(path: Path, report: FileReport):
    # Bytes that are not UTF-8 are replaced, and the report says so, rather than failing the file.
    def errors_seen(err: UnicodeError) -> tuple[str, int]:  # registered for decoding only: a UnicodeDecodeError
        report.replaced_bytes = True
        return ("\ufffd", cast(UnicodeDecodeError, err).end)

    import codecs

    name = f"pw-replace-{id(report)}"
    codecs.register_error(name, errors_seen)
    return open(path, encoding="utf-8-sig", errors=name)


class _Window:
    """A sliding window over a text file: the unread text is buf[pos:]; more() appends the next chunk to it."""

    def __init__(self, f: IO[str]) -> None:
        self.f, self.buf, self.pos, self.eof = f, f.read(CHUNK), 0, False

    def more(self) -> bool:
        """Read the next chunk (dropping what was consumed); False at the end of the file."""
        if self.eof:
            return False
        chunk = self.f.read(CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buf, self.pos = self.buf[self.pos:] + chunk, 0
        return True


def _iter_array(path: Path, report: FileReport) -> Iterator[object]:
    dec = json.JSONDecoder()
    count = 0
    with _open_text(path, report) as f:
        w = _Window(f)
        w.pos = _skip_ws(w.buf, w.pos)
        w.pos += 1  # the '['
        while True:
            w.pos = _skip_ws(w.buf, w.pos)
            while w.pos >= len(w.buf):
                if not w.more():
                    report.problems.append(f"{path.name}: JSON array not closed after {count} entries (file truncated?)")
                    return
                w.pos = _skip_ws(w.buf, w.pos)
            ch = w.buf[w.pos]
            if ch == "]":
                return
            if ch == ",":
                w.pos += 1
                continue
            try:
                obj, end = dec.raw_decode(w.buf, w.pos)
            except RecursionError:  # nested deeper than the decoder's stack: step over the element without recursing
                if _past_deep(w, path, report, count):
                    continue
                return
            except json.JSONDecodeError as err:
                if _past_invalid(w, path, report, count, err):
                    continue
                return
            count += 1
            report.entry = count
            yield obj
            w.pos = end
            if w.pos > CHUNK:
                w.buf, w.pos = w.buf[w.pos:], 0


def _past_deep(w: _Window, path: Path, report: FileReport, count: int) -> bool:
    """Past an element nested too deeply to decode (or read more of it); False when the file ends inside it."""
    end = _value_end(w.buf, w.pos)
    if end == -1 and w.more():
        return True
    report.skipped += 1
    if end == -1:
        report.problems.append(f"{path.name}: entry {count + 1} is nested too deeply and cut off; the "
                               "file ends there")
        return False
    report.problems.append(f"{path.name}: entry {count + 1} is nested too deeply to read; skipped it")
    w.pos = end
    return True


def _past_invalid(w: _Window, path: Path, report: FileReport, count: int, err: json.JSONDecodeError) -> bool:
    """Past an element that is not JSON (or read more of it); False when no next element follows it."""
    if w.more():
        return True
    resync = _resync(w.buf, w.pos + 1)
    report.skipped += 1
    if resync == -1:
        report.problems.append(
            f"{path.name}: entry {count + 1} is cut off or not JSON ({_why(err)}); the file ends there"
        )
        return False
    report.problems.append(f"{path.name}: entry {count + 1} is not valid JSON ({_why(err)}); skipped it")
    w.pos = resync
    return True


def _why(err: json.JSONDecodeError) -> str:
    """The decoder's complaint as words that stand alone: json's messages end in "at" before a position it gives
    apart ("Unterminated string starting at"), a position in our read window, not in the file."""
    msg = err.msg.removesuffix(" starting at").removesuffix(" at")
    return msg[:1].lower() + msg[1:]


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _value_end(buf: str, pos: int) -> int:
    """The end of the array or object starting at buf[pos], found by counting brackets outside strings; -1 if cut."""
    depth = 0
    for m in _TOKEN.finditer(buf, pos):
        tok = m.group()
        if tok in "[{":
            depth += 1
        elif tok in "]}":
            depth -= 1
            if depth == 0:
                return m.end()
    return -1


def _skip_ws(buf: str, pos: int) -> int:
    n = len(buf)
    while pos < n and buf[pos] in " \t\r\n":
        pos += 1
    return pos


def _resync(buf: str, pos: int) -> int:
    """The start of the next array element after a broken one (an object opening a line), or -1."""
    i = buf.find("\n  {", pos)
    if i == -1:
        i = buf.find("\n{", pos)
    return -1 if i == -1 else i + 1


def _iter_doc_or_lines(path: Path, report: FileReport) -> Iterator[object]:
    with _open_text(path, report) as f:
        first_line = f.readline()
        rest_first = f.readline()
    single_line_doc = _loads(first_line) is not NOT_JSON and rest_first.strip()[:1] in ("{", "")
    if path.suffix.lower() in (".jsonl", ".ndjson") or single_line_doc:
        yield from _iter_lines(path, report)
        return
    with _open_text(path, report) as f:
        text = f.read()
    try:
        yield orjson.loads(text)
    except orjson.JSONDecodeError as err:
        report.skipped += 1
        report.problems.append(f"{path.name}: not valid JSON ({err.args[0] if err.args else err}); file skipped")


def _iter_lines(path: Path, report: FileReport) -> Iterator[object]:
    with _open_text(path, report) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            obj = _loads(line)
            if obj is NOT_JSON:
                report.skipped += 1
                report.problems.append(f"{path.name}:{lineno}: line is not valid JSON; skipped it")
                continue
            report.line = lineno
            yield obj


NOT_JSON = object()


def _loads(text: str) -> object:
    """The JSON value of text (None for `null`), or NOT_JSON."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return NOT_JSON
