"""The recording manifest is consistent, and every committed recording has its output and its provenance."""

from __future__ import annotations

import re
import tomllib

import pytest
import yaml

from pathways_workload.evals.recording.split import REQUIRED, split
from tests.conftest import ROOT

RECORDING = ROOT / "evals" / "recording"
ROWS = tomllib.loads((RECORDING / "scenarios.toml").read_text())["scenario"]
TAXONOMY_IDS = set(re.findall(r"^\| `([a-z_]+)` \|", (ROOT / "docs" / "taxonomy.md").read_text(), re.M))
RECORDINGS = sorted(p for p in (ROOT / "fixtures" / "recordings").glob("*") if p.is_dir())


def test_manifest_rows_are_consistent():
    ids = [r["id"] for r in ROWS]
    assert len(ids) == len(set(ids))
    for r in ROWS:
        assert (ROOT / r["program"]).is_file(), r["id"]
        assert r["kind"] in ("failure", "healthy") and r["expected_class"] in TAXONOMY_IDS, r["id"]
        assert set(r["groups"]) <= {"A", "B", "C", "B19", "B20", "B21", "B22", "B23", "B24", "B25", "B26"} and 0 < r["timeout"] <= 70, r["id"]


@pytest.mark.parametrize("folder", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_recording_has_output_and_provenance(folder):
    prov = yaml.safe_load((folder / "provenance.yaml").read_text())
    assert not [k for k in REQUIRED if k not in prov]
    assert prov["id"] == folder.name and prov["expected_class"] in TAXONOMY_IDS
    lines = (folder / "output.log").read_text().splitlines()
    assert lines and all(line[:2] in ("O\t", "E\t", "N\t") for line in lines)


def test_split_writes_a_folder_per_recorded_scenario(tmp_path):
    log = tmp_path / "group-A.log"
    log.write_text("\n".join([
        "===== SCENARIO BEGIN _env =====", "----- OUTPUT -----", "O\t1.0\tjax_version: 0.10.2",
        "O\t1.0\tdevice_kind: TPU v5 lite", "----- END OUTPUT -----", "===== SCENARIO END _env =====",
        "===== SCENARIO BEGIN hbm-oom-alloc =====", "command: python3 x.py", 'env: {"A": "1"}',
        "start_utc: 2026-12-05T10:00:00Z", "----- OUTPUT -----", "E\t2.5\tRESOURCE_EXHAUSTED: Error allocating",
        "----- END OUTPUT -----", "exit_code: 1", "===== SCENARIO END hbm-oom-alloc =====",
        "===== SCENARIO BEGIN debug-nans =====", "skipped: group deadline", "===== SCENARIO END debug-nans ====="]))
    assert split([log], tmp_path / "out") == ["hbm-oom-alloc"]
    prov = yaml.safe_load((tmp_path / "out" / "hbm-oom-alloc" / "provenance.yaml").read_text())
    assert (prov["exit_code"], prov["chip"], prov["env"]["A"]) == (1, "TPU v5 lite", "1")
