"""The `recording` item: splices a real recorded run (fixtures/recordings/<id>/output.log) into a container's logs.

Each kept line becomes one LogEntry (O on stdout at INFO, E on stderr at ERROR as GKE records it; N recorder notes
are dropped). The lines keep their recorded spacing, shifted so that the first kept line lands at the item's time;
glog and Python-logging stamps move by the same shift, thread and process ids are mapped into the container, and
the recording machine's paths become plausible container paths.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from pathways_workload.evals.scenarios import NS, Item, fmt_ns, glog_stamp, parse_iso

from .logs import Logs
from .model import Ctr, Pod, ShapeError

RECORDINGS = Path(__file__).resolve().parents[2] / "fixtures" / "recordings"
PROGRAM_DIR = "/work/main/evals/recording/programs/"
# a group recorded from a copy of the harness (devrun/<group>/...) or from a worktree (/work/<tree>/...: B26, on CPU)
DEVRUN_PROGRAMS = re.compile(r"/work/(?:main/devrun/[\w.-]+/(?:evals/recording/)?|[\w.-]+/evals/recording/)programs/")
SITE = "/usr/local/lib/python3.11/site-packages/"
# The recording machine's paths -> where the same files live in a container image (order matters: longest first).
PATHS = (
    ("/opt/device-scrub/", SITE),
    ("/tmp/ox/", SITE),
    ("/tmp/jaxcpu26/lib/python3.11/site-packages/", SITE),  # B26's CPU recording: a venv over a copied pyenv Python
    ("/tmp/py3117/lib/python3.11/", "/usr/local/lib/python3.11/"),
    ("/root/.pyenv/versions/3.11.7/lib/python3.11/", "/usr/local/lib/python3.11/"),
    ("/root/.pyenv/versions/3.11.7/bin/", "/usr/local/bin/"),
    ("/root/.pyenv/versions/3.11.7/lib/", "/usr/local/lib/"),
)
GLOG = re.compile(r"^([IWEF])(\d{4} \d\d:\d\d:\d\d\.\d{6})( +)(\d+) ")
PYLOG = re.compile(r"\b(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\b")
PIDS = re.compile(r"\b(Process id|PID|TID|pid) (\d+)\b")


@dataclass(frozen=True)
class Line:
    tag: str  # O | E
    sec: float
    text: str


@dataclass(frozen=True)
class Recording:
    id: str
    lines: tuple[Line, ...]
    start: int  # ns, when the recorded process started (provenance start_utc)
    year: int
    pid: int | None  # the recorded process id (libtpu's "Process id N", else the first glog thread id)
    program: str  # the recorded program's file name


@cache
def load_recording(rid: str) -> Recording:
    """One committed recording, N lines dropped."""
    folder = RECORDINGS / rid
    if not (folder / "output.log").is_file():
        raise ShapeError(f"no recording {rid!r} (expected {folder}/output.log)")
    prov = yaml.safe_load((folder / "provenance.yaml").read_text())
    lines = []
    for raw in (folder / "output.log").read_text().split("\n"):
        tag, _, rest = raw.partition("\t")
        sec, _, text = rest.partition("\t")
        if tag in ("O", "E"):
            lines.append(Line(tag, float(sec), text))
    pid = None
    for ln in lines:
        m = re.search(r"\bProcess id (\d+)", ln.text)
        if m:
            pid = int(m.group(1))
            break
    if pid is None:
        pid = next((int(m.group(4)) for ln in lines if (m := GLOG.match(ln.text))), None)
    start = parse_iso(str(prov["start_utc"]))
    return Recording(rid, tuple(lines), start, int(str(prov["date"])[:4]), pid, Path(str(prov["program"])).name)


def select(rec: Recording, spec: dict[str, Any], where: str) -> list[Line]:
    """The lines an item keeps: its stream(s), from the `from:` match to the `to:` match, less `drop:` matches."""
    want = str(spec.get("lines", "all"))
    if want not in ("all", "E", "O"):
        raise ShapeError(f"{where}: lines: must be E, O or all, not {want!r}")
    lines = [ln for ln in rec.lines if want == "all" or ln.tag == want]
    i, j = 0, len(lines) - 1
    if spec.get("from"):
        i = next((k for k, ln in enumerate(lines) if re.search(spec["from"], ln.text)), -1)
        if i < 0:
            raise ShapeError(f"{where}: no line of {rec.id} matches from: {spec['from']!r}")
    if spec.get("to"):
        j = next((k for k in range(i, len(lines)) if re.search(spec["to"], lines[k].text)), -1)
        if j < 0:
            raise ShapeError(f"{where}: no line of {rec.id} after from: matches to: {spec['to']!r}")
    drop = spec.get("drop") or []
    drops = [re.compile(d) for d in (drop if isinstance(drop, list) else [drop])]
    out = [ln for ln in lines[i:j + 1] if not any(d.search(ln.text) for d in drops)]
    if not out:
        raise ShapeError(f"{where}: the selection keeps no line of {rec.id}")
    return out


class Rewriter:
    """Rewrites one recorded line into the scenario's world: paths, stamps shifted by `shift` ns, ids mapped."""

    def __init__(self, rec: Recording, shift: int, base_pid: int, program: str, replace: dict[str, str]) -> None:
        self.rec, self.shift, self.base_pid = rec, shift, base_pid
        workdir = program.rsplit("/", 1)[0] or "/"
        self.own = len(replace)
        self.paths = [*replace.items(), (PROGRAM_DIR + rec.program, program), (PROGRAM_DIR, workdir + "/"),
                      ("/work/main", workdir), *PATHS]

    def pid(self, n: int) -> int:
        return n if self.rec.pid is None else max(1, n - self.rec.pid + self.base_pid)

    def glog_time(self, text: str) -> int | None:
        """When a glog line says it was written, moved into the scenario (None for other lines)."""
        m = GLOG.match(text)
        if not m:
            return None
        d = dt.datetime.strptime(f"{self.rec.year}{m.group(2)}", "%Y%m%d %H:%M:%S.%f").replace(tzinfo=dt.UTC)
        return int(d.replace(microsecond=0).timestamp()) * NS + d.microsecond * 1000 + self.shift

    def glog(self, m: re.Match) -> str:
        return f"{m.group(1)}{glog_stamp(self.glog_time(m.group(0)) or 0)} {self.pid(int(m.group(4))):>7} "

    def pylog(self, m: re.Match) -> str:
        d = dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.UTC)
        t = int(d.timestamp()) * NS + int(m.group(2)) * 1_000_000 + self.shift
        return fmt_ns(t, 3)[:23].replace("T", " ").replace(".", ",")

    def __call__(self, text: str) -> str:
        for old, new in self.paths[:self.own]:
            text = text.replace(old, new)
        # a group recorded from a copy of the harness (devrun/<group>/...) names its programs there
        text = DEVRUN_PROGRAMS.sub(PROGRAM_DIR, text)
        for old, new in self.paths[self.own:]:
            text = text.replace(old, new)
        text = GLOG.sub(self.glog, text, count=1)
        text = PYLOG.sub(self.pylog, text)
        return PIDS.sub(lambda m: f"{m.group(1)} {self.pid(int(m.group(2)))}", text)


class RecordingItem(Logs):
    """The `recording` incident item (see fixtures/README.md)."""

    def item_recording(self, it: Item) -> None:
        sp = it.spec
        if not sp.get("id"):
            raise ShapeError(f"{it.where()}: needs `id:` (a folder of fixtures/recordings)")
        rec = load_recording(str(sp["id"]))
        lines = select(rec, sp, it.where())
        _o, targets = self.targets(it)
        for n, pod, c in targets:
            t0 = self.splice_start(it, pod, c) + (self.jitter(0.05, 0.9) if n else self.jitter(0.0, 0.9))
            self.splice(it, rec, lines, pod, c, t0)

    def splice_start(self, it: Item, pod: Pod, c: Ctr) -> int:
        """The item's time, or with `on_start: true` the start of the container run current at (or next after) it."""
        if not it.spec.get("on_start"):
            return it.at
        run = next((r for r in c.runs if r.start <= it.at and (r.end is None or it.at <= r.end)), None)
        run = run or next((r for r in c.runs if r.start > it.at), None)
        if run is None:
            raise ShapeError(f"{it.where()}: {pod.ref}/{c.name} has no run at or after {fmt_ns(it.at)}")
        return run.start

    def splice(self, it: Item, rec: Recording, lines: list[Line], pod: Pod, c: Ctr, t0: int) -> None:
        first = lines[0].sec
        shift = t0 - (rec.start + int(round(first * 1e6)) * 1000)
        sp = it.spec
        rw = Rewriter(rec, shift, 1000 + c.tid, str(sp.get("program", "/app/train.py")),
                      {str(k): self.fmt(str(v), pod, at=t0, container=c.name) for k, v in (sp.get("replace") or {}).items()})
        o = self.out(it)
        stamps, last = [], t0 - 1
        for ln in lines:  # recorded spacing, kept strictly increasing so multi-line records stay in order
            t = t0 + int(round((ln.sec - first) * 1e6)) * 1000
            g = rw.glog_time(ln.text)  # the capture column has ms steps; a glog line is never collected before it was written
            if g is not None:
                t = max(t, g + self.rng.randrange(20, 300) * 1000)
            last = max(t, last + self.rng.randrange(2, 30) * 1000)
            stamps.append(last)
        for t in (stamps[0], min(stamps[-1], self.s.end)):
            if not c.alive(t):
                raise ShapeError(f"{it.where()}: {pod.ref}/{c.name} is not running at {fmt_ns(t)}; it runs "
                                 f"{[(fmt_ns(r.start), r.end and fmt_ns(r.end)) for r in c.runs]}")
        for ln, t in zip(lines, stamps):
            text = rw(ln.text)
            ins = self.clog(pod, c.name, t, text, "stdout" if ln.tag == "O" else "stderr")
            if ins:
                o.inserts.append(ins)
                o.texts.append(text)
