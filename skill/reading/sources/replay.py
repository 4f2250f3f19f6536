"""The replay source: an exported incident folder, evaluated with the same filters the live source sends."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import cast
from itertools import chain, islice, repeat
from operator import add
from pathlib import Path

from ...errors import InputError
import msgspec
import orjson

from ..objects import usable_objects
from ..evaluate import compile_filter
from .inventory import Inventory, is_k8s_object, is_log_entry, tally
from .heads import Routes, ascii_or_utf8, iter_blocks, decode_head, get_ts, load_entry, route_ids, spooled, usual, utc_times, verbatim, verbatim_text
from .passes import capped, planned
from .index import FileIndex, LineCounter
from .plan import compile_route_filter, route_plan, text_gate
from .spool import bulk_patterns
from ..records import parse_ts, parse_utc
from .base import LogQuery, SourceStats
from .files import FileReport, NotFast, SpanReader, element, iter_documents, iter_spans, list_files
from .metrics import SeriesSet, is_series_doc

MAX_PROBLEMS_PER_FILE = 5
SAMPLE = 16  # values read to decide whether a file holds log entries or Kubernetes objects
LIST_ITEM_KIND = {"PodList": "Pod", "EventList": "Event", "NodeList": "Node", "JobSetList": "JobSet", "JobList": "Job"}


class ReplaySource:
    """An export folder: gcloud LogEntry arrays or JSON Lines, and kubectl JSON, recognised by content."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        if not self.folder.exists():
            raise InputError(f"{self.folder}: no such folder")
        if not self.folder.is_dir():
            raise InputError(f"{self.folder}: not a folder (pass the folder that holds the exported files)")
        self.files = list_files(self.folder)
        if not self.files:
            raise InputError(f"{self.folder}: no *.json, *.jsonl or *.ndjson files to read")
        self.stats = SourceStats(files=len(self.files))
        self._objects: list[dict] = []  # every object with a metadata.uid, as loaded
        self._checked: list[dict] | None = None
        self._log_files: list[Path] = []
        self._reported: set[Path] = set()
        self._counted: set[Path] = set()
        self._indexed = False
        self._index: dict[Path, FileIndex] = {}
        self._skeletons: list[dict] = []
        self._routes = Routes(self._skeletons)
        self.metrics = SeriesSet()  # time series exported beside the logs (skill.reading.sources.metrics)
        self._scan()

    def _scan(self) -> None:
        """Sort files into log exports and object exports; load the (small) object files whole.

        A file's kind is what most of its first SAMPLE values are, so a stray value at the start does not decide
        it; the values of the other kind are reported skipped by whichever reader takes the file.
        """
        for path in self.files:
            report = FileReport(path)
            docs = iter_documents(path, report)
            head = list(islice(docs, SAMPLE))
            if sum(map(is_log_entry, head)) > sum(map(is_k8s_object, head)):
                self._log_files.append(path)
                docs.close()
                continue
            for doc in chain(head, docs):
                self._take_object(doc, path, report)
            self._finish(report)
        self.stats.gaps += [g for g in self.metrics.problems if g not in self.stats.gaps]
        self.stats.last_ts = max(self.stats.last_ts, self.metrics.last_ts)  # the data ends with its last point too

    def _take_object(self, doc: object, path: Path, report: FileReport) -> None:
        if is_k8s_object(doc):
            kind = doc["kind"]
            if kind.endswith("List") and isinstance(doc.get("items"), list):
                item_kind = LIST_ITEM_KIND.get(kind)
                for item in doc["items"]:
                    if isinstance(item, dict) and item_kind and "kind" not in item:
                        item = {**item, "kind": item_kind, "apiVersion": doc.get("apiVersion", "v1")}
                    self._take_object(item, path, report)
                return
            if isinstance(doc.get("metadata"), dict) and doc["metadata"].get("uid"):
                self._objects.append(doc)
                return
            self._problem(report, f"{path.name}: {kind} without metadata.uid; skipped it")
        elif is_series_doc(doc):
            self.metrics.take(doc, path.name)
        elif is_log_entry(doc):
            self._problem(report, f"{path.name}: a log entry inside a file of Kubernetes objects; skipped it")
        else:
            self._problem(report, f"{path.name}: neither a LogEntry export nor Kubernetes objects; skipped it")

    def _problem(self, report: FileReport, text: str) -> None:
        report.skipped += 1
        report.problems.append(text)

    def _finish(self, report: FileReport) -> None:
        """Copy a file's problems into the stats once, however many passes read it."""
        if report.path in self._reported:
            return
        self._reported.add(report.path)
        self.stats.entries_skipped += report.skipped
        problems = report.problems
        for text in problems[:MAX_PROBLEMS_PER_FILE]:
            self.stats.gap(text)
        if len(problems) > MAX_PROBLEMS_PER_FILE:
            self.stats.gap(f"{report.path.name}: {len(problems) - MAX_PROBLEMS_PER_FILE} more problems like these")
        if report.replaced_bytes:
            self.stats.gap(f"{report.path.name}: bytes that are not UTF-8 were replaced with U+FFFD")

    def objects(self) -> list[dict]:
        """The Kubernetes objects in the shape the engine reads; the others are counted skipped and named in the
        gaps, once."""
        if self._checked is None:
            self._checked = usable_objects(self._objects, self.stats)
        return self._checked

    def loaded_objects(self) -> list[dict]:
        """Every object with a metadata.uid as loaded, before the shape check (what list_events has always read)."""
        return self._objects

    def iter_entries(self) -> Iterator[dict]:
        """Every usable LogEntry of every log file, streamed; problems and counts are taken once."""
        for _ts, entry in self.iter_timed():
            yield entry

    def iter_timed(self) -> Iterator[tuple[int, dict]]:
        """(timestamp ns, LogEntry) for every usable entry, in file order; the time is parsed once."""
        self._ensure_index()
        for path in self._log_files:
            yield from self._file_timed(path)

    def _file_timed(self, path: Path) -> Iterator[tuple[int, dict]]:
        """(timestamp ns, LogEntry) for every usable entry of one log file, in file order."""
        idx = self._index.get(path)
        if idx is None:
            yield from self._slow_timed(path)
            return
        reader = SpanReader(path)
        try:
            for ts, a, b in zip(idx.ts, idx.start, idx.end):
                yield ts, orjson.loads(reader.get(a, b))
        finally:
            reader.close()

    def _slow_timed(self, path: Path) -> Iterator[tuple[int, dict]]:
        """The reference reader: every document through iter_documents, every problem reported with its place."""
        report = FileReport(path)
        first_pass = path not in self._counted
        for doc in iter_documents(path, report):
            ts = self._usable(doc, path, report)
            if not ts:
                continue
            if first_pass:
                self._count(ts)
            yield ts, cast(dict, doc)  # a usable entry (a timestamp) is a LogEntry
        self._counted.add(path)
        self._finish(report)

    def _usable(self, doc: object, path: Path, report: FileReport, lines: LineCounter | None = None,
                offset: int = 0) -> int:
        """The entry's timestamp in ns, or 0 after reporting why it can't be used (and where: `lines` counts them)."""
        if not is_log_entry(doc):
            where = lines.where(offset) if lines else report.where()
            what = "a Kubernetes object" if is_k8s_object(doc) else _json_type(doc)
            self._problem(report, f"{where}: {what}, not a LogEntry; skipped it")
            return 0
        if not isinstance(doc.get("insertId"), str) or not doc["insertId"]:
            where = lines.where(offset) if lines else report.where()
            self._problem(report, f"{where}: a LogEntry without insertId; skipped it")
            return 0
        ts = parse_ts(doc.get("timestamp")) or parse_ts(doc.get("receiveTimestamp"))
        if not ts:
            self._problem(report, f"{path.name}: entry {doc['insertId']} has no usable timestamp; skipped it")
        return ts

    def _count(self, ts: int) -> None:
        self.stats.entries_read += 1
        if ts > self.stats.last_ts:
            self.stats.last_ts = ts
        if not self.stats.first_ts or ts < self.stats.first_ts:
            self.stats.first_ts = ts

    # -- the index: one parse of every entry, then only entries whose routing fields can match are parsed again --

    def _ensure_index(self) -> None:
        if self._indexed:
            return
        self._indexed = True
        for path in self._log_files:
            self._index_file(path)

    def _index_file(self, path: Path) -> None:
        """Index one log file (or read it with the reference reader), counting its entries and problems once."""
        idx = self._build_index(path)
        if idx is None:  # the reference reader takes the file (and reports its problems) instead
            for _ in self._slow_timed(path):
                pass
            return
        self._index[path] = idx
        for ts in (idx.first_ts, idx.last_ts):
            if ts:
                self.stats.last_ts = max(self.stats.last_ts, ts)
                self.stats.first_ts = min(self.stats.first_ts, ts) if self.stats.first_ts else ts
        self.stats.entries_read += len(idx.ts)
        self._counted.add(path)
        self._finish(idx.report)

    def _build_index(self, path: Path) -> FileIndex | None:
        """The file's index: a gcloud array block by block (routing fields typed, no dict per entry), JSON Lines line
        by line; None when the reference reader must take the file (a value orjson rejects, another layout)."""
        report = FileReport(path)
        idx = FileIndex(report)
        try:
            if path.suffix.lower() in (".jsonl", ".ndjson"):
                lines = LineCounter(path)
                for a, b, doc, raw in iter_spans(path):
                    self._take_doc(idx, a, b, doc, raw, path, report, lines)
            else:
                for base, block, starts, ends in iter_blocks(path):
                    self._take_block(idx, base, block, starts, ends, path, report)
        except NotFast:
            idx.spool.close()
            return None
        idx.finish()
        return idx

    def _take_block(self, idx: FileIndex, base: int, block: memoryview, starts: list[int], ends: list[int], path: Path,
                    report: FileReport) -> None:
        """Index a block of whole elements at once; a block with anything unusual goes element by element."""
        pieces = list(map(block.__getitem__, map(slice, starts, ends)))
        try:
            heads = list(map(decode_head, pieces))
        except msgspec.DecodeError:
            heads = None
        times = (utc_times(list(map(get_ts, heads))) if heads is not None and usual(heads) and ascii_or_utf8(block)
                 else None)
        if times is None:
            loads = orjson.loads
            for a, b, piece in zip(starts, ends, pieces):
                raw = bytes(piece)
                self._take_doc(idx, base + a, base + b, element(raw, loads), raw, path, report, None)
            return
        heads = cast(list, heads)
        n = len(idx.ts)
        idx.ts.extend(times)
        idx.start.extend(map(add, starts, repeat(base)))
        idx.end.extend(map(add, ends, repeat(base)))
        idx.route.extend(route_ids(self._routes, heads))
        idx.utc.extend(repeat(1, len(heads)))
        spool = idx.inspool
        spool.extend(repeat(0, len(heads)))
        at, quoted = spooled(heads)
        ordinals = list(map(add, at, repeat(n)))
        if not idx.add_quoted(ordinals, quoted):
            at, texts = verbatim(at, quoted)
            ordinals = list(map(add, at, repeat(n)))
            idx.add_texts(ordinals, texts)
        for o in ordinals:
            spool[o] = 1

    def _take_doc(self, idx: FileIndex, a: int, b: int, doc: object, raw: bytes, path: Path, report: FileReport,
                  lines: LineCounter | None) -> None:
        """Index one element decoded whole (JSON Lines, or an element the typed decoder does not vouch for)."""
        if type(doc) is not dict:  # a JSON Lines value that is not an object (null, 42, [1])
            self._usable(doc, path, report, lines, a)
            return
        t, iid = doc.get("timestamp"), doc.get("insertId")
        # the usual entry decided inline; anything else goes through _usable, which says what is wrong
        usual_ = type(iid) is str and iid and "kind" not in doc
        ts = parse_utc(t) if usual_ and type(t) is str else 0
        utc = ts != 0
        if not utc and not (ts := parse_ts(t) if usual_ else 0):
            if not (ts := self._usable(doc, path, report, lines, a)):
                return
        skel = {k: doc[k] for k in ROUTE_FIELDS if k in doc}
        key = ("doc", orjson.dumps(skel))
        rid = self._routes.get(key)
        if rid is None:
            rid = self._routes[key] = len(self._skeletons)
            self._skeletons.append(skel)
        text = (verbatim_text(raw) if utc and type(doc.get("textPayload")) is str and "jsonPayload" not in doc
                and "protoPayload" not in doc else None)
        if text is not None:
            idx.add_text(len(idx.ts), text)
        idx.ts.append(ts)
        idx.start.append(a)
        idx.end.append(b)
        idx.route.append(rid)
        idx.utc.append(utc)
        idx.inspool.append(text is not None)

    def inventory(self) -> Inventory:
        """The workload's names and the span of the data, from the routing fields of every entry."""
        self._ensure_index()
        inv = Inventory(Counter(), Counter(), Counter(), Counter(), Counter())
        for path in self._log_files:
            idx = self._index.get(path)
            if idx is None:
                for _ts, entry in self._slow_timed(path):
                    tally(inv, entry, 1)
                continue
            for rid, n in idx.route_counts().items():
                tally(inv, self._skeletons[rid], n)
        return inv

    def read(self, queries: Sequence[LogQuery]) -> Iterator[tuple[LogQuery, dict]]:
        """One pass over the logs evaluating every query; capped queries keep the first/last N by time.

        Each query is evaluated exactly on every entry that could match it; an entry is only skipped when its
        routing fields (logName, resource, labels, severity) already make the filter false (query.may_match).
        """
        self._ensure_index()
        possible = [compile_route_filter(q.filter, ROUTE_FIELDS) for q in queries]
        plans = [self._plan(skel, queries, possible) for skel in self._skeletons]
        apart = [i for i, q in enumerate(queries) if q.limit]
        if apart and all(path in self._index for path in self._log_files):
            # every file indexed: a capped query is answered apart, its candidates tested newest (or oldest) first
            # until it has its N, so the launch reports and the kubelet chatter are not all visited
            rest = [tuple((i, p) for i, p in plan if not queries[i].limit) for plan in plans]
            yield from self._read(queries, rest)
            for i in apart:
                yield from capped(self._log_files, self._index, queries[i],
                                  [next((p for j, p in plan if j == i), None) for plan in plans])
            return
        yield from self._read(queries, plans)

    def _read(self, queries: Sequence[LogQuery], plans: list) -> Iterator[tuple[LogQuery, dict]]:
        """One pass over the logs evaluating every query of `plans` (per route: the queries it may match)."""
        preds = [(q, compile_filter(q.filter)) for q in queries]
        gates = [text_gate([p for _i, p in plan]) for plan in plans]
        bulk = [bulk_patterns([p.pattern for _i, p in plan]) if plan else None for plan in plans]
        heaps: dict[int, list] = {i: [] for i, (q, _) in enumerate(preds) if q.limit}
        seq = 0
        exact = tuple((i, p) for i, (_q, p) in enumerate(preds))
        loads = load_entry
        for path in self._log_files:
            idx = self._index.get(path)
            if idx is None:
                timed: Iterator = ((ts, e, exact) for ts, e in self._slow_timed(path))
            else:
                timed = planned(path, idx, plans, gates, bulk)
            for ts, got, plan in timed:
                # the fast reader gives the entry's bytes: parsed only when a test or an uncapped match needs it,
                # so a line only a capped query wants (the periodic launch reports) is parsed only if it is kept
                entry = got if type(got) is dict else None
                for i, pred in plan:
                    if pred is not True:
                        if entry is None:
                            entry = loads(got)
                        if not pred(entry):
                            continue
                    q = preds[i][0]
                    if q.limit is None:
                        if entry is None:
                            entry = loads(got)
                        yield q, entry
                        continue
                    key = ts if q.order == "desc" else -ts
                    seq += 1
                    item = (key, seq, got if entry is None else entry)
                    heap = heaps[i]
                    if len(heap) < q.limit:
                        heapq.heappush(heap, item)
                    elif item > heap[0]:
                        heapq.heapreplace(heap, item)
        for i, heap in heaps.items():
            q = preds[i][0]
            for _, _, kept in sorted(heap, reverse=True):
                yield q, kept if type(kept) is dict else loads(kept)

    @staticmethod
    def _plan(skel: dict, queries: Sequence[LogQuery], possible: list) -> tuple:
        """(query index, TimedResidual) for the queries an entry of this route can match."""
        out = []
        for i, q in enumerate(queries):
            if possible[i](skel) and (plan := route_plan(q.filter, skel, ROUTE_FIELDS)) is not None:
                out.append((i, plan))
        return tuple(out)

ROUTE_FIELDS = ("logName", "resource", "labels", "severity")  # what routes an entry; few distinct values


def _json_type(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")
