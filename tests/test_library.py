"""The incident library meets its floor, and fixtures/README.md lists exactly the cases that exist."""

from __future__ import annotations

from pathways_workload.evals import library

from conftest import ROOT

FIXTURES = ROOT / "fixtures"


def test_the_library_meets_its_floor():
    assert library.shortfalls(library.entries(FIXTURES)) == []


def test_the_case_table_is_current():
    lib = library.entries(FIXTURES)
    assert library.table_is_current(FIXTURES / "README.md", lib), "run: python -m pathways_workload.evals.library fixtures/ --write"


def test_shortfalls_name_what_is_missing(tmp_path):
    (tmp_path / "case-001").mkdir()
    (tmp_path / "case-001" / "expected.yaml").write_text("failure_class: hbm_oom\nstatus: failed\ntags: [injection]\n")
    short = library.shortfalls(library.entries(tmp_path))
    assert "1 cases, need 72" in short
    assert "hbm_oom: 1 case(s), need 2" in short
    assert "0 healthy controls, need 6" in short and "1 injection cases, need 4" in short
    assert "no case tagged cascade" in short


def test_write_table_is_idempotent(tmp_path):
    (tmp_path / "case-001").mkdir()
    (tmp_path / "case-001" / "expected.yaml").write_text("failure_class: hbm_oom\nstatus: failed\n")
    (tmp_path / "case-001" / "scenario.yaml").write_text("description: A | pipe.\n")
    (tmp_path / "README.md").write_text("# Fixtures\n")
    lib = library.entries(tmp_path)
    assert library.write_table(tmp_path / "README.md", lib)
    assert not library.write_table(tmp_path / "README.md", lib)
    assert library.table_is_current(tmp_path / "README.md", lib)
    assert "A \\| pipe." in (tmp_path / "README.md").read_text()
