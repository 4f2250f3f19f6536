"""The replay source: an exported incident folder, evaluated with the same filters the live source sends."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..query import compile_filter
from ..records import parse_ts
from .base import LogQuery, SourceStats
from .files import FileReport, iter_documents, list_files

MAX_PROBLEMS_PER_FILE = 5
LIST_ITEM_KIND = {"PodList": "Pod", "EventList": "Event", "NodeList": "Node", "JobSetList": "JobSet", "JobList": "Job"}


def is_log_entry(doc: object) -> bool:
    return isinstance(doc, dict) and ("insertId" in doc or "logName" in doc) and "kind" not in doc


def is_k8s_object(doc: object) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("kind"), str) and "apiVersion" in doc


@dataclass
class Inventory:
    """What a first look at the logs finds: JobSets, namespaces, clusters and the time span."""

    jobsets: Counter
    clusters: Counter
    projects: Counter
    locations: Counter
    namespaces: Counter


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
        self.stats = SourceStats()
        self._objects: list[dict] = []
        self._log_files: list[Path] = []
        self._reported: set[Path] = set()
        self._counted: set[Path] = set()
        self._scan()

    def _scan(self) -> None:
        """Sort files into log exports and object exports; load the (small) object files whole."""
        for path in self.files:
            report = FileReport(path)
            docs = iter_documents(path, report)
            first = next(docs, None)
            if is_log_entry(first):
                self._log_files.append(path)
                docs.close()
                continue
            for doc in ([first] if first is not None else []) + list(docs):
                self._take_object(doc, path, report)
            self._finish(report)

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
        return self._objects

    def iter_entries(self) -> Iterator[dict]:
        """Every usable LogEntry of every log file, streamed; problems and counts are taken once."""
        for _ts, entry in self.iter_timed():
            yield entry

    def iter_timed(self) -> Iterator[tuple[int, dict]]:
        """(timestamp ns, LogEntry) for every usable entry; the time is parsed once here."""
        for path in self._log_files:
            report = FileReport(path)
            first_pass = path not in self._counted
            for doc in iter_documents(path, report):
                if not is_log_entry(doc):
                    self._problem(report, f"{path.name}: an element that is not a LogEntry; skipped it")
                    continue
                if not isinstance(doc.get("insertId"), str) or not doc["insertId"]:
                    self._problem(report, f"{path.name}: a LogEntry without insertId; skipped it")
                    continue
                ts = parse_ts(doc.get("timestamp")) or parse_ts(doc.get("receiveTimestamp"))
                if not ts:
                    self._problem(report, f"{path.name}: entry {doc['insertId']} has no usable timestamp; skipped it")
                    continue
                if first_pass:
                    self.stats.entries_read += 1
                if ts > self.stats.last_ts:
                    self.stats.last_ts = ts
                if not self.stats.first_ts or ts < self.stats.first_ts:
                    self.stats.first_ts = ts
                yield ts, doc
            self._counted.add(path)
            self._finish(report)

    def inventory(self) -> Inventory:
        """One pass over the logs for the workload's names and the span of the data."""
        inv = Inventory(Counter(), Counter(), Counter(), Counter(), Counter())
        for entry in self.iter_entries():
            rl = (entry.get("resource") or {}).get("labels") or {}
            labels = entry.get("labels") or {}
            js = labels.get("k8s-pod/jobset_sigs_k8s_io/jobset-name")
            if isinstance(js, str):
                inv.jobsets[js] += 1
                inv.namespaces[rl.get("namespace_name")] += 1
            for key, counter in (("cluster_name", inv.clusters), ("project_id", inv.projects),
                                 ("location", inv.locations)):
                if isinstance(rl.get(key), str):
                    counter[rl[key]] += 1
        return inv

    def read(self, queries: Sequence[LogQuery]) -> Iterator[tuple[LogQuery, dict]]:
        """One pass over the logs evaluating every query; capped queries keep the first/last N by time."""
        preds = [(q, compile_filter(q.filter)) for q in queries]
        heaps: dict[int, list] = {i: [] for i, (q, _) in enumerate(preds) if q.limit}
        seq = 0
        for ts, entry in self.iter_timed():
            for i, (q, pred) in enumerate(preds):
                if not pred(entry):
                    continue
                if q.limit is None:
                    yield q, entry
                    continue
                key = ts if q.order == "desc" else -ts
                seq += 1
                item = (key, seq, entry)
                heap = heaps[i]
                if len(heap) < q.limit:
                    heapq.heappush(heap, item)
                elif item > heap[0]:
                    heapq.heapreplace(heap, item)
        for i, heap in heaps.items():
            q = preds[i][0]
            for _, _, entry in sorted(heap, reverse=True):
                yield q, entry
