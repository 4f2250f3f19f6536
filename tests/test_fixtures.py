"""Every recorded incident through the public entry point: class, status, entities, evidence and citations."""

from __future__ import annotations

import json
import shutil

import jsonschema
import pytest

from pathways_workload.evals.evaluators import entity_key

from pathways_workload.skill.api import diagnose_replay
from pathways_workload.skill.diagnosis import Diagnosis

from conftest import CASES, ROOT, expected, input_ids

SCHEMA = json.loads((ROOT / "skill" / "schema" / "diagnosis.schema.json").read_text())


def test_there_are_enough_cases():
    assert len(CASES) >= 15


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fixture_diagnosis(case, diagnoses):
    d = diagnoses[case.name]
    exp = expected(case)
    assert d.failure_class == exp["failure_class"]
    assert d.hypotheses[0].failure_class == d.failure_class
    assert d.status == exp["status"]
    got = {entity_key(e.kind, e.name) for e in d.root_cause.entities}  # one entity however spelled (the eval's rule)
    assert {entity_key(e["kind"], e["name"]) for e in exp.get("root_cause_entities") or []} <= got
    assert set(exp.get("evidence") or []) <= d.cited_ids()
    assert d.cited_ids() <= input_ids(case), "a cited id is not in the input"
    for needle in exp.get("data_gaps_require") or []:
        assert any(needle.lower() in g.lower() for g in d.data_gaps), needle
    for needle in exp.get("fix_requires") or []:
        assert any(needle in f"{f.summary} {f.command or ''}" for f in d.fix), needle


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_json_output_validates_against_the_shipped_schema(case, diagnoses):
    doc = diagnoses[case.name].to_json_dict()
    jsonschema.validate(doc, SCHEMA)
    assert doc["schema"] == "pathways-workload.diagnosis/v2"


def test_shipped_schema_is_current():
    assert SCHEMA == Diagnosis.model_json_schema(by_alias=True)


def test_verdict_does_not_read_expectations(tmp_path, diagnoses):
    for case in CASES[:6]:
        copy = tmp_path / case.name
        shutil.copytree(case, copy, ignore=shutil.ignore_patterns("expected.yaml", "scenario.yaml", "*.md"))
        d = diagnose_replay(copy)
        assert d.to_json_dict()["evidence"] == diagnoses[case.name].to_json_dict()["evidence"]
        assert d.failure_class == diagnoses[case.name].failure_class


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_log_gap_only_when_node_logs_are_missing(case, diagnoses):
    """'no node logs' must mean the export has none, not that no node line matched a signature."""
    logs = json.loads((case / "logs.json").read_text())
    has_node_logs = any(e["resource"]["type"] == "k8s_node" and e["logName"].rsplit("/", 1)[-1]
                        in ("kubelet", "node-problem-detector", "container-runtime") for e in logs)
    gap = any(g.startswith("no node logs") for g in diagnoses[case.name].data_gaps)
    assert gap == (not has_node_logs)
