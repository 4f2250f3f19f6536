"""Death by place and phase (issue 41): a program's death that no signature names is read as an on-call engineer
reads it, before it is called `unknown_failure`: which program died (the JAX client, a colocated sidecar, a Pathways
server), whose frames are on top (the user's code or a library's), in which phase (start-up before the TPU system is
up, compile, stepping), and with which exit. Each rule reads a documented format:

- Python tracebacks (CPython's traceback module: `File "<path>", line <n>, in <func>`, most recent call last, so the
  innermost frame is the last before the exception line) and faulthandler's pages (Modules/faulthandler.c:
  `File "<path>", line <n> in <func>` under "Current thread ... (most recent call first)", innermost first);
- a library frame is one under `site-packages/` or `dist-packages/` (pip's install scheme) or the standard library;
  any other path is the user's code;
- glog's prefix (`F<mmdd> <time> <tid> <file>:<line>] `: the source file names the subsystem that aborted);
- the container's exit code (128 + the signal: 134 SIGABRT, 137 SIGKILL, 139 SIGSEGV).

A rule names a class and, where the place leaves a second one open, that class as the rival. A death inside a
Pathways server (worker, resource manager, proxy) with nothing else to go on stays `unknown_failure`. Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..catalog.places import CHECKPOINT, CHECKPOINT_LIBS, COMPILE, FLAGS_RIVAL, JAX_LIBS, SIDECAR, USER
from ..reading.records import Record
from ..understanding.model import Workload
from ..understanding.signals import Signal
from ..catalog import Pattern
from ..catalog.symptoms import COLUMN_MARKERS, EXCEPTION_LINE
from .classify import Verdict
from .ranking import Hypo
from .survival import SERVERS, is_sidecar

FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+,? in (?P<func>\S+)')
FIRST_CALL_FIRST = re.compile(r"(?:Current thread|Stack) .{0,60}\(most recent call first\)|^Stack \(most recent call first\)")
LIBRARY = re.compile(r"/(?:site|dist)-packages/(?P<lib>[A-Za-z_][\w]*)|/lib/python3[\d.]*/(?!site-packages|dist-packages)(?P<std>[A-Za-z_]\w*)|^<frozen ")
GLOG_FILE = re.compile(r"^F\d{4} \d\d:\d\d:\d\d(?:\.\d+)?\s+\d+ (?P<file>[\w.\-]+):\d+\] ")
COMPILE_FRAME = re.compile(r"compile|lower|mlir|xla_computation|pxla|compiler")
SCORE = 0.7  # a class read from where and when the program died: a strong candidate, never proof


@dataclass(frozen=True)
class Death:
    """Where and when a program died, as the rules read it."""

    program: str  # client | sidecar | server
    phase: str  # start-up | compile | stepping
    frame: tuple[str, str] | None  # the innermost Python frame (path, function), if a traceback or page shows one
    library: str | None  # the library that frame is in; None for the user's code
    glog_file: str | None  # the source file of a glog F line
    exit_code: int | None

    def words(self) -> str:
        where = (f"in {self.frame[1]} ({'the user' + chr(39) + 's code' if self.library is None else self.library})"
                 if self.frame else f"at {self.glog_file}" if self.glog_file else "with no frame shown")
        ex = f", exit {self.exit_code}" if self.exit_code is not None else ""
        when = {"start-up": "during start-up", "stepping": "while stepping"}.get(self.phase, self.phase)
        return f"the {self.program} died {when} {where}{ex}"


def _program(model: Workload, r: Record) -> str:
    if r.container in SERVERS:
        return "server"
    if is_sidecar(r.container):
        return "sidecar"
    pod = model.pods.get(r.pod or "")
    return "client" if pod is None or pod.role == "head" else "sidecar"


def _phase(model: Workload, ts: int, program: str) -> str:
    """stepping once a step was seen; before that, "before the first step" once the program's TPU system is up (for the
    client, its own detection of the Pathways backend; for a server or sidecar, every slice ready), start-up before."""
    if any(s.ts < ts for s in model.progress):
        return "stepping"
    up = [s.ts for s in model.milestones.get("client_backend", [])] if program == "client" else \
        [s.ts for s in model.ready_slices()]
    return "before the first step" if any(t < ts for t in up) else "start-up"


def innermost(stream: Sequence[Record], death: Record) -> tuple[str, str] | None:
    """The innermost Python frame of the traceback or fault page around the death line."""
    lines = [ln for r in stream for ln in r.text.splitlines()]
    at = next((i for i, r in enumerate(stream) if r.id == death.id), len(stream))
    before = [ln for r in stream[:at] for ln in r.text.splitlines()] + death.text.splitlines()
    headers = [i for i, ln in enumerate(lines) if FIRST_CALL_FIRST.search(ln)]
    current = [i for i in headers if lines[i].startswith("Current thread")] or headers
    if current:  # a fault page: innermost first, under the current thread's header
        for ln in lines[current[-1] + 1:]:
            if m := FRAME.match(ln):
                return m.group("path"), m.group("func")
    for ln in reversed(before):  # a traceback: innermost last, before the exception line
        if m := FRAME.match(ln):
            return m.group("path"), m.group("func")
    return None


def library_of(path: str) -> str | None:
    m = LIBRARY.search(path)
    return None if m is None else (m.group("lib") or m.group("std") or "python")


# An exception raised by JAX's runtime: its traceback shows the user's call site only, since JAX filters its own frames
# out ("For simplicity, JAX has removed its internal frames from the traceback", jax/_src/traceback_util.py)
RUNTIME_EXCEPTION = re.compile(r"^(?:jax|jaxlib)\.[\w.]*(?:Error|Exception)\b|\bXlaRuntimeError\b")


def read(model: Workload, death: Record, context: Sequence[Record]) -> Death:
    stream = sorted([r for r in context if (r.pod, r.container) == (death.pod, death.container)] +
                    ([death] if all(r.id != death.id for r in context) else []), key=lambda r: (r.ts, r.id))
    frame = innermost(stream, death)
    glog = next((m.group("file") for r in [death, *stream] if (m := GLOG_FILE.match(r.text))), None)
    pod = model.pods.get(death.pod or "")
    c = pod.containers.get(death.container or "") if pod else None
    lib = library_of(frame[0]) if frame else None
    if frame and lib is None and RUNTIME_EXCEPTION.search(death.text.splitlines()[0] if death.text else ""):
        lib = "jax"  # the user's frame is only where JAX's runtime was called from
    program = _program(model, death)
    return Death(program, _phase(model, death.ts, program), frame, lib,
                 glog, c.last_exit_code if c and c.last_exit_code else None)


def rule(d: Death) -> tuple[str, str | None] | None:
    """(class, rival) for a death, or None when the place and phase leave more than two classes open."""
    if d.program == "server":
        return None  # inside Pathways' own servers: nothing to go on but the line
    if d.program == "sidecar":
        return SIDECAR, None
    if d.frame is not None:
        lib = d.library
        if lib is None:
            return USER, None  # the user's own frame is on top: their code raised or crashed
        if lib in CHECKPOINT_LIBS:
            return CHECKPOINT, USER
        if lib in JAX_LIBS:
            if d.phase != "stepping" and COMPILE_FRAME.search(d.frame[0] + " " + d.frame[1]):
                return COMPILE, USER
            return None  # JAX's runtime failing mid-run: memory, hardware, the servers ... too many to name
        return USER, None  # another library raised into the user's program: its input or its use
    if d.glog_file and "flag" in d.glog_file and d.phase != "stepping":
        return USER, FLAGS_RIVAL  # the client's own flags refused before the TPU system is up
    return None


def refine(model: Workload, root: Hypo, context: Sequence[Record]) -> tuple[Hypo, Hypo | None, str] | None:
    """An unknown death read by place and phase: the new root, its rival and the reading in words, or None when it
    stays unknown."""
    deaths = [s for s in root.located or root.signals if s.target == "program_died"] or \
             [s for s in root.located or root.signals if s.record.source == "container"]
    if not deaths:
        return None
    death: Signal = deaths[-1]
    d = read(model, death.record, context)
    got = rule(d)
    if got is None:
        return None
    cls, rival = got
    detail = death.record.text.splitlines()[0][:160] if death.record.text else ""
    new = Hypo(cls, SCORE, list(root.signals), root.first_ts, detail, list(root.located),
               ("Pod", "Container"), root.spared)
    other = Hypo(rival, round(SCORE * 0.7, 3), list(root.signals), root.first_ts, detail, list(root.located),
                 ("Pod", "Container")) if rival else None
    return new, other, d.words()


PLACE_NOTE = "read by place and phase: "
THREAD_NOTE = PLACE_NOTE + "thread "  # a stall read as the death of one of its program's threads (by_thread)


def by_place(v: Verdict, new: Hypo, rival: Hypo | None, words: str) -> Verdict:
    """A death read by place and phase (skill.judging.place): the class it names is the verdict, below proof; its rival
    (when the place leaves two open) and the reading it replaces (unknown, or a stall) stay ranked after it."""
    old = Hypo(v.root.failure_class, round(v.root.score * 0.8, 3), v.root.signals, v.root.first_ts, v.root.detail,
               v.root.located, v.root.entity_kinds, v.root.spared)  # the reading it replaces (unknown, a stall)
    ranked = [new] + ([rival] if rival else []) + [old] + [h for h in v.ranked[1:] if h.failure_class != new.failure_class]
    confidence = new.score * (0.9 if rival else 1.0)
    notes = v.notes + [PLACE_NOTE + words + (f"; {rival.failure_class} stays open" if rival else "")]
    return Verdict(new.failure_class, v.status, round(confidence, 3), ranked[:6], new, v.symptoms, notes,
                   v.observations, v.too_soon, v.fate)


# CPython's default threading.excepthook (Lib/threading.py) reports a thread's uncaught exception as
# "Exception in thread <name>:" then its traceback; the thread ends, the program does not.
THREAD_DEATH = re.compile(r"^Exception in thread (?P<name>.+?)(?: \(\w+\))?:\s*$")
_EXCEPTION_LINE = re.compile(EXCEPTION_LINE)
MARKERS = re.compile(COLUMN_MARKERS)


def thread_death(words: Sequence[Record]) -> tuple[Record, str, Record] | None:
    """In what the stalled program printed after its last step: the exception line that ended one of its threads
    (threading.excepthook's header, then the traceback's last line), the thread's name and the header; None when there
    is none."""
    ordered = sorted(words, key=lambda r: (r.ts, r.id))
    for i, r in enumerate(ordered):
        m = THREAD_DEATH.match(r.text.splitlines()[0] if r.text else "")
        if m is None:
            continue
        same = [x for x in ordered[i + 1:] if (x.pod, x.container) == (r.pod, r.container)]
        exc = next((x for x in same if _EXCEPTION_LINE.match(x.text)), None)
        if exc is not None:
            return exc, m.group("name"), r
    return None


def _frame_lines(words: Sequence[Record], death: Record) -> list[Record]:
    """The traceback's innermost frame before the exception line, and the source line printed under it: where the
    thread failed, in the program's own words."""
    stream = sorted((r for r in words if (r.pod, r.container) == (death.pod, death.container) and r.ts <= death.ts
                     and r.id != death.id), key=lambda r: (r.ts, r.id))
    at = next((i for i in range(len(stream) - 1, -1, -1) if FRAME.match(stream[i].text)), None)
    if at is None:
        return []
    out = [stream[at]]
    # the source line printed under the frame; not the column markers CPython 3.11+ prints under it (PEP 657: a line
    # of ^ and ~ only), which an export's ordering of lines with one timestamp may put first
    under = [r for r in stream[at + 1:at + 3] if not FRAME.match(r.text) and not _EXCEPTION_LINE.match(r.text)
             and not MARKERS.match(r.text)]
    return out + under[:1]


def by_thread(model: Workload, v: Verdict, words: Sequence[Record]) -> Verdict:
    """A stall whose program printed, after its last step, the death of one of its threads (a prefetcher, a loader):
    the thread's exception, read by place (its innermost frame), is the cause, and the run stays stalled (the program
    waits on what the thread would have given it). The stall stays ranked after it."""
    found = thread_death(words)
    if found is None or v.root is None:
        return v
    death, name, header = found
    got = rule(read(model, death, words))
    if got is None:
        return v
    cls, rival = got
    sig = Signal("cause", cls, THREAD_PATTERN, death, {})
    # the header that says a thread died (not the program), and the failing line
    where = [Signal("cause", cls, THREAD_PATTERN, r, {}) for r in [header, *_frame_lines(words, death)]]
    new = Hypo(cls, SCORE + 0.1, [*where, sig], death.ts, death.text.splitlines()[0][:160], [sig], ("Pod", "Container"))
    other = Hypo(rival, round(SCORE * 0.7, 3), [sig], death.ts) if rival else None
    return by_place(v, new, other, f"thread {name} of the stalled program died on {death.text.splitlines()[0][:120]!r}")


THREAD_PATTERN = Pattern(THREAD_DEATH.pattern, SCORE, id="thread_death",
                         origin="https://github.com/python/cpython/blob/main/Lib/threading.py",
                         example="Exception in thread prefetch-0:")
