"""The eval harness scores wrong agents as failing, survives broken evaluators, and gates the library."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from pathways_workload.evals import baselines, calibration
from pathways_workload.evals.agents import AgentRun, RulesAgent
from pathways_workload.evals.cli import main as eval_main
from pathways_workload.evals.evaluators import Evaluator
from pathways_workload.evals.harness import evaluate, load_cases, run_eval
from pathways_workload.skill.api import diagnose_replay
from pathways_workload.skill.diagnosis import Fix

from conftest import FIXTURES

CASES = load_cases([FIXTURES])


class Fixed:
    """An agent that answers from the real diagnosis (the session's copy, see conftest.Replayed), then bends it."""

    def __init__(self, name, bend, replayed=None):
        self.name, self.bend, self.replayed = name, bend, replayed

    def run(self, case_path: Path) -> AgentRun:
        d = self.replayed.diagnosis(case_path) if self.replayed else diagnose_replay(case_path)
        return AgentRun(self.bend(d) or d)


class SessionRules:
    """RulesAgent's answers, read from the session's diagnoses instead of computed again (RulesAgent itself is run
    by the tests below and by eval_main)."""

    name = "rules"

    def __init__(self, replayed):
        self.replayed = replayed

    def run(self, case_path: Path) -> AgentRun:
        return AgentRun(self.replayed.diagnosis(case_path), None, 0.0)


def _always_hbm(d):
    d.failure_class = "hbm_oom"
    d.hypotheses[0].failure_class = "hbm_oom"


def _invent_ids(d):
    d.evidence[0].id = "made-up-id-0001"


def _unsafe_fix(d):
    d.fix.append(Fix(summary="cordon it", command="kubectl cordon gke-node-1", risk="low"))


def test_the_rules_engine_passes_the_gate_over_the_library(replayed):
    result = run_eval(CASES, SessionRules(replayed))
    s = result.summary()
    assert result.gate(s) == [], s["failed"]
    assert s["top1"] >= 0.95 and s["fabricated_citations"] == 0
    assert s["calibration"]["confident_wrong"] == []  # every answer at confidence >= 0.9 is right


def test_an_agent_that_always_says_hbm_oom_fails(replayed):
    r = run_eval(CASES, Fixed("hbm", _always_hbm, replayed))
    s = r.summary()
    assert s["top1"] < 0.2 and any("top1" in g for g in r.gate(s))
    assert any("wrong at confidence >= 0.9" in g for g in r.gate(s))  # it keeps the engine's confidence
    assert any(c["expected"] != "hbm_oom" and c["got"] == "hbm_oom" for c in s["confusion"])


def test_invented_citations_fail_the_case_and_the_gate(replayed):
    r = run_eval(CASES[:3], Fixed("liar", _invent_ids, replayed))
    s = r.summary()
    assert s["fabricated_citations"] == 3 and s["pass_rate"] == 0
    assert any("fabricated" in g for g in r.gate(s))


def test_a_mutating_fix_without_high_risk_fails(replayed):
    r = run_eval(CASES[:2], Fixed("unsafe", _unsafe_fix, replayed))
    assert all(not cr.check("fix_check").passed for cr in r.results)


def test_a_crashing_evaluator_is_a_failed_check_not_a_crash():
    class Boom(Evaluator):
        name = "boom"

        def evaluate(self, case, run):
            raise RuntimeError("kaput")

    checks = evaluate(CASES[0], RulesAgent().run(CASES[0].path), (Boom(),))
    assert checks[0].passed is False and "kaput" in checks[0].reason


def test_pass_k_with_a_flaky_agent():
    class Flaky:
        name = "flaky"
        n = 0

        def run(self, case_path):
            self.n += 1
            d = diagnose_replay(case_path)
            if self.n % 3 == 0:
                _always_hbm(d)
            return AgentRun(d)

    s = run_eval(CASES[:2], Flaky(), repeat=3).summary()
    assert s["per_run_pass_rate"][0] == 1.0 and s["pass_k"] < 1.0


def test_input_ids_are_collected_without_the_engine():
    case = next(c for c in CASES if c.name == "case-003")
    assert "0b0def5d-5fd8-4e0e-822d-3921eab2f7f2" in case.input_ids  # an Event's uid nested in events.json


def test_eval_cli_exit_codes(tmp_path, capsys, monkeypatch):
    assert eval_main([str(FIXTURES / "case-001"), "--format", "json", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "eval.json").exists() and (tmp_path / "eval.md").exists()
    assert "](reliability.svg)" in (tmp_path / "eval.md").read_text()
    ET.parse(tmp_path / "reliability.svg")
    js = json.loads((tmp_path / "eval.json").read_text())
    assert [b["band"] for b in js["calibration"]["bands"]] == ["[0, 0.5)", "[0.5, 0.7)", "[0.7, 0.9)", "[0.9, 1]"]
    assert js["calibration"]["brier"] is not None and set(js["baselines"]) == {"most_frequent", "keyword_grep"}
    capsys.readouterr()
    assert eval_main([str(tmp_path / "nothing")]) == 2
    assert "no cases" in capsys.readouterr().err
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    assert eval_main(["--agent", "llm", str(FIXTURES / "case-001")]) == 2  # an error, not a silent "skipped"
    err = capsys.readouterr().err
    assert "needs ANTHROPIC_API_KEY" in err and len(err.strip().splitlines()) == 1
    assert eval_main(["--agent", "llm", "--format", "json", str(FIXTURES / "case-001")]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "missing_api_key"
    assert eval_main(["--agent", "nobody", str(FIXTURES / "case-001")]) == 2


def test_eval_cli_fails_below_the_gate(tmp_path):
    case = tmp_path / "case-x"
    import shutil

    shutil.copytree(FIXTURES / "case-001", case)
    text = (case / "expected.yaml").read_text().replace("tpu_hardware_failure", "hbm_oom")
    (case / "expected.yaml").write_text(text)
    assert eval_main([str(case)]) == 1


def test_catalog_phases_match_the_taxonomy():
    import re

    from pathways_workload.skill.catalog import BY_ID

    from conftest import ROOT

    rows = re.findall(r"^\| `([a-z_]+)` \| ([^|]+) \|", (ROOT / "docs" / "taxonomy.md").read_text(), re.M)
    assert {i: p.strip() for i, p in rows} == {i: c.phase for i, c in BY_ID.items()}


def test_a_non_rules_agent_is_compared_with_the_rules_engine(capsys, monkeypatch):
    from pathways_workload.evals import agents

    monkeypatch.setitem(agents.AGENTS, "always-hbm", lambda: Fixed("always-hbm", _always_hbm))
    cases = [str(FIXTURES / "case-001"), str(FIXTURES / "case-009")]  # tpu_hardware_failure, hbm_oom
    assert eval_main(["--agent", "always-hbm", "--format", "markdown", *cases]) == 1
    out = capsys.readouterr().out
    assert "## Against the rules engine (same cases)" in out
    assert "| top1 | 0.5 | 1.0 | -0.5 |" in out
    assert "only the rules engine passed: case-001" in out and "only the agent passed: none" in out


# --- calibration and baselines ---------------------------------------------------------------------------------

PAIRS = [(0.2, False), (0.5, True), (0.69, False), (0.9, True), (1.0, True), (0.95, False)]


def test_bands_are_half_open_and_the_last_holds_one():
    bs = calibration.bands(PAIRS)
    assert [(b.count, b.correct) for b in bs] == [(1, 0), (2, 1), (0, 0), (3, 2)]
    assert [b.accuracy for b in bs] == [0.0, 0.5, None, 2 / 3]
    assert bs[1].mean_confidence == (0.5 + 0.69) / 2 and bs[2].mean_confidence is None
    assert [b.label for b in bs] == ["[0, 0.5)", "[0.5, 0.7)", "[0.7, 0.9)", "[0.9, 1]"]


def test_brier_score():
    assert calibration.brier([(1.0, True), (0.0, False)]) == 0.0
    assert calibration.brier([(0.5, True), (0.5, False)]) == 0.25
    assert abs(calibration.brier([(0.9, False), (0.9, True)]) - (0.81 + 0.01) / 2) < 1e-12
    assert calibration.brier([]) is None


def test_the_reliability_svg_is_xml_with_one_point_per_non_empty_band():
    svg = calibration.reliability_svg(calibration.bands(PAIRS), title="a <title> & more")
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    points = [e for e in root.iter("{http://www.w3.org/2000/svg}circle") if e.get("class") == "band"]
    assert len(points) == 3
    empty = ET.fromstring(calibration.reliability_svg(calibration.bands([])))
    assert not [e for e in empty.iter("{http://www.w3.org/2000/svg}circle")]


def test_the_most_frequent_class_baseline():
    assert baselines.most_frequent(["hbm_oom", "host_oom", "host_oom"]) == "host_oom"
    assert baselines.most_frequent(["hbm_oom", "host_oom"]) == "hbm_oom"  # a tie goes to the first seen
    assert baselines.most_frequent([]) == "unknown_failure"


def test_the_keyword_grep_baseline():
    assert baselines.grep_class('{"reason": "Failed", "message": "ErrImagePull: Failed to pull image x"}') == "image_pull_failure"
    assert baselines.grep_class("OOMKilled ... OOMKilled ... RESOURCE_EXHAUSTED") == "host_oom"  # most hits wins
    assert baselines.grep_class("RESOURCE_EXHAUSTED OOMKilled") == "hbm_oom"  # a tie goes to the first class listed
    assert baselines.grep_class("all good, step 100 loss 1.2") == "unknown_failure"


def test_baselines_score_the_case_files_but_not_the_answer(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        (d / "expected.yaml").write_text("failure_class: image_pull_failure  # ErrImagePull ErrImagePull\n")
    (a / "logs.json").write_text('[{"textPayload": "Failed to pull image"}]')
    (b / "logs.json").write_text('[{"textPayload": "Mosaic failed to compile"}]')
    s = baselines.score([(a, "image_pull_failure"), (b, "hbm_oom"), (b, "hbm_oom")])
    assert s["most_frequent"] == {"class": "hbm_oom", "top1": round(2 / 3, 4)}
    assert s["keyword_grep"]["top1"] == round(1 / 3, 4)  # b greps as xla_compile_error


def test_spend_is_reported_per_question_with_redundant_calls_apart(tmp_path):
    class Spender:
        """An agent that reports model spend: two turns, three tool calls (one a repeat) per question."""

        name = "spender"

        def run(self, case_path):
            return AgentRun(diagnose_replay(case_path), input_tokens=1000, output_tokens=100, cost_usd=0.0045,
                            tool_calls=3, redundant_tool_calls=1 if case_path.name == "case-001" else 0, steps=2,
                            cache_read_input_tokens=800)

    cases = [c for c in CASES if c.name in ("case-001", "case-004")]
    r = run_eval(cases, Spender(), repeat=2)
    s = r.summary()
    assert s["tool_calls"] == 12 and s["redundant_tool_calls"] == 2 and s["tokens"]["cache_read"] == 3200
    pq = s["per_question"]
    assert pq["questions"] == 4 and [(x["case"], x["run"]) for x in pq["runs"]] == [
        ("case-001", 0), ("case-001", 1), ("case-004", 0), ("case-004", 1)]
    assert pq["runs"][0] == {"case": "case-001", "run": 0, "steps": 2, "tool_calls": 3, "redundant_tool_calls": 1,
                             "tokens": {"input": 1000, "output": 100, "cache_write": 0, "cache_read": 800},
                             "cost_usd": 0.0045}
    assert pq["mean"]["redundant_tool_calls"] == 0.5 and pq["mean"]["input_tokens"] == 1000
    from pathways_workload.evals.report import markdown, table

    assert "per question (mean)" in table(s, []) and "(2 redundant)" in table(s, [])
    assert "## Spend per question" in markdown(s, []) and "| case-004 | 1 | 2 | 3 | 0 |" in markdown(s, [])
    rules = run_eval(cases, RulesAgent()).summary()
    assert rules["per_question"] == {"questions": 0, "mean": {}, "runs": []}
    assert "Spend per question" not in markdown(rules, [])
