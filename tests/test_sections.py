"""One view model for every renderer: for every library incident, JSON, the terminal report, Markdown and HTML show
the same sections in the same order (skill/telling/view.py's SECTIONS), read back from each rendered output."""

from __future__ import annotations

import json
import re

import pytest

from pathways_workload.skill.telling.render import render
from pathways_workload.skill.telling.view import BY_SECTION, SECTIONS, view

from conftest import CASES

TITLE = {s.title: s.id for s in SECTIONS}


def in_json(text: str) -> list[str]:
    """The sections the JSON contract holds content for, in SECTIONS order (JSON keys have no order of their own)."""
    doc = json.loads(text)
    shown = {"check_next": bool(doc["next_checks"]), "observations": bool(doc["observations"]),
             "insufficient": not doc["sufficiency"]["sufficient"]}
    return [s.id for s in SECTIONS if all(f in doc for f in s.fields) and shown.get(s.id, True)]


def in_markdown(text: str) -> list[str]:
    found = [(0, "summary")] if text.startswith("# ") else []
    found += [(m.start(), TITLE[m.group(1)]) for m in re.finditer(r"^## (.+)$", text, re.M) if m.group(1) in TITLE]
    found += [(m.start(), "footer") for m in re.finditer(r"^---$", text, re.M)]
    return [sid for _, sid in sorted(found)]


def in_html(text: str) -> list[str]:
    sections = re.findall(r'<section id="s-(\w+)" data-section="(\w+)">\n<(h[12]|hr)', text)
    assert all(a == b for a, b, _ in sections)
    return [b for _, b, _ in sections]


def in_text(text: str) -> list[str]:
    rules = [TITLE[m.group(1)] for m in re.finditer(r"^(.+?) ─{3,}$", text, re.M) if m.group(1) in TITLE]
    return (["summary"] if text.split("\n", 1)[0].split()[0] else []) + rules


READ = {"json": in_json, "markdown": in_markdown, "html": in_html, "text": in_text}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_format_shows_the_same_sections(case, diagnoses):
    d = diagnoses[case.name]
    want = [s.id for s in view(d).sections]
    for fmt, read in READ.items():
        assert read(render(d, fmt)) == want, fmt


def test_the_library_shows_every_section_somewhere(diagnoses):
    shown = {s.id for d in diagnoses.values() for s in view(d).sections}
    assert shown == set(BY_SECTION)


def test_sections_come_in_the_order_a_reader_needs():
    ids = [s.id for s in SECTIONS]
    assert ids[:5] == ["summary", "root_cause", "evidence", "timeline", "fix"] and ids[-1] == "footer"
    assert ids.index("check_next") < ids.index("observations") < ids.index("insufficient") < ids.index("data_gaps")
