"""The README's pictures of the timeline: each case's swimlane as the HTML page draws it, in headless Chromium.

    python -m pathways_workload.evals.screenshots                       # docs/timeline-case-NNN-{1280,800}.png
    python -m pathways_workload.evals.screenshots --out DIR case-201    # any library case
    python -m pathways_workload.evals.screenshots --check               # the geometry at each width, no pictures

The page `diagnose --format html` writes is shown with every section but the timeline's picture hidden, in a window
of each width (Debian: `apt-get install -y chromium`). `geometry()` measures the drawn page in the browser (a copy with
a measuring script added) and `problems()` says what overlaps or is cut; tests/test_timeline_browser.py runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ("case-087", "case-009", "case-201")
WIDTHS = (1280, 800)
_ONLY_THE_PICTURE = ("<style>section:not([data-section=timeline]), ol.timeline { display: none } "
                     "body { margin-top: 0 }</style></head>")
# Run in the page (a copy without its Content-Security-Policy): every mark, label and line as a box in CSS px.
_MEASURE = """<script>
addEventListener('load', () => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const svg = document.getElementById('swimlane');
  const out = {width: innerWidth, chart: box(svg), page: document.documentElement.scrollWidth,
    marks: [...svg.querySelectorAll('.mark')].map(e => [e.dataset.kind, box(e), e.querySelector('title').textContent]),
    texts: [...svg.querySelectorAll('text')].map(e => [e.textContent, box(e)]),
    lines: [...svg.querySelectorAll('line')].map(e => [e.getAttribute('class'), box(e)]),
    labels: [...document.querySelectorAll('.lane-labels > div')].map(e => [e.textContent, box(e),
      e.scrollWidth > e.clientWidth])};
  const pre = document.createElement('pre'); pre.id = 'geometry'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script></body>"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def page(case: Path) -> str:
    from pathways_workload.skill.api import analyse_replay
    from pathways_workload.skill.telling.explain import build
    from pathways_workload.skill.telling.html import render_html

    a = analyse_replay(case)
    return render_html(build(a, logging_requests=0), a.model)


def _run(browser: str, args: list[str], url: str) -> subprocess.CompletedProcess:
    base = [browser, "--headless", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--mute-audio"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        base.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    return subprocess.run(base + args + [url], capture_output=True, text=True, timeout=120)


def _height(html: str) -> int:
    svg = re.search(r'<svg id="swimlane"[^>]*height="(\d+)"', html)
    return (int(svg.group(1)) if svg else 400) + 170  # the heading and the legend above it


def screenshot(case: Path, width: int, out: Path, browser: str) -> Path:
    html = page(case).replace("</head>", _ONLY_THE_PICTURE, 1)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"{case.name}.html"
        src.write_text(html)
        path = out / f"timeline-{case.name}-{width}.png"
        _run(browser, [f"--window-size={width},{_height(html)}", f"--screenshot={path}"], src.as_uri())
    if not path.exists():
        raise SystemExit(f"chromium wrote no screenshot of {case.name} at {width} px")
    return path


def geometry(case: Path, width: int, browser: str) -> dict:
    """What the browser drew at `width` px: boxes of the marks, the chart's texts and lines, and the lane labels."""
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page(case)).replace("</body>", _MEASURE, 1)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"{case.name}.html"
        src.write_text(html)
        dom = _run(browser, [f"--window-size={width},{_height(html)}", "--dump-dom"], src.as_uri()).stdout
    found = re.search(r'<pre id="geometry">(.*?)</pre>', dom, re.S)
    if not found:
        raise SystemExit(f"chromium measured nothing on {case.name}")
    return json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


def _meet(a: list[float], b: list[float], slack: float = 0.5) -> bool:
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


def problems(g: dict) -> list[str]:
    """Marks that overlap, lines through labels, anything outside the window or cut short."""
    out = []
    marks = g["marks"]
    for i, (kind, box, title) in enumerate(marks):
        for kind2, box2, title2 in marks[i + 1:]:
            if _meet(box, box2):
                out.append(f"{kind} mark ({title[:60]}) overlaps {kind2} mark ({title2[:60]})")
    for cls, line in g["lines"]:
        for text, box in g["texts"]:
            if _meet(line, box, 0.0):
                out.append(f"{cls} crosses the label {text!r}")
    for what, box in [(f"mark {t[:50]}", b) for _k, b, t in marks] + [(f"label {t!r}", b) for t, b in g["texts"]] + \
            [(f"lane label {t!r}", b) for t, b, _cut in g["labels"]]:
        if box[0] < 0 or box[2] > g["width"]:
            out.append(f"{what} is off-screen ({box[0]:.0f}..{box[2]:.0f} of {g['width']} px)")
    out += [f"lane label {t!r} is cut" for t, _b, cut in g["labels"] if cut]
    if g["page"] > g["width"]:
        out.append(f"the page is {g['page']} px wide in a {g['width']} px window")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pathways_workload.evals.screenshots",
                                 description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("cases", nargs="*", default=list(CASES), help="library case names (default: %(default)s)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs", help="folder for the PNGs (default: docs/)")
    ap.add_argument("--widths", default=",".join(map(str, WIDTHS)), help="window widths in px (default: %(default)s)")
    ap.add_argument("--check", action="store_true", help="measure the drawing in the browser instead; exit 1 on a fault")
    args = ap.parse_args(argv)
    browser = chromium()
    if browser is None:
        raise SystemExit("python -m pathways_workload.evals.screenshots needs Chromium (Debian: apt-get install -y "
                         "chromium)")
    bad = 0
    for name in args.cases:
        for width in map(int, args.widths.split(",")):
            if args.check:
                found = problems(geometry(ROOT / "fixtures" / name, width, browser))
                bad += len(found)
                print(f"{name} at {width} px: " + ("; ".join(found) if found else "nothing overlaps or is cut"))
            else:
                print(screenshot(ROOT / "fixtures" / name, width, args.out, browser))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
