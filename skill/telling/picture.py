"""The swimlane's geometry: lanes, marks packed so none hides another, and labels placed where no line runs.

Horizontal positions are percentages of the chart's width (the SVG is as wide as its container), vertical ones pixels;
lane labels sit in an HTML column beside the chart. Everything that could collide is laid out at the narrowest chart
the page allows (MIN_WIDTH px for the whole picture): marks that would touch there go to another row of their lane,
labels are anchored so they fit there, and a wider window only moves things apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..reading.records import format_ns

NS = 1_000_000_000
MIN_WIDTH = 600  # px: the narrowest container the picture is laid out for (narrower, it scrolls, labels stay in view)
PAD = 28  # px each side of the chart: a mark at either end of the axis and a tick label ("HH:MM:SS") stay inside
LABEL_CHAR_PX, LABEL_MIN, LABEL_MAX = 7.0, 110, 232  # lane label column: 12 px text, about 7 px a character
LANE_LABEL_CHARS = 30
ROW_H, LANE_PAD, GROUP_H, NOTE_H, AXIS_H = 20, 4, 22, 18, 24
GAP = 2.0  # px between two marks of one lane at the narrowest width
TICK_MIN_PX = 56  # px between two time labels at the narrowest width ("HH:MM" is about 34 px)
BOLD_CHAR_PX = 8.0  # the root-cause and stall labels: bold 12 px, a generous estimate
# half the width of each kind's glyph (skill/telling/html.py's <defs>), the space a mark needs on its row
HALF = {"cause": 7.5, "restart": 7.5, "symptom": 5.5, "milestone": 5.5, "waiting": 6.5, "backoff": 6.0, "kill": 6.0,
        "progress": 1.5}
KINDS = (("milestone", "start-up milestone"), ("progress", "progress"), ("waiting", "scheduling wait"),
         ("backoff", "back-off"), ("kill", "kill"), ("restart", "restart"), ("cause", "root cause"),
         ("symptom", "failure that followed"))


@dataclass
class Mark:
    ts: int
    kind: str  # one of KINDS
    href: str
    title: str
    x: float = 0.0  # % of the chart's width
    y: float = 0.0  # px, the centre of its row
    row: int = 0
    estimated: bool = False  # one of an Event's repeats whose time Kubernetes did not keep: placed between the known


@dataclass
class Lane:
    key: str
    label: str
    group: str
    order: tuple
    marks: list[Mark] = field(default_factory=list)
    y: float = 0.0  # px, the top of the lane
    height: float = ROW_H + LANE_PAD
    band: tuple[float, float] | None = None  # progress seen from .. to (%)
    activity: list[tuple[int, float]] = field(default_factory=list)  # the pod's chips' duty cycle: (sample end, %)
    duty: list[tuple[float, float, float, str]] = field(default_factory=list)  # drawn: x0 %, x1 %, opacity, tip
    tip: str = ""
    since: int = 0  # a pod's creation (else its first record): head lanes are restart attempts, drawn in this order


@dataclass
class Note:
    """A label over the lanes (the root cause's class, the stall), in a row no line runs through."""

    x: float  # % where its anchor is
    y: float
    text: str
    anchor: str  # start | middle | end
    kind: str  # cause | stall
    at: float = 0.0  # % of the thing it names (the caret under a root-cause label)


@dataclass
class Swimlane:
    label_width: int  # px of the lane label column
    chart_min: float  # px of the chart at the narrowest picture
    height: int
    top: float  # px where the lanes start (lines run from here) ...
    bottom: float  # ... to here
    groups: list[tuple[str, float]]  # label, y of its header row
    lanes: list[Lane]
    ticks: list[tuple[float, str]]  # %, "HH:MM"
    axis_caption: str  # the first tick's date and the time zone
    restarts: list[Mark]  # JobSet restarts, drawn across every lane
    stall: tuple[float, float, str] | None = None  # % from .. to, and its label
    end: tuple[float, str] | None = None  # % of the end of the data (or --at), and its label
    notes: list[Note] = field(default_factory=list)
    kinds: list[tuple[str, str]] = field(default_factory=list)  # the legend: the kinds drawn, in KINDS order
    min_width: int = MIN_WIDTH
    pad: int = PAD

    @property
    def marks(self) -> list[Mark]:
        return [m for lane in self.lanes for m in lane.marks]


def short_label(label: str, prefix: str) -> str:
    """A lane's label: the pod name without the JobSet's name in front (the heading names it), at most
    LANE_LABEL_CHARS characters (the tooltip has the whole name)."""
    if prefix and label.startswith(prefix + "-") and len(label) > len(prefix) + 1:
        label = "…" + label[len(prefix):]
    return label if len(label) <= LANE_LABEL_CHARS else label[:LANE_LABEL_CHARS - 1] + "…"


_TICK_STEPS_S = (10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def _ticks(t0: int, t1: int, pct, most: int) -> list[tuple[float, str]]:
    """Round intervals (10 s ... 1 day), at most `most`, labelled with the time of day."""
    span_s = max((t1 - t0) / NS, 1)
    step = next((x for x in _TICK_STEPS_S if span_s / x <= most), _TICK_STEPS_S[-1]) * NS
    first = -(-t0 // step) * step
    return [(pct(t), (format_ns(t)[11:19] if step < 60 * NS else format_ns(t)[11:16]))
            for t in range(first, t1 + 1, step)]


def _collapse_quiet(lanes: list[Lane]) -> list[Lane]:
    """Worker lanes with nothing on them become one "N quiet workers" lane per group."""
    out: list[Lane] = []
    quiet: dict[str, list[Lane]] = {}
    for lane in lanes:
        if not lane.marks and (lane.group.startswith("slice") or lane.group == "workers"):
            quiet.setdefault(lane.group, []).append(lane)
        else:
            out.append(lane)
    for group, idle in quiet.items():
        if len(idle) == 1:
            out.append(idle[0])
            continue
        names = ", ".join(x.key for x in idle[:6]) + (" …" if len(idle) > 6 else "")
        out.append(Lane(f"quiet:{group}", f"{len(idle)} quiet workers", group, idle[0].order[:2] + ("~",),
                        tip=f"nothing cited or seen on: {names}"))
    return out


def _thin_progress(marks: list[Mark], chart: float) -> list[Mark]:
    """Progress ticks are a sample: keep those at least a tick apart at the narrowest width."""
    kept: list[Mark] = []
    for m in sorted((m for m in marks if m.kind == "progress"), key=lambda m: m.x):
        if not kept or (m.x - kept[-1].x) / 100 * chart >= 2 * HALF["progress"] + GAP:
            kept.append(m)
    return kept + [m for m in marks if m.kind != "progress"]


def pack(marks: list[Mark], chart: float) -> int:
    """Give each mark the first row of its lane where it touches no other at `chart` px; progress ticks first (they
    are the band), then the rest by time. The number of rows."""
    rows: list[list[tuple[float, float]]] = []
    for m in sorted(marks, key=lambda m: (m.kind != "progress", m.x, m.ts)):
        lo, hi = m.x / 100 * chart - HALF[m.kind], m.x / 100 * chart + HALF[m.kind]
        for i, taken in enumerate(rows):
            if all(hi + GAP <= a or lo >= b + GAP for a, b in taken):
                m.row = i
                taken.append((lo, hi))
                break
        else:
            m.row = len(rows)
            rows.append([(lo, hi)])
    return max(len(rows), 1)


def _note(x: float, width_px: float, chart: float, y: float, text: str, kind: str, at: float) -> Note:
    """A label at x (%), anchored so it stays inside the chart at its narrowest: centred where it fits, else beside x
    on the side with room, else at the chart's left edge."""
    px = x / 100 * chart
    if kind == "stall" and width_px / 2 <= px <= chart - width_px / 2:
        return Note(x, y, text, "middle", kind, at)
    if px + width_px <= chart:
        return Note(x, y, text, "start", kind, at)
    if px - width_px >= 0:
        return Note(x, y, text, "end", kind, at)
    return Note(0.0, y, text, "start", kind, at)


def duty_band(activity: list[tuple[int, float]], t0: int, t1: int, pct) -> list[tuple[float, float, float, str]]:
    """A lane's duty-cycle band (issue 42): one segment per run of 60 s samples at the same tenth, as dark as the
    chips were busy."""
    out: list[tuple[float, float, float, str]] = []
    run: list[tuple[int, float]] = []
    for t, v in activity + [(0, -1.0)]:
        if run and (round(v, -1) != round(run[0][1], -1) or t - run[-1][0] > 60 * NS):
            a, b = max(run[0][0] - 60 * NS, t0), min(run[-1][0], t1)
            top = max(p for _, p in run)
            if b > a and top >= 1:
                out.append((pct(a), pct(b), round(min(top, 100) / 100 * 0.85 + 0.1, 2),
                            f"TPU duty cycle {top:.0f} % ({format_ns(run[0][0] - 60 * NS)} to {format_ns(run[-1][0])})"))
            run = []
        run.append((t, v))
    return out


def layout(lanes: list[Lane], start: int | None = None, end: int | None = None, stalled: int | None = None,
           cause: str = "", prefix: str = "") -> Swimlane:
    """Lanes (their marks with times) placed: rows, positions, ticks, the stall, the end line and the labels."""
    lanes = _collapse_quiet(lanes)
    for lane in lanes:  # head pods in the order they were created (restart attempts); a lane with no time last
        if lane.group == "head":
            first = lane.since or min((m.ts for m in lane.marks if m.ts), default=1 << 62)
            lane.order = (0, 0, first, lane.key)
        lane.label = short_label(lane.label, prefix)
    lanes.sort(key=lambda lane: lane.order)
    label_w = int(min(LABEL_MAX, max(LABEL_MIN, 20 + LABEL_CHAR_PX * max((len(x.label) for x in lanes), default=0),
                                     20 + LABEL_CHAR_PX * max((len(x.group) for x in lanes), default=0))))
    chart = MIN_WIDTH - label_w - 2 * PAD
    stamps = [m.ts for lane in lanes for m in lane.marks if m.ts] + [t for t in (start, end) if t]
    t0, t1 = (min(stamps), max(stamps)) if stamps else (0, 1)  # the axis runs to the end of the data (or --at)
    span = max(t1 - t0, 1)

    def pct(ts: int) -> float:
        return round((ts - t0) / span * 100, 3)

    notes_rows = (1 if cause else 0) + (1 if stalled and end else 0)
    top = notes_rows * NOTE_H + 6
    groups: list[tuple[str, float]] = []
    y, current, restarts = top, None, []
    for lane in lanes:
        if lane.group != current:
            current = lane.group
            groups.append((current, y))
            y += GROUP_H
        for m in lane.marks:
            m.x = pct(m.ts)
        lane.marks = _thin_progress(lane.marks, chart)
        rows = pack(lane.marks, chart)
        lane.y, lane.height = y, rows * ROW_H + LANE_PAD
        for m in lane.marks:
            m.y = y + LANE_PAD / 2 + m.row * ROW_H + ROW_H / 2
        lane.marks.sort(key=lambda m: (m.kind != "progress", m.ts))  # progress ticks under the other marks
        prog = [m.x for m in lane.marks if m.kind == "progress"]
        lane.band = (min(prog), max(prog)) if len(prog) > 1 else None
        lane.duty = duty_band(lane.activity, t0, t1, pct)
        restarts += [m for m in lane.marks if m.kind == "restart" and not lane.key]
        y += lane.height + 2
    bottom = y
    ticks = _ticks(t0, t1, pct, max(2, int(chart // TICK_MIN_PX))) if stamps else []
    caption = f"{format_ns(t0)[:10]}, UTC" if stamps else "UTC"
    notes: list[Note] = []
    causes = sorted((m for lane in lanes for m in lane.marks if m.kind == "cause"), key=lambda m: m.ts)
    if causes and cause:
        notes.append(_note(causes[0].x, BOLD_CHAR_PX * (len(cause) + 1), chart, NOTE_H - 5, cause, "cause",
                           causes[0].x))
    stall = None
    if stalled and end:
        text = f"no progress for {(end - stalled) // (60 * NS)} min"
        stall = (pct(stalled), pct(end), text)
        mid = (stall[0] + stall[1]) / 2
        notes.append(_note(mid, BOLD_CHAR_PX * len(text), chart, notes_rows * NOTE_H - 5, text, "stall", mid))
    kinds_used = {m.kind for lane in lanes for m in lane.marks}
    return Swimlane(label_w, chart, int(bottom + AXIS_H), top, bottom, groups, lanes, ticks, caption, restarts,
                    stall, (pct(end), "end of data") if end else None, notes,
                    [(k, label) for k, label in KINDS if k in kinds_used])
