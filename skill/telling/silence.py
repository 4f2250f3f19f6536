"""The story of a run that stopped stepping, told from what its own program printed after its last step (engine phase
five): the statements it made right after that step (what it was doing as it stopped), what it kept printing while
no step came (it was alive, not stepping), and a Python thread dump (faulthandler's watchdog, a SIGUSR1 handler):
per thread the call it waits in and its own innermost frame, read by one table (waits.WAITS) of what such a call waits
for.

An on-call engineer reads exactly these lines before anything else; the loudest line of a stall is usually none.
Pure: no I/O. Log text is data: it is quoted in sentences and cited, never turned into a command."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..catalog.symptoms import COLUMN_MARKERS
from ..reading.records import Record, format_ns
from ..redact import redact
from .excerpt import clip
from .named import LIBRARY
from .waits import WAITS, Wait

# CPython's thread dump: faulthandler's watchdog header "Timeout (0:10:00)!" (Modules/faulthandler.c), one header per
# thread "Thread 0x... (most recent call first):" / "Current thread 0x..." / "Stack (most recent call first):"
# (Python/traceback.c), then its frames, innermost first: `  File "p", line N in f` (faulthandler) or
# `  File "p", line N, in f` with the source line under it (the traceback module's format_stack, as stack-trace
# collectors print it). py-spy's dump (src/dump.rs): `Thread 0x7F3C... (idle): "MainThread"`, frames `    f (p:N)`.
TIMEOUT = re.compile(r"^Timeout \([0-9:.]+\)!")
THREAD = re.compile(r'^(?P<current>Current thread|Thread) (?P<id>0x[0-9a-fA-F]+|\d+)\b(?:.*?"(?P<name>[^"]*)")?'
                    r"|^Stack \(most recent call first\)")
FRAME = re.compile(r'^\s+File "(?P<path>[^"]+)", line (?P<line>\d+),? in (?P<func>\S+)'
                   r"|^\s+(?P<func2>[\w<>.]+) \((?P<path2>[^()]+?):(?P<line2>\d+)\)\s*$")
DUMP = re.compile(f"{TIMEOUT.pattern}|{THREAD.pattern}|{FRAME.pattern}|^\\s*$")
BLOCKED = "a call with no Python frame of its own (a lock taken with `with`, a sleep, native code)"
# A step line and another differ in their numbers only: the shape of a line, to tell chatter from statements.
_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")


@dataclass
class Frame:
    record: Record
    path: str
    line: int
    func: str
    code: str = ""  # the source line printed under it, when the dump prints one
    code_record: Record | None = None  # ... and the line it was printed on (cited with the frame)

    @property
    def own(self) -> bool:
        return not LIBRARY.search(self.path)

    @property
    def where(self) -> str:
        return f"{self.path.rsplit('/', 1)[-1]} line {self.line} in {self.func}"

    @property
    def where_code(self) -> str:
        """Where, with the source line when the dump printed it."""
        return f"{self.where} (`{clip(redact(self.code), 100)}`)" if self.code else self.where


def _frame(r: Record, m: re.Match[str]) -> Frame:
    """A frame as read from a dump line; its path and function are log text, redacted before they are ever said."""
    if m.group("path") is not None:
        return Frame(r, redact(m.group("path")), int(m.group("line")), redact(m.group("func")))
    return Frame(r, redact(m.group("path2")), int(m.group("line2")), redact(m.group("func2")))


@dataclass
class Thread:
    header: Record
    current: bool
    name: str = ""  # the thread's name, when the dump gives it (py-spy, a collector's)
    frames: list[Frame] = field(default_factory=list)  # innermost first, as the dump lists them

    @property
    def main(self) -> bool:
        return self.name == "MainThread" or (bool(self.frames) and self.frames[-1].func == "<module>")

    def wait(self) -> tuple[Frame, Wait | None] | None:
        """The call it waits in: of the library frames above its own innermost frame, the outermost one the table
        knows (the call the program made: queue.get, not the Condition.wait inside it); else its innermost frame (its
        own code blocked in a call with no Python frame, a lock or a sleep, when that frame is its own)."""
        first_own = next((i for i, f in enumerate(self.frames) if f.own), len(self.frames))
        for f in reversed(self.frames[:first_own]):
            for w in WAITS:
                if w.path.search(f.path) and (not w.funcs or f.func in w.funcs):
                    return f, w
        return (self.frames[0], None) if self.frames else None

    def own(self) -> Frame | None:
        return next((f for f in self.frames if f.own), None)


@dataclass
class Story:
    """What a stalled program printed from its last step on."""

    last_step: Record
    said: list[Record] = field(default_factory=list)  # its statements right after the last step, once each
    before: list[Record] = field(default_factory=list)  # its latest statements before the last step, besides steps
    kept: Record | None = None  # the first of what it kept printing while no step came
    kept_times: int = 0
    dump: Record | None = None  # the first thread dump's first line
    threads: list[Thread] = field(default_factory=list)
    dumps: int = 0  # how many dumps it printed after its last step
    latest: Record | None = None  # the latest dump's first line, when there were several
    latest_threads: list[Thread] = field(default_factory=list)
    unchanged: bool = False  # every dump shows every thread in the same place: stuck, not slow

    @property
    def empty(self) -> bool:
        return not (self.said or self.kept or self.threads or self.before)


def _shape(text: str) -> str:
    return _NUMBERS.sub("#", text.strip())


def _dump_at(after: list[Record], start: int) -> tuple[list[Thread], int]:
    """The dump that starts at after[start]: its threads, and where the next thing after it starts."""
    threads: list[Thread] = []
    i = start
    for i in range(start, len(after)):
        r = after[i]
        if TIMEOUT.match(r.text) and threads:
            return [t for t in threads if t.frames], i  # the next dump
        m = THREAD.match(r.text)
        if m:
            if any(t.header.text == r.text for t in threads):
                return [t for t in threads if t.frames], i  # the same thread again: the next dump
            threads.append(Thread(r, bool(m.group("current")), redact(m.group("name") or "")))
        elif (f := FRAME.match(r.text)) and threads:
            threads[-1].frames.append(_frame(r, f))
        elif threads and threads[-1].frames and r.text[:1].isspace() and r.text.strip():
            frame = threads[-1].frames[-1]
            if not frame.code:  # its source line
                frame.code, frame.code_record = r.text.strip(), r
        elif not DUMP.match(r.text):
            return [t for t in threads if t.frames], i  # a statement of its own ends the dump
    return [t for t in threads if t.frames], len(after)


def _dumps(after: list[Record]) -> list[tuple[Record, list[Thread]]]:
    """Every thread dump after the last step, in order: its first line and its threads."""
    out: list[tuple[Record, list[Thread]]] = []
    i = 0
    while i < len(after):
        if TIMEOUT.match(after[i].text) or THREAD.match(after[i].text):
            threads, nxt = _dump_at(after, i)
            if threads:
                out.append((after[i], threads))
            i = max(nxt, i + 1)
        else:
            i += 1
    return out


def _where(threads: list[Thread]) -> list[tuple[str, tuple[tuple[str, int, str], ...]]]:
    return sorted((t.name, tuple((f.path, f.line, f.func) for f in t.frames)) for t in threads)


MAX_SAID = 2
_MARKERS = re.compile(COLUMN_MARKERS)  # a traceback's column markers say nothing of their own
MAX_BEFORE = 2  # the statement it made last before its last step, and the line before it (a warning's two lines)


def story(last_step: Record, words: tuple[Record, ...], first_step_ts: int = 0) -> Story:
    """The stalled stream's story from its records (phase five: the last step's stream, oldest first). What it said
    before its last step counts from its first step on (start-up chatter says nothing about why stepping stopped)."""
    after = [r for r in words if r.ts >= last_step.ts and r.id != last_step.id
             and (r.pod, r.container) == (last_step.pod, last_step.container)]
    dumps = _dumps(after)
    dump, threads = dumps[0] if dumps else (None, [])
    statements = [r for r in after if r.text.strip() and not DUMP.match(r.text) and not _MARKERS.match(r.text)]
    shapes = Counter(_shape(r.text) for r in statements)
    step_shape = _shape(last_step.text)
    once = [r for r in statements if shapes[_shape(r.text)] == 1 and _shape(r.text) != step_shape]
    repeated = [r for r in statements if shapes[_shape(r.text)] > 1 and _shape(r.text) != step_shape]
    before = [r for r in words if first_step_ts < r.ts < last_step.ts
              and (r.pod, r.container) == (last_step.pod, last_step.container)
              and r.text.strip() and not DUMP.match(r.text) and not _MARKERS.match(r.text) and _shape(r.text) != step_shape]
    said_before = Counter(_shape(r.text) for r in before)
    before = [r for r in before if said_before[_shape(r.text)] == 1 and not shapes[_shape(r.text)]]  # not chatter
    s = Story(last_step, said=once[:MAX_SAID], before=before[-MAX_BEFORE:], dump=dump, threads=threads,
              dumps=len(dumps))
    if len(dumps) > 1:
        s.latest, s.latest_threads = dumps[-1]
        s.unchanged = all(_where(t) == _where(threads) for _r, t in dumps[1:])
    if repeated:
        top = max(shapes[_shape(r.text)] for r in repeated)
        s.kept = next(r for r in repeated if shapes[_shape(r.text)] == top)
        s.kept_times = top
    return s


def moments(s: Story) -> list[tuple[int, str, list[str]]]:
    """The story's timeline entries: (time, summary, cited ids)."""
    out = [(r.ts, f"after its last step the program printed {quote(r, 120)}", [r.id]) for r in s.said[:1]]
    main = _main(s.threads)
    if s.dump is not None and main is not None:
        out.append((s.dump.ts, f"thread dump: the {'main thread' if main.main else 'dumped thread'} "
                               f"{_thread_words(main).split(', for ')[0].split(' for ')[0]}", [s.dump.id]))
    if s.kept is not None:
        out.append((s.kept.ts, f"still printing, no step: {quote(s.kept, 100)} ({s.kept_times} times)", [s.kept.id]))
    return out


# A statement's logging prefix (glog's, Python logging's default and asctime formats), left out when it is quoted.
PREFIX = re.compile(r"^(?:[IWEF]\d{4} [\d:.]+\s+\d+ [\w.-]+:\d+\] |(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:"
                    r"|\d{4}-\d\d-\d\d[ T][\d:,.]+ (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) [^\]\s]*\] ?)")


def _statement(records: list[Record]) -> Record:
    """Of a few consecutive lines, the one that states something (not an indented continuation)."""
    return next((r for r in reversed(records) if not r.text[:1].isspace()), records[-1])


def _hms(r: Record | None) -> str:
    return (format_ns(r.ts) or "")[11:19] + "Z" if r is not None else ""


def quote(r: Record, limit: int = 140) -> str:
    """A line as a sentence quotes it: without its logging prefix, redacted, clipped, in quotes."""
    return "'" + clip(redact(PREFIX.sub("", r.text.strip(), count=1)), limit) + "'"


def _main(threads: list[Thread]) -> Thread | None:
    return next((t for t in threads if t.main), threads[-1] if threads else None)


def cited(s: Story) -> list[Record]:
    """The lines the story cites, in the order a reader takes them: what it said after the last step, the dump's
    first line, per thread (main first, at most three) the call it waits in and its own innermost frame, and the
    first of what it kept printing."""
    out: list[Record] = list(s.before) + list(s.said)
    if s.dump is not None:
        out.append(s.dump)
    main = _main(s.threads)
    for t in ([main] if main else []) + [t for t in s.threads if t is not main][:2]:
        wait, own = t.wait(), t.own()
        out += [f.record for f in ((wait[0] if wait else None), own) if f is not None]
        out += [own.code_record] if own is not None and own.code_record is not None else []
    if s.latest is not None:  # where each thread is at the end of the data: its innermost frame and its own
        out.append(s.latest)
        for t in s.latest_threads[:3]:
            out += [f.record for f in (t.frames[0], t.own()) if f is not None]
    if s.kept is not None:
        out.append(s.kept)
    return list({r.id: r for r in out}.values())


_PACKAGE = re.compile(r"/lib/python\d\.\d+/(?:(?:site|dist)-packages/)?|/(?:site|dist)-packages/")


def _call(f: Frame) -> str:
    """A frame as the call it is, by module: `queue.get`, `concurrent.futures._base.result`, `jax._src.array.__float__`."""
    rest = _PACKAGE.split(f.path)[-1] if _PACKAGE.search(f.path) else f.path.rsplit("/", 1)[-1]
    return f"{rest.removesuffix('.py').replace('/', '.')}.{f.func}"


def _thread_words(t: Thread) -> str:
    wait, own = t.wait(), t.own()
    if wait is None:
        return ""
    frame, w = wait
    at = f", called from {own.where_code}," if own is not None and own is not frame else ""
    if w is None:
        return (f"is blocked at {frame.where_code} in {BLOCKED}" if frame.own
                else f"waits in {_call(frame)} ({frame.where.split(' in ')[0]}){at.rstrip(',')}")
    return f"waits in {_call(frame)} ({frame.where.split(' in ')[0]}){at} for {w.waits_for}"


def sentence(s: Story) -> str:
    """The story in words, for the explanation ("" when the program printed nothing after its last step)."""
    parts = []
    if s.before:
        parts.append(f"before its last step, the last thing it said besides steps was {quote(_statement(s.before))}")
    if s.said:
        parts.append(f"after its last step it printed {quote(s.said[-1])}"
                     + (f" (first {quote(s.said[0], 100)})" if len(s.said) > 1 else ""))
    if s.threads:
        main = _main(s.threads)
        assert main is not None
        same = "both" if s.dumps == 2 else f"all {s.dumps}"
        again = (f" (the same in {same} dumps, the latest at {_hms(s.latest)}: stuck, not slow)" if s.unchanged
                 else f" (of {s.dumps} dumps, the latest at {_hms(s.latest)})" if s.latest is not None else "")
        parts.append(f"its thread dump{again} shows the {'main thread' if main.main else 'dumped thread'} "
                     + _thread_words(main))
        helper = _callback_thread(s.threads, main)
        if helper is not None:
            parts.append(f"another thread, running the step's host callback, {_thread_words(helper)}, so the step "
                         "waits on that callback")
        others = [f for t in s.threads if t is not main and t is not helper and (f := t.own()) is not None]
        if others:
            parts.append("other threads are at " + ", ".join(f.where_code for f in others[:3]))
    if s.kept is not None:
        parts.append(f"while no step came it kept printing {quote(s.kept, 100)} ({s.kept_times} times), so the "
                     "process was alive but not stepping")
    return "; ".join(parts)


def _callback_thread(threads: list[Thread], main: Thread) -> Thread | None:
    """A thread running a host callback while the main thread waits for the TPU: the program waits on the callback."""
    waiting = main.wait()
    if not (waiting and waiting[1] is not None and waiting[1].device):
        return None
    return next((t for t in threads if t is not main
                 and any(w.callback and w.path.search(f.path) for f in t.frames for w in WAITS)), None)


BLOCKED_ADVICE = ("the other threads' frames in the dump show who holds what it waits for; take locks in one order "
                  "and never hold one across a blocking call")


def fix(s: Story) -> str:
    """A fix sentence pointing at the program's own code the dump names, or without a dump at the statement it made
    last ("" when it printed neither)."""
    main = _main(s.threads)
    if main is None:
        return (f"Read the code that prints {quote(s.said[-1], 120)}: the program stopped right after printing it, so "
                "what follows that statement never completed. Make the program dump its threads when it stalls "
                "(faulthandler.dump_traceback_later(timeout, repeat=True), reset every step) to see where it "
                "waits.") if s.said else ""
    helper = _callback_thread(s.threads, main)
    stuck = helper or main
    own, wait = stuck.own(), stuck.wait()
    if own is None or wait is None:
        return ""
    who = "the step's host callback" if helper else ("the main thread" if stuck.main else "the dumped thread")
    if wait[1] is None:
        what, advice = f"is blocked there in {BLOCKED}", BLOCKED_ADVICE
    else:
        what, advice = f"waits there in {_call(wait[0])} for {wait[1].waits_for}", wait[1].advice
    if helper is not None and wait[1] is None:
        advice = next(w.advice for w in WAITS if w.callback)
    elif helper is not None:
        advice += "; while the callback blocks, the step on the TPU cannot finish"
    last = f" The last thing it said besides steps, before it stopped: {quote(_statement(s.before), 120)}." if s.before else ""
    return f"Start at {own.where_code} (the thread dump): {who} {what}. {advice[0].upper()}{advice[1:]}.{last}"
