"""Shape transformations of a replay folder that keep its facts (issue 17, item 4), applied to a copy.

Each transformation takes a loaded `Copy` (the logs export, the other JSON files, the answer key), changes it in
place and returns how many entries (or names) it changed; 0 means it did not apply to the case.
"""

from __future__ import annotations

import copy as _copy
import random
import re
from collections.abc import Callable
from datetime import datetime, UTC
from pathlib import Path

import orjson
import yaml

from .case_copy import Copy

CONTAINER_LOGS = ("/stdout", "/stderr")
GLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+ [\w.\-/]+:\d+\] ")
TB_START = "Traceback (most recent call last):"
TB_MARKERS = (TB_START, "During handling of the above exception", "The above exception was the direct cause")


def load(folder: Path) -> Copy:
    c = Copy(folder.name, [])
    for f in sorted(p for p in folder.iterdir() if p.is_file()):
        if f.name == "expected.yaml":
            c.expected = yaml.safe_load(f.read_text()) or {}
        elif f.name in ("logs.json", "logs.jsonl"):
            raw = f.read_bytes()
            c.logs_file = f.name
            c.logs = orjson.loads(raw) if f.suffix == ".json" else [orjson.loads(x) for x in raw.splitlines() if x.strip()]
        elif f.suffix == ".json":
            c.docs[f.name] = orjson.loads(f.read_bytes())
        else:
            c.extra[f.name] = f.read_bytes()
    return c


def save(c: Copy, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if c.logs_file.endswith(".jsonl"):
        (folder / c.logs_file).write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in c.logs))
    else:
        (folder / c.logs_file).write_bytes(orjson.dumps(c.logs, option=orjson.OPT_INDENT_2))
    for name, doc in c.docs.items():
        (folder / name).write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    for name, data in c.extra.items():
        (folder / name).write_bytes(data)
    exp = dict(c.expected)
    if c.id_map and exp.get("evidence"):
        exp["evidence"] = list(dict.fromkeys(c.id_map.get(i, i) for i in exp["evidence"]))
    (folder / "expected.yaml").write_text(yaml.safe_dump(exp, sort_keys=False))


# --- helpers -------------------------------------------------------------------------------------------------

def _ns(ts: str) -> int:
    """Nanoseconds since the epoch of an RFC 3339 timestamp with any number of fraction digits."""
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?$", ts)
    if not m:
        return 0
    base = datetime.fromisoformat(m.group(1) + ("+00:00" if m.group(3) in (None, "Z") else m.group(3)))
    return int(base.timestamp()) * 10**9 + int((m.group(2) or "0")[:9].ljust(9, "0"))


def _ts(ns: int) -> str:
    base = datetime.fromtimestamp(ns // 10**9, tz=UTC)
    return base.strftime("%Y-%m-%dT%H:%M:%S") + f".{ns % 10**9:09d}Z"


def is_container_log(e: dict) -> bool:
    return str(e.get("logName", "")).endswith(CONTAINER_LOGS)


def container(e: dict) -> str:
    return str(((e.get("resource") or {}).get("labels") or {}).get("container_name") or "")


def is_user_container(e: dict) -> bool:
    return is_container_log(e) and not container(e).startswith("pathways-")


def text_of(e: dict) -> str | None:
    if isinstance(e.get("textPayload"), str):
        return e["textPayload"]
    jp = e.get("jsonPayload")
    return jp["message"] if isinstance(jp, dict) and isinstance(jp.get("message"), str) else None


def set_text(e: dict, text: str) -> None:
    if isinstance(e.get("textPayload"), str):
        e["textPayload"] = text
    else:
        e["jsonPayload"]["message"] = text


def streams(logs: list[dict]) -> list[list[dict]]:
    """Container log entries grouped by pod, container and stream, each group in time order."""
    out: dict[tuple, list[dict]] = {}
    for e in logs:
        if is_container_log(e) and text_of(e) is not None:
            lab = (e.get("resource") or {}).get("labels") or {}
            out.setdefault((lab.get("pod_name"), lab.get("container_name"), e.get("logName")), []).append(e)
    return [sorted(v, key=lambda e: _ns(str(e.get("timestamp", "")))) for v in out.values()]


def traceback_blocks(stream: list[dict]) -> list[list[dict]]:
    """Runs of entries forming one Python traceback, from `Traceback (most recent call last):` to the exception line."""
    blocks, i = [], 0
    while i < len(stream):
        if GLOG.sub("", text_of(stream[i]) or "").startswith(TB_START):
            j = i + 1
            while j < len(stream):
                t = GLOG.sub("", text_of(stream[j]) or "")
                if not t.strip() or t.startswith((" ", "\t")) or t.startswith(TB_MARKERS):
                    j += 1
                    continue
                break
            if j < len(stream) and j > i + 1:
                blocks.append(stream[i:j + 1])
                i = j + 1
                continue
        i += 1
    return blocks


def _exception_line(lines: list[str]) -> int:
    """The index of the line that holds the exception in a multi-line text (the last unindented line after a
    traceback), else 0: that line keeps the entry's insertId, as the key cites the entry holding the exception."""
    if not any(GLOG.sub("", x).startswith(TB_START) for x in lines):
        return 0
    for k in range(len(lines) - 1, 0, -1):
        if lines[k].strip() and not lines[k].startswith((" ", "\t")):
            return k
    return 0


# --- the transformations -------------------------------------------------------------------------------------

def split_tracebacks(c: Copy) -> int:
    """One LogEntry per line of every multi-line container log text, as the container runtime splits stderr;
    +1 µs per line; the line holding the exception (else the first) keeps the insertId, the others get `<id>-l<k>`."""
    out, n = [], 0
    for e in c.logs:
        text = text_of(e) if is_container_log(e) else None
        lines = text.rstrip("\n").split("\n") if text else []
        if len(lines) < 2:
            out.append(e)
            continue
        n += 1
        keep, t0 = _exception_line(lines), _ns(str(e.get("timestamp", "")))
        for k, line in enumerate(lines):
            x = _copy.deepcopy(e)
            set_text(x, line)
            x["timestamp"] = _ts(t0 + 1000 * k)
            x["insertId"] = e["insertId"] if k == keep else f"{e['insertId']}-l{k}"
            out.append(x)
    c.logs = out
    return n


def join_tracebacks(c: Copy) -> int:
    """The inverse shape: each traceback split over entries becomes one multi-line entry (as a structured logger
    writes exc_info), holding the exception line's insertId; the key's ids of the folded lines map onto it."""
    drop: set[int] = set()
    n = 0
    for stream in streams(c.logs):
        for block in traceback_blocks(stream):
            head, last = block[0], block[-1]
            set_text(last, "\n".join(text_of(x) or "" for x in block))
            last["timestamp"] = head.get("timestamp", last.get("timestamp"))
            for x in block[:-1]:
                drop.add(id(x))
                c.id_map[x["insertId"]] = last["insertId"]
            n += 1
    c.logs = [e for e in c.logs if id(e) not in drop]
    return n


_GLOG_LEVEL = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "CRITICAL"}
_PY_LEVEL = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:")


def level(e: dict, text: str) -> str:
    """The severity a line's writer meant: its glog letter or Python level prefix, else the entry's (on GKE every
    stderr line is ERROR), as a logging agent that parses the line records it."""
    if GLOG.match(text):
        return _GLOG_LEVEL[text[0]]
    m = _PY_LEVEL.match(text)
    return m.group(1) if m else str(e.get("severity", "DEFAULT"))


def _to_json(c: Copy, which: Callable[[dict], bool]) -> int:
    n = 0
    for e in c.logs:
        if which(e) and isinstance(e.get("textPayload"), str):
            text = e.pop("textPayload")
            m = re.match(r"^[IWEF]\d{4} \S+\s+\d+ ([\w.\-]+?)(?:\.\w+)?:\d+\] ", text)
            e["severity"] = level(e, text)  # the logging agent lifts jsonPayload.severity into the entry
            e["jsonPayload"] = {"message": text, "logger": m.group(1) if m else "__main__", "severity": e["severity"]}
            n += 1
    return n


def json_payload(c: Copy) -> int:
    """textPayload moved into jsonPayload {message, logger, severity} in the user's containers (not pathways-*)."""
    return _to_json(c, is_user_container)


def json_payload_all(c: Copy) -> int:
    """The same for every container log."""
    return _to_json(c, is_container_log)


def json_msg(c: Copy) -> int:
    """The user's container lines as structlog / zap / klog JSON write them: {"msg": text, "level": ...}."""
    n = 0
    for e in c.logs:
        if is_user_container(e) and isinstance(e.get("textPayload"), str):
            text = e.pop("textPayload")
            e["jsonPayload"] = {"msg": text, "level": level(e, text).lower(), "logger": "__main__"}
            n += 1
    return n


def json_exc_info(c: Copy) -> int:
    """The user's tracebacks as a Python JSON formatter writes `logger.exception(...)`: one entry (the exception
    line's insertId) with a generic message and the whole traceback in `exc_info`; other lines as json_payload."""
    n = 0
    drop: set[int] = set()
    for stream in streams(c.logs):
        if not is_user_container(stream[0]):
            continue
        for block in traceback_blocks(stream):
            last = block[-1]
            tb = "\n".join(text_of(x) or "" for x in block)
            last.pop("textPayload", None)
            last["jsonPayload"] = {"message": "Unhandled exception", "exc_info": tb, "logger": "__main__",
                                   "severity": "ERROR"}
            last["timestamp"] = block[0].get("timestamp", last.get("timestamp"))
            for x in block[:-1]:
                drop.add(id(x))
                c.id_map[x["insertId"]] = last["insertId"]
            n += 1
    c.logs = [e for e in c.logs if id(e) not in drop]
    return n + _to_json(c, is_user_container)


_LETTER = {"ERROR": "E", "CRITICAL": "F", "ALERT": "F", "EMERGENCY": "F", "WARNING": "W"}


def glog_prefix(c: Copy) -> int:
    """glog prefixes removed where present (their letter kept as the entry's severity, as an agent parsing glog
    records it); added to the user's container lines that start a message (not inside a traceback)."""
    n = 0
    in_tb = {id(x) for s in streams(c.logs) for b in traceback_blocks(s) for x in b}
    for e in c.logs:
        text = text_of(e)
        if text is None or not is_container_log(e):
            continue
        if GLOG.match(text):
            e["severity"] = level(e, text)  # the fact the letter carried stays on the entry
            set_text(e, GLOG.sub("", text))
            n += 1
        elif is_user_container(e) and id(e) not in in_tb and text.strip() and not text.startswith((" ", "\t")):
            ts = _ts(_ns(str(e.get("timestamp", ""))))
            prefix = f"{_LETTER.get(level(e, text), 'I')}{ts[5:7]}{ts[8:10]} {ts[11:26]}      42 train.py:123] "
            set_text(e, prefix + text)
            n += 1
    return n


def reorder(c: Copy) -> int:
    """The entries of every file in a shuffled order (the engine must not depend on file order)."""
    rng = random.Random(c.name)
    rng.shuffle(c.logs)
    for doc in c.docs.values():
        if isinstance(doc, dict) and isinstance(doc.get("items"), list):
            rng.shuffle(doc["items"])
        elif isinstance(doc, list):
            rng.shuffle(doc)
    return len(c.logs)


def jsonl(c: Copy) -> int:
    """The gcloud JSON array export written as JSON Lines (logs.jsonl)."""
    c.logs_file = "logs.jsonl"
    return len(c.logs)


from .rename import rename  # noqa: E402 - the renaming has its own module

TRANSFORMS: dict[str, Callable[[Copy], int]] = {
    "split_tracebacks": split_tracebacks, "join_tracebacks": join_tracebacks, "json_payload": json_payload,
    "json_payload_all": json_payload_all, "json_msg": json_msg, "json_exc_info": json_exc_info, "glog_prefix": glog_prefix, "rename": rename, "reorder": reorder,
    "jsonl": jsonl,
}
ORIGINAL = "original"  # the case as it is, written by the same writer: the reference the variants are compared to
