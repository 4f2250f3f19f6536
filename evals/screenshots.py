"""The README's pictures of the timeline: each case's swimlane, as the HTML page draws it, rendered to a PNG.

    python -m pathways_workload.evals.screenshots                      # docs/timeline-case-087.png and docs/timeline-case-009.png
    python -m pathways_workload.evals.screenshots --out DIR case-201   # any library case

The SVG is taken from the page `diagnose --format html` writes and rendered with the page's own stylesheet by resvg
(`pip install resvg-py`, a self-contained wheel: no browser, no system libraries), at the picture's own width.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ("case-087", "case-009")
_SVG = re.compile(r'<svg id="swimlane".*?</svg>', re.S)
_STYLE = re.compile(r"<style>(.*?)</style>", re.S)


def swimlane_svg(case: Path) -> tuple[str, str]:
    """The case's swimlane SVG (drawn at its own width) and the page's stylesheet."""
    from pathways_workload.skill.api import analyse_replay
    from pathways_workload.skill.telling.explain import build
    from pathways_workload.skill.telling.html import render_html

    a = analyse_replay(case)
    page = render_html(build(a, logging_requests=0), a.model)
    svg, style = _SVG.search(page), _STYLE.search(page)
    if not svg or not style:
        raise SystemExit(f"{case}: the page has no swimlane")
    width = re.search(r'viewBox="0 0 (\d+) (\d+)"', svg.group(0))
    assert width is not None
    fixed = svg.group(0).replace('width="100%"', f'width="{width.group(1)}" height="{width.group(2)}"', 1)
    return fixed, style.group(1)


def render(case: Path, out: Path) -> Path:
    try:
        import resvg_py
    except ImportError:
        raise SystemExit("python -m pathways_workload.evals.screenshots needs resvg-py: pip install resvg-py") from None
    svg, style = swimlane_svg(case)
    png = resvg_py.svg_to_bytes(svg_string=svg, style_sheet=style, background="#ffffff", zoom=1.0,
                                font_family="DejaVu Sans", sans_serif_family="DejaVu Sans")
    path = out / f"timeline-{case.name}.png"
    path.write_bytes(bytes(png))
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pathways_workload.evals.screenshots", description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", default=list(CASES), help="library case names (default: %(default)s)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs", help="folder for the PNGs (default: docs/)")
    args = ap.parse_args(argv)
    for name in args.cases:
        print(render(ROOT / "fixtures" / name, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
