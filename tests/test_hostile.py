"""The hostile corpus (evals/corpus.py): every broken export ends in a clean error or a diagnosis whose data_gaps say
what was skipped, and every input item is either read or reported skipped."""

from __future__ import annotations

import json

import pytest

from pathways_workload.evals.corpus import CORPUS, Hostile
from pathways_workload.evals.reliability import run_hostile
from pathways_workload.cli import main

REPORTED = ("skipped", "cut off", "not closed", "replaced", "not valid JSON")


def _params():
    for h in CORPUS:
        marks = [pytest.mark.xfail(strict=True, reason=h.known_bug)] if h.known_bug else []
        yield pytest.param(h, id=h.name, marks=marks)


@pytest.mark.parametrize("h", list(_params()))
def test_hostile_input_is_accounted_for(h: Hostile, tmp_path):
    out = run_hostile(h, tmp_path)
    assert out.outcome == h.expect, (out.outcome, out.detail)
    if out.outcome == "error":
        assert "\n" not in out.detail and str(tmp_path) in out.detail
        return
    if h.failure_class:
        assert out.failure_class == h.failure_class
    if out.items_in is not None:
        assert out.accounted == out.items_in, f"{out.items_in} items in, {out.accounted} read or reported skipped"
    if out.skipped or out.items_in is None:
        assert any(word in g for g in out.gaps for word in REPORTED), out.gaps


@pytest.mark.parametrize("h", [h for h in CORPUS if not h.known_bug], ids=lambda h: h.name)
def test_hostile_input_through_the_cli(h: Hostile, tmp_path, capsys):
    h.make(tmp_path / "in")
    rc = main(["diagnose", "--replay", str(tmp_path / "in"), "--format", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    if h.expect == "error":  # --format json: one JSON error object on stdout, one line of message
        error = json.loads(out)["error"]
        assert rc == 2 and err == "" and error["message"] and "\n" not in error["message"]
    else:
        assert rc == 0 and json.loads(out)["data_gaps"]
