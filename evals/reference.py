"""The shared reference's verbatim signatures against the catalog (issue 36, item 5): every `[V]` wording of the class
sections of ../shared/reference/pathways-failures.md, with the catalog signature that matches it or why none does.

    python -m pathways_workload.evals.reference [--reference PATH] [--json]

The reference tags each signature with where it came from; `[V]` (also `[V, <source>]`, `[V format]`, `[V milestone]`)
is copied verbatim from a cited source (its section 9). The wordings, with their section, class and source, are
vendored in evals/reference_signatures.yaml, since a clean checkout has no ../shared; each names the catalog owner
(a class, `symptom:<id>` or `milestone:<id>`) one of whose patterns matches it, or a reason none does.
tests/test_reference_signatures.py holds the list to the catalog and, where the reference is present, to the reference.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import re2
import yaml

from pathways_workload.evals.provenance import patterns
from pathways_workload.skill.catalog.types import SIDECAR_CONTAINER, RuleContext

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT.parent / "shared" / "reference" / "pathways-failures.md"
VENDORED = Path(__file__).resolve().parent / "reference_signatures.yaml"

_CLASS = re.compile(r"#### (?:(\d+)\.|\((\w+)\)) `(\w+)`")
_HEADER = re.compile(r"- \*\*(?:Signatures?|Sub-classes)[^*]*\*\*")  # a signature block: its items inherit its tag
_TAG = re.compile(r"\[(V[^\]]*|R[^\]]*|S)\]")
_SPAN = re.compile(r"`([^`]+)`")
PLACEHOLDER = re.compile(r"<[^<>]+>|…")  # what the reference's author left out of a wording: `<name>`, `…`


@dataclass(frozen=True)
class RefSignature:
    """One verbatim wording of the reference: its class section (number and id), its tag, the wording."""

    section: str
    ref_class: str
    tag: str
    wording: str

    @property
    def key(self) -> tuple[str, str, str]:
        return self.section, self.ref_class, self.wording


def verbatim(tag: str) -> bool:
    """`[V]`, `[V, source]`, `[V format]`, `[V milestone]`: verbatim; `[V-code]` (a format string) and `[V-ish]` not."""
    return tag == "V" or tag.startswith(("V,", "V "))


def extract(markdown: str) -> list[RefSignature]:
    """Every backquoted wording of a `[V]` signature item in the class sections (§5), in the order of the file.

    An item is a bullet of a "Signature(s)" or "Sub-classes" block (tagged by its own tag, or else by the block's) or
    a top-level bullet that starts with its tag; its continuation lines belong to it. Tags are cut out before the
    wordings are read (a tag may quote a path)."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("## 5."))
    end = next(i for i, line in enumerate(lines) if line.startswith("## 6."))
    items: list[list] = []  # [section, class, tag, text]
    section = cls = ""
    block: str | None = None  # the open block's tag ("" when untagged); None outside a block
    item: list | None = None  # [section, class, tag, text]
    fenced = False
    for line in lines[start:end]:
        if line.startswith("```"):
            fenced, item = not fenced, None
            continue
        if fenced:
            continue
        if m := _CLASS.match(line):
            section, cls = m.group(1) or m.group(2), m.group(3)
            block = item = None
        elif line.startswith("- "):
            item = None
            if h := _HEADER.match(line):
                tag = _TAG.search(h.group(0))
                block = tag.group(1) if tag else ""
                if "`" in line[h.end():]:
                    item = [section, cls, block, line[h.end():]]
            elif line.startswith("- [V"):
                block = None
                item = [section, cls, _first_tag(line), line]
            else:
                block = None
            if item:
                items.append(item)
        elif block is not None and re.match(r"\s+- ", line):
            own = _own_tag(line)
            item = [section, cls, own if own is not None else block, line]
            items.append(item)
        elif item is not None and re.match(r"\s{2,}\S", line):
            item[3] += " " + line.strip()
        elif not line.strip():
            item = None
    out = []
    for section, cls, tag, text in items:
        if not verbatim(tag):
            continue
        text = _TAG.sub("", text.replace("\\`", "'"))
        out += [RefSignature(section, cls, tag, w) for w in _SPAN.findall(text)]
    return out


def _first_tag(line: str) -> str:
    m = _TAG.search(line)
    return m.group(1) if m else ""


def _own_tag(line: str) -> str | None:
    """A nested bullet's own tag: one that opens it, or a `[V milestone]` anywhere on it."""
    body = line.strip()[2:]
    m = _TAG.search(body)
    if m and (body.startswith("[") or "milestone" in m.group(1)):
        return m.group(1)
    return None


def load() -> list[dict]:
    """The vendored list: one mapping per wording (section, ref_class, source, wording, line?, match | none)."""
    return yaml.safe_load(VENDORED.read_text())["signatures"]


def filled(wording: str, line: str) -> bool:
    """Whether `line` is `wording` with its placeholders filled in: every literal piece, in order."""
    pos = 0
    for piece in (p.strip() for p in PLACEHOLDER.split(wording)):
        if not piece:
            continue
        pos = line.find(piece, pos)
        if pos < 0:
            return False
        pos += len(piece)
    return True


def owners(line: str) -> list[str]:
    """The catalog owners (class id, symptom:<id>, milestone:<id>) with a pattern that matches `line`, checks included.

    Patterns read only in the colocated Python sidecar (any exception line there is the sidecar's failure) do not
    count: the reference's [V] wordings are the workload's own components' (its sidecar class has [V-code] only)."""
    out: list[str] = []
    for owner, p in patterns():
        if p.containers == (SIDECAR_CONTAINER,):
            continue
        m = re2.search("(?m)" + p.regex, line)
        if m is None:
            continue
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        if p.check is not None and not p.check(RuleContext(text=line, groups=groups)):
            continue
        if owner not in out:
            out.append(owner)
    return out


def report(reference: Path | None = None) -> dict:
    """Each vendored wording with the owners that match it now; and, where the reference is readable, the wordings
    it has that the list lacks (`new`) and the listed ones it no longer has (`gone`)."""
    rows = []
    for e in load():
        line = e.get("line") or e["wording"]
        rows.append({**e, "matched_by": owners(line)})
    out: dict = {"signatures": len(rows), "matched": sum(1 for r in rows if "match" in r),
                 "unmatched": sum(1 for r in rows if "none" in r), "rows": rows}
    path = reference or REFERENCE
    if path.exists():
        now = {s.key for s in extract(path.read_text())}
        listed = {(e["section"], e["ref_class"], e["wording"]) for e in load()}
        out["new"] = sorted(now - listed)
        out["gone"] = sorted(listed - now)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pathways_workload.evals.reference", description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", type=Path, default=None, help=f"the reference (default: {REFERENCE})")
    ap.add_argument("--json", action="store_true", help="print the whole report as JSON")
    args = ap.parse_args(argv)
    rep = report(args.reference)
    if args.json:
        print(json.dumps(rep, indent=2))
        return 0
    for r in rep["rows"]:
        verdict = f"-> {r['match']}" if "match" in r else f"none: {r['none']}"
        print(f"§{r['section']:>3} {r['ref_class']:<36} {r['wording'][:70]!r:<74} {verdict}")
    print(f"{rep['signatures']} [V] wordings: {rep['matched']} matched, {rep['unmatched']} with a reason", end="")
    if "new" in rep:
        print(f"; not listed: {len(rep['new'])}, no longer in the reference: {len(rep['gone'])}")
    else:
        print(" (reference not found)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
