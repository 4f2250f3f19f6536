"""The facts layer: what error lines say in structure, read without matching the catalog's sentences.

From each container line, and from consecutive lines of one container that together form one Python traceback (the
container runtime writes stderr one LogEntry per line), it extracts typed facts: the exception and the component that
raised it (from the frames' packages), absl/gRPC status codes, HTTP statuses, the Cloud Storage object named and
what the workload uses it for (from its specs). The catalog's fact rules (FailureClass.facts) turn facts into signals
on the line that holds the error, so they rank with the signatures' signals. Pure: no I/O."""

from __future__ import annotations

import errno as errno_mod
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote

from ..catalog import CLASSES
from ..catalog.facts import COMPONENTS, HTTP_NAMES, PATH_ROLES, SEGMENT_ROLES, SOURCE_COMPONENTS, STATUS_CODES
from ..catalog.types import FactRule, Pattern, signature_id
from ..reading.names import GS_URL
from ..reading.records import Record, stated_level
from .signals import Signal, addressed_to_a_reader

GLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d(?:\.\d+)?\s+\d+ ([\w.\-]+):\d+\] ")
CPP_SOURCE = re.compile(r"\b([\w./-]+\.(?:cc|cpp|h)):\d+")
HEADER = re.compile(r"^\s*Traceback \(most recent call last\):")
FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+')
EXCEPTION = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*_?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Exhausted|Timeout|Failure)"
                       r"|(?:[a-z_]\w*\.)+_?[A-Z]\w*"
                       # the standard library's lower-case exception classes: zlib.error, socket.timeout, socket.gaierror
                       r"|(?:[a-z_]\w*\.)+(?:error|timeout|herror|gaierror))(?::\s?(?P<msg>.*))?$")
UNIT = (r"[KMGTPE]i?B\b|[kKMG]B/s|bytes?\b|B\b|[mun\u00b5]?s\b|secs?\b|seconds?\b|minutes?\b|mins?\b|hours?\b|h\b|%"
        r"|x\b|/s\b|files?\b|examples?\b|records?\b|items?\b|steps?\b|samples?\b|tokens?\b|rows?\b|entries\b"
        r"|objects?\b|shards?\b|chunks?\b|hosts?\b|workers?\b|chips?\b|devices?\b|nodes?\b|pods?\b|requests?\b"
        r"|retries\b|times\b|lines?\b|batch(?:es)?\b|epochs?\b|params?\b|layers?\b|tasks?\b|threads?\b|[Kk]iB|ms\b")
CODE = re.compile(r"\b(" + "|".join(STATUS_CODES) + r")\b")
# An HTTP status only where a status is written (issue 25: "403 MiB" is a size): after "HTTP", "status", "code",
# "returned"/"failed with"; before a reason phrase, a gRPC code name or a request method (google-api-core's
# "403 GET https://..."); in parentheses closing a message. A number followed by a unit or a count is a quantity.
_REASONS = (r"Bad Request|Unauthorized|Forbidden|Not Found|Request Timeout|Conflict|Gone|Precondition Failed|"
            r"Too Many Requests|Internal Server Error|Not Implemented|Bad Gateway|Service Unavailable|Gateway Timeout|"
            r"Request Entity Too Large|Requested Range Not Satisfiable")
_STATUS_BEFORE = (r"\bHTTP(?:/[\d.]+)?(?:\s+(?:error|status|response|code|response code|status code))?\s*[=:]?\s*"
                  r"|\bstatus(?:[ _]?code)?[\"']?\s*[=:]?\s*|\bcode[\"']?\s*[=:]\s*|\berror code\s+"
                  r"|\b(?:returned|responded with|failed with|got|received|answered)\s+(?:an?\s+)?(?:HTTP\s+)?")
HTTP = re.compile(r"(?:" + _STATUS_BEFORE + r")\b([45]\d\d)\b(?!\s*(?:" + UNIT + r"))"
                  r"|\b([45]\d\d)\s+(?:" + _REASONS + r"|(?:GET|PUT|POST|PATCH|DELETE|HEAD)\s+\S|[A-Z]+_[A-Z_]+\b)"
                  r"|\b(" + "|".join(re.escape(n) for n in HTTP_NAMES) + r")\b"
                  r"|\(\s*([45]\d\d)\s*\)|,\s*([45]\d\d)\s*$")  # "(429)" / "..., 429" closing a client library's message
JSON_API = re.compile(r"storage\.googleapis\.com/(?:upload/|download/)?storage/v1/b/([a-z0-9][a-z0-9._-]{1,220})/o"
                      r"(?:/([^?\s'\"]+)|\?[^\s'\"]*?\bname=([^&\s'\"]+))?")
# Cloud Storage's own error wording names the object without a scheme: "The object <bucket>/<name> exceeded ...".
NAMED_OBJECT = re.compile(r"\b[Oo]bject [\"']?([a-z0-9][a-z0-9._-]{2,62})/([^\s\"',]+)")
XML_API = re.compile(r"storage\.googleapis\.com/(?!storage/|upload/|download/)([a-z0-9][a-z0-9._-]{1,220})/([^?\s'\"]+)")
# A cheap first look: could any line of this text be a traceback's header or frame, or carry an exception, a status
# code, an HTTP status or an errno? (_read decides; this only keeps the rest of the records out of memory.)
MAYBE = re.compile(r"Traceback|File \"|[A-Za-z](?:Error|Exception|Exit|Interrupt|Exhausted|Timeout|Failure)\b|"
                   r"\b[a-z_]\w*\.(?:\w+\.)*_?[A-Z]\w*:|\b[a-z_]\w*\.(?:error|timeout|herror|gaierror):|"
                   r"\b(?:" + "|".join(STATUS_CODES) + r")\b|\b[45]\d\d\b|\[Errno|"
                   + "|".join(re.escape(n) for n in HTTP_NAMES))
_COMPONENTS = [(name, re.compile(rx)) for name, rx in COMPONENTS]
_SOURCES = [(name, re.compile(rx)) for name, rx in SOURCE_COMPONENTS]
_SKIPPED = {"stdlib", "transport"}
RETRY = re.compile(r"(?i)\bretry(?:ing)?\b|\bwill retry\b|\bbacking off\b|\bbackoff\b|\battempt \d+ of \d+")
FRAME_GAP_NS = 5_000_000_000  # frames further apart than this from the next line belong to another traceback


@dataclass(frozen=True)
class Fact:
    """One error line, read for structure. `record` is the entry that holds it (the key evidence)."""

    record: Record
    exception: str = ""
    message: str = ""
    raised_in: str = ""  # the component of the innermost frame outside the standard library and transports
    through: frozenset[str] = frozenset()
    sources: frozenset[str] = frozenset()  # components of the C++ sources the line names (glog header, "(x.cc:12)")
    codes: frozenset[str] = frozenset()
    http: frozenset[int] = frozenset()
    url: str = ""  # gs://bucket/object, or an absolute local path, when the line names one
    errno: str = ""  # the errno name of an OSError ([Errno 30] -> EROFS)
    role: str = ""  # what the workload uses that object for ("" unknown)
    frame: Record | None = None  # the entry of the frame that raised (raised_in), when it is its own entry


def component(path: str) -> str:
    """The component a frame's file belongs to: catalog.facts.COMPONENTS, else the user's own code."""
    return next((name for name, rx in _COMPONENTS if rx.search(path)), "user")


@dataclass
class Roles:
    """What the workload uses Cloud Storage locations for, read from its specs (container args and env)."""

    prefixes: list[tuple[str, str]] = field(default_factory=list)  # (gs://bucket/path, role), longest first

    def of(self, url: str) -> str:
        role = next((r for p, r in self.prefixes if url == p or url.startswith(p.rstrip("/") + "/")), "")
        if role in ("", "output"):
            rest = url[5:].partition("/")[2] if url.startswith("gs://") else url
            role = next((r for rx, r in SEGMENT_ROLES if re.search(rx, rest)), role)
        return role


_SETTING = re.compile(r"(?:--?)?([A-Za-z_][\w.-]*)\s*[=:]\s*[\"']?((?:gs:/)?/[^\s\"',]+)")
LOCAL = re.compile(r"(?:'|\"|: )(/(?:[\w.@+-]+/)+[\w.@+-]*)")  # an absolute local path quoted by an OSError
ERRNO = re.compile(r"\[Errno (\d+)\]")


def _path_words(objects: Iterable[dict], env_first: bool = False) -> Iterator[tuple[str, str, str]]:
    """(setting, path or gs:// URL, how it was set) for every path the JobSet's and pods' containers set, container by
    container: "env" (an env variable), "flag" (a `--name=value` word), "arg" (a `name=value` word), "word" (another
    `name: /path` spelling), "pair" (a `--name value` pair of words)."""
    for obj in objects:
        for c in _containers(obj):
            env = [(str(e.get("name", "")), str(e["value"]), "env") for e in c.get("env") or []
                   if isinstance(e, dict) and str(e.get("value", "")).startswith(("gs://", "/"))]
            words = [str(w) for w in (c.get("command") or []) + (c.get("args") or []) if isinstance(w, (str, int))]
            args = []
            for i, w in enumerate(words):
                for m in _SETTING.finditer(w):
                    args.append((m.group(1), m.group(2),
                                 "flag" if w.lstrip().startswith("-") else ("arg" if "=" in w else "word")))
                if w.startswith("-") and i + 1 < len(words) and words[i + 1].startswith(("gs://", "/")):
                    args.append((w.lstrip("-"), words[i + 1], "pair"))
            yield from (env + args if env_first else args + env)


def workload_roles(objects: Iterable[dict]) -> Roles:
    """gs:// locations in the JobSet's and pods' container args, commands and env, with the role their setting names."""
    found: dict[str, str] = {}
    for key, url, _how in _path_words(objects):
        role = next((r for rx, r in PATH_ROLES if re.search(rx, key, re.I)), "")
        if role and url not in found:
            found[url.rstrip("/")] = role
    return Roles(sorted(found.items(), key=lambda kv: -len(kv[0])))


def path_settings(objects: Iterable[dict]) -> dict[str, str]:
    """Each path or gs:// URL the JobSet's and pods' containers set, with the env variable or flag that sets it
    ('/var/cache/jax' -> 'JAX_COMPILATION_CACHE_DIR'), so a fix can name the setting to change, not only the path."""
    found: dict[str, str] = {}
    for key, path, how in _path_words(objects, env_first=True):
        if how in ("env", "flag", "arg"):
            found.setdefault(path.rstrip("/"), ("--" if how == "flag" else "") + key)
    return {k: v for k, v in found.items() if k and v}


def _containers(obj: dict) -> list[dict]:
    """Container specs of a Pod, or of every pod template of a JobSet."""
    if obj.get("kind") == "Pod":
        spec = obj.get("spec") or {}
        return [c for c in (spec.get("containers") or []) + (spec.get("initContainers") or []) if isinstance(c, dict)]
    if obj.get("kind") != "JobSet":
        return []
    out = []
    for rj in ((obj.get("spec") or {}).get("replicatedJobs") or []):
        pod = (((rj or {}).get("template") or {}).get("spec") or {}).get("template") or {}
        out += _containers({"kind": "Pod", "spec": pod.get("spec") or {}})
    return out


class FactReader:
    """Collects the lines that may carry facts, per container stream, and reads them once everything is in."""

    def __init__(self) -> None:
        self._lines: dict[tuple[str | None, str | None], list[tuple[int, int, Record]]] = {}
        self._n = 0

    def add(self, rec: Record) -> None:
        if rec.source != "container" or not rec.text or not MAYBE.search(rec.text) or addressed_to_a_reader(rec.text):
            return
        if stated_level(rec) in ("DEBUG", "INFO"):
            return  # an INFO line reports, it does not fail (stderr arrives as ERROR: the line's own level decides)  # kept only if a line of it may be a traceback's or an error's: every record passes here
        self._n += 1
        self._lines.setdefault((rec.pod, rec.container), []).append((rec.ts, self._n, rec))

    def facts(self, roles: Roles) -> list[Fact]:
        out: list[Fact] = []
        for lines in self._lines.values():
            frames: list[tuple[str, Record]] = []
            last_ts = 0
            for ts, _, rec in sorted(lines, key=lambda t: (t[0], t[1])):
                if frames and ts - last_ts > FRAME_GAP_NS:
                    frames = []
                for line in rec.text.splitlines() or [rec.text]:
                    glog = GLOG.match(line)
                    line = line[glog.end():] if glog else line
                    if HEADER.match(line):
                        frames = []
                    elif (m := FRAME.match(line)) is not None:
                        frames.append((m.group("path"), rec))
                    elif line[:1].isspace():
                        continue  # a source line under a frame
                    elif (fact := _read(rec, line, frames, roles, glog.group(1) if glog else "")) is not None:
                        out.append(fact)
                        frames = []
                last_ts = ts
        return out


def _read(rec: Record, line: str, frames: list[tuple[str, Record]], roles: Roles, glog_file: str = "") -> Fact | None:
    """The fact on one error line (with the frames that led to it), or None when it carries nothing structural."""
    m = EXCEPTION.match(line)
    exception, message = (m.group("type"), m.group("msg") or "") if m else ("", line)
    codes = frozenset(CODE.findall(line))
    http = frozenset(HTTP_NAMES[g[2]] if g[2] else int(next(x for x in g if x)) for g in HTTP.findall(line) if any(g))
    local = LOCAL.search(line) if ERRNO.search(line) else None  # an OSError names the local path it failed on
    url = _url(line) or (local.group(1) if local else "")
    errno = errno_name(line)
    if not (exception or codes or http or errno) or (not exception and RETRY.search(line)):
        return None  # a request being retried is not yet a failure; the error that ends the retries is
    comps = [component(p) for p, _ in frames]
    at = next((i for i in range(len(comps) - 1, -1, -1) if comps[i] not in _SKIPPED), None)
    raised = comps[at] if at is not None else ""
    frame = frames[at][1] if at is not None and frames[at][1] is not rec else None
    files = [glog_file, *CPP_SOURCE.findall(line)]
    sources = frozenset(n for f in files if f for n, rx in _SOURCES if rx.search(f))
    return Fact(rec, exception, message, raised, frozenset(comps), sources, codes, http, url, errno,
                roles.of(url) if url else "", frame)


def errno_name(line: str) -> str:
    """The errno an OSError line names ([Errno 28] -> ENOSPC), or ""."""
    m = ERRNO.search(line)
    return errno_mod.errorcode.get(int(m.group(1)), "") if m else ""


def _url(line: str) -> str:
    """The Cloud Storage object a line names (gs:// URL, JSON API or XML API URL), as gs://bucket/object."""
    return _any_url(line).rstrip(":,.;")


def _any_url(line: str) -> str:
    if (m := GS_URL.search(line)) is not None:
        return f"gs://{m.group(1)}{m.group(2) or ''}"
    if (m := JSON_API.search(line)) is not None:
        obj = unquote(m.group(2) or m.group(3) or "")
        return f"gs://{m.group(1)}/{obj}" if obj else f"gs://{m.group(1)}"
    if (m := XML_API.search(line)) is not None:
        return f"gs://{m.group(1)}/{unquote(m.group(2))}"
    if (m := NAMED_OBJECT.search(line)) is not None:
        return f"gs://{m.group(1)}/{m.group(2)}"
    return ""


def matches(rule: FactRule, f: Fact) -> bool:
    """Every field the rule sets holds for the fact."""
    if rule.raised_in and f.raised_in not in rule.raised_in:
        return False
    if rule.through and not (f.through & set(rule.through)):
        return False
    if rule.source and not (f.sources & set(rule.source)):
        return False
    if rule.exception and not (f.exception and re.search(rule.exception, f.exception)):
        return False
    if rule.code and not (f.codes & set(rule.code)):
        return False
    if rule.http and not (f.http & set(rule.http)):
        return False
    if rule.role and not (f.url and ("*" in rule.role or f.role in rule.role)):
        return False
    return not rule.message or re.search(rule.message, f.record.text) is not None


_PATTERNS: dict[tuple[str, FactRule], Pattern] = {}


def _pattern(owner: str, rule: FactRule) -> Pattern:
    """A fact rule of class `owner` in the shape the classifier and the explanation read signals in."""
    if (owner, rule) not in _PATTERNS:
        _PATTERNS[owner, rule] = Pattern(rule.key, rule.weight, ("container",), entities=rule.entities, note=rule.note,
                                         id=rule.id, sid=signature_id(owner, rule.key))
    return _PATTERNS[owner, rule]


def fact_signals(facts: list[Fact]) -> list[Signal]:
    """The catalog's fact rules on the facts: a cause signal per rule that holds (independent facts about one line,
    such as the raising component and the HTTP status on the object's role, add up like signatures do)."""
    out = []
    for f in facts:
        groups = {k: v for k, v in (("component", f.raised_in), ("url", f.url), ("role", f.role)) if v}
        held = [(cls, r) for cls in CLASSES for r in cls.facts if matches(r, f)]
        out += [Signal("cause", cls.id, _pattern(cls.id, r), f.record, groups) for cls, r in held]
        # the frame that names the raising component, when the rule rests on it: cited beside the exception line
        out += [Signal("cause", cls.id, _frame_pattern(cls.id, r), f.frame, groups)
                for cls, r in held if r.raised_in and f.frame]
    return out


FRAME_ID = "frame"  # the id of the support signatures that stand for a traceback's raising frame
_FRAME_PATTERNS: dict[tuple[str, FactRule], Pattern] = {}


def _frame_pattern(owner: str, rule: FactRule) -> Pattern:
    if (owner, rule) not in _FRAME_PATTERNS:
        wording = rule.key + " (frame)"
        _FRAME_PATTERNS[owner, rule] = Pattern(wording, 0.1, ("container",), support=True, id=FRAME_ID,
                                               note="the frame the error was raised from", sid=signature_id(owner, wording))
    return _FRAME_PATTERNS[owner, rule]
