"""Calibration of the top-1 confidence: accuracy per confidence band, the Brier score, and a reliability plot (SVG).

A run is a list of (confidence, correct) pairs, one per case: the stated confidence of the top-1 class and whether
that class was the expected one. The plot is written by hand (a few SVG elements), so no plotting dependency.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape

# Half-open bands [low, high); the last one is closed, [0.9, 1.0].
BANDS: tuple[tuple[float, float], ...] = ((0.0, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.0))
CONFIDENT = 0.9  # the gate: answers at or above this confidence must be right

BRIER_MEANING = ("the mean over cases of (top-1 confidence − 1 if the top-1 class is right, else 0)²: "
                 "0 is perfect, always answering at confidence 0.5 scores 0.25")


@dataclass(frozen=True)
class Band:
    low: float
    high: float
    count: int
    correct: int
    mean_confidence: float | None

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.count if self.count else None

    @property
    def label(self) -> str:
        return f"[{self.low:g}, {self.high:g}]" if self.high >= 1.0 else f"[{self.low:g}, {self.high:g})"

    @classmethod
    def from_dict(cls, d: dict) -> Band:
        return cls(d["low"], d["high"], d["count"], d["correct"], d["mean_confidence"])

    def as_dict(self) -> dict:
        rnd = (lambda v: None if v is None else round(v, 4))
        return {"band": self.label, "low": self.low, "high": self.high, "count": self.count, "correct": self.correct,
                "accuracy": rnd(self.accuracy), "mean_confidence": rnd(self.mean_confidence)}


def band_index(confidence: float) -> int:
    """The band a confidence falls in; 1.0 belongs to the last band."""
    for i, (low, high) in enumerate(BANDS):
        if low <= confidence < high:
            return i
    return len(BANDS) - 1 if confidence >= BANDS[-1][0] else 0


def bands(pairs: list[tuple[float, bool]]) -> list[Band]:
    """Count and top-1 accuracy in each band (empty bands included, with count 0)."""
    groups: list[list[tuple[float, bool]]] = [[] for _ in BANDS]
    for conf, ok in pairs:
        groups[band_index(conf)].append((conf, ok))
    return [Band(low, high, len(g), sum(ok for _, ok in g), sum(c for c, _ in g) / len(g) if g else None)
            for (low, high), g in zip(BANDS, groups)]


def brier(pairs: list[tuple[float, bool]]) -> float | None:
    """Mean squared difference between the confidence and the outcome (1 right, 0 wrong); None with no pairs."""
    if not pairs:
        return None
    return sum((conf - (1.0 if ok else 0.0)) ** 2 for conf, ok in pairs) / len(pairs)


# --- the reliability plot ---------------------------------------------------------------------------------------

_W, _H, _L, _R, _T, _B = 400, 420, 56, 24, 64, 52  # size and margins


def _x(v: float) -> float:
    return round(_L + v * (_W - _L - _R), 1)


def _y(v: float) -> float:
    return round(_H - _B - v * (_H - _T - _B), 1)


def reliability_svg(bs: list[Band], title: str = "Reliability") -> str:
    """A self-contained SVG: accuracy against mean confidence, one point per non-empty band, the diagonal for reference.

    Point area grows with the band's count; each point is labelled with its count."""
    els = [f'<rect x="0" y="0" width="{_W}" height="{_H}" fill="white"/>',
           f'<text x="{_W / 2}" y="22" text-anchor="middle" font-size="14">{escape(title)}</text>']
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        els.append(f'<line x1="{_x(0)}" y1="{_y(t)}" x2="{_x(1)}" y2="{_y(t)}" stroke="#ddd"/>')
        els.append(f'<line x1="{_x(t)}" y1="{_y(0)}" x2="{_x(t)}" y2="{_y(1)}" stroke="#ddd"/>')
        els.append(f'<text x="{_x(0) - 6}" y="{_y(t) + 4}" text-anchor="end" font-size="11">{t:g}</text>')
        els.append(f'<text x="{_x(t)}" y="{_y(0) + 16}" text-anchor="middle" font-size="11">{t:g}</text>')
    for edge in BANDS[1:]:  # band edges along the confidence axis
        els.append(f'<line x1="{_x(edge[0])}" y1="{_y(0)}" x2="{_x(edge[0])}" y2="{_y(1)}" stroke="#bbb" '
                   'stroke-dasharray="2,3"/>')
    els.append(f'<rect x="{_x(0)}" y="{_y(1)}" width="{_x(1) - _x(0)}" height="{_y(0) - _y(1)}" fill="none" '
               'stroke="#333"/>')
    els.append(f'<line x1="{_x(0)}" y1="{_y(0)}" x2="{_x(1)}" y2="{_y(1)}" stroke="#888" stroke-dasharray="6,4"/>')
    els.append(f'<text x="{_x(1) - 6}" y="{_y(0) - 8}" text-anchor="end" font-size="10" fill="#666">'
               'dashed diagonal: perfectly calibrated</text>')
    els.append(f'<text x="{_W / 2}" y="{_H - 14}" text-anchor="middle" font-size="12">'
               'mean top-1 confidence in band</text>')
    mid = (_y(0) + _y(1)) / 2
    els.append(f'<text x="16" y="{mid}" text-anchor="middle" font-size="12" '
               f'transform="rotate(-90 16 {mid})">top-1 accuracy in band</text>')
    full = [b for b in bs if b.count]
    if len(full) > 1:
        pts = " ".join(f"{_x(b.mean_confidence or 0.0)},{_y(b.accuracy or 0.0)}" for b in full)
        els.append(f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="1.5"/>')
    total = sum(b.count for b in full) or 1
    for b in full:
        r = round(4 + 10 * (b.count / total) ** 0.5, 1)
        cx, cy = _x(b.mean_confidence or 0.0), _y(b.accuracy or 0.0)  # a band with a count has both
        els.append(f'<circle class="band" cx="{cx}" cy="{cy}" r="{r}" fill="#1f77b4" fill-opacity="0.7">'
                   f'<title>{escape(b.label)}: {b.correct}/{b.count} right</title></circle>')
        els.append(f'<text x="{cx}" y="{round(cy - r - 4, 1)}" text-anchor="middle" font-size="10">n={b.count}</text>')
    body = "\n  ".join(els)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" '
            f'font-family="sans-serif">\n  {body}\n</svg>\n')
