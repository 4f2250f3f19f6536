"""The terminal report (skill/terminal.py): plain-text snapshots, colour only where asked, untrusted text kept inert,
long links kept whole and out of the columns."""

from __future__ import annotations

import os
import re

import pytest

from pathways_workload.skill.api import diagnose_replay
from pathways_workload.cli import main
from pathways_workload.skill.diagnosis import Diagnosis
from pathways_workload.skill.telling.terminal import WIDTH, render_text, wants_color

from conftest import FIXTURES, ROOT

SNAPSHOTS = ROOT / "tests" / "snapshots"
SHAPES = ("case-001", "case-002", "case-009", "case-012")  # as tests/test_report.py: failed, healthy, crashing, stalled


def _text(case: str, **kw) -> str:
    d = diagnose_replay(FIXTURES / case)
    text = render_text(d, replay_files=len(list((FIXTURES / case).glob("*.json"))), **kw)
    return re.sub(r"in \d+\.\d\d s\.", "in <seconds> s.", text)  # timing varies


@pytest.mark.parametrize("case", SHAPES)
def test_terminal_snapshot(case):
    text, snapshot = _text(case), SNAPSHOTS / f"{case}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS"):
        snapshot.write_text(text)
    assert text == snapshot.read_text()


def test_colour_only_when_asked_and_never_with_no_color_or_a_dumb_terminal():
    assert "\x1b[" in _text("case-001", color=True) and "\x1b[" not in _text("case-001")
    assert wants_color(True, {}) and not wants_color(False, {})
    assert not wants_color(True, {"NO_COLOR": ""}) and not wants_color(True, {"TERM": "dumb"})


def _whole(text: str, d: Diagnosis) -> set[str]:
    """The lines that may run past the width: link footnotes, and commands and filters (each shown whole)."""
    commands = [f.command for f in d.fix if f.command] + [x for c in d.next_checks for x in (c.filter, c.command, c.promql)
                                                          if x]
    return {line for line in text.splitlines() if re.match(r"\[\d+\] https://", line)
            or line.strip() in {c for cmd in commands for c in cmd.splitlines()}}


@pytest.mark.parametrize("case", ["case-009", "case-012", "case-087"])
def test_long_links_and_commands_stay_whole_and_out_of_the_columns(case):
    d = diagnose_replay(FIXTURES / case)
    text = render_text(d, width=80)
    links = [line for line in text.splitlines() if re.match(r"\[\d+\] https://", line)]
    assert len(links) == sum(1 for e in d.evidence if e.link) and all(" " not in x.split(" ", 1)[1] for x in links)
    assert all(len(line) <= 80 for line in text.splitlines() if line not in _whole(text, d))
    assert "https://" not in text.split("About this report")[0]
    for f in d.fix:  # a command is one line: a copy runs the whole of it
        assert not f.command or all(line.strip() in text.splitlines() or f"   {line}" in text
                                    for line in f.command.splitlines())


def test_log_text_cannot_drive_the_terminal():
    d = diagnose_replay(FIXTURES / "case-004").to_json_dict()
    d["evidence"][0]["excerpt"] = "boom \x1b[2J\x1b]0;pwned\x07 [bold red]markup[/] \r done"
    text = render_text(Diagnosis.model_validate(d), color=True)
    assert "\x1b[2J" not in text and "\x07" not in text and "\\x1b[2J" in text
    assert "[bold red]markup[/]" in text  # shown as written, not interpreted


def test_the_cli_writes_the_terminal_report_plain(tmp_path, capsys):
    out = tmp_path / "report.txt"
    assert main(["diagnose", "--replay", str(FIXTURES / "case-001"), "--output", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("tpu_hardware_failure") and "\x1b[" not in text
    whole = _whole(text, diagnose_replay(FIXTURES / "case-001"))
    assert max(len(line) for line in text.splitlines() if line not in whole) <= WIDTH
    assert main(["diagnose", "--replay", str(FIXTURES / "case-001"), "--format", "text"]) == 0
    same = lambda t: re.sub(r"in \d+\.\d\d s\.", "", t)  # noqa: E731 - timing varies
    assert same(capsys.readouterr().out) == same(text)  # stdout not a terminal: the same plain text, no colour
