"""The eval harness scores wrong agents as failing, survives broken evaluators, and gates the library."""

from __future__ import annotations

import json
from pathlib import Path

from evals.agents import AgentRun, RulesAgent
from evals.cli import main as eval_main
from evals.evaluators import Evaluator
from evals.harness import evaluate, load_cases, run_eval
from skill.api import diagnose_replay
from skill.diagnosis import Fix

from conftest import FIXTURES

CASES = load_cases([FIXTURES])


class Fixed:
    """An agent that answers from the real diagnosis, then bends it."""

    def __init__(self, name, bend):
        self.name, self.bend = name, bend

    def run(self, case_path: Path) -> AgentRun:
        d = diagnose_replay(case_path)
        return AgentRun(self.bend(d) or d)


def _always_hbm(d):
    d.failure_class = "hbm_oom"
    d.hypotheses[0].failure_class = "hbm_oom"


def _invent_ids(d):
    d.evidence[0].id = "made-up-id-0001"


def _unsafe_fix(d):
    d.fix.append(Fix(summary="cordon it", command="kubectl cordon gke-node-1", risk="low"))


def test_the_rules_engine_passes_the_gate_over_the_library():
    result = run_eval(CASES, RulesAgent())
    s = result.summary()
    assert result.gate(s) == [], s["failed"]
    assert s["top1"] >= 0.95 and s["fabricated_citations"] == 0


def test_an_agent_that_always_says_hbm_oom_fails():
    r = run_eval(CASES, Fixed("hbm", _always_hbm))
    s = r.summary()
    assert s["top1"] < 0.2 and any("top1" in g for g in r.gate(s))
    assert any(c["expected"] != "hbm_oom" and c["got"] == "hbm_oom" for c in s["confusion"])


def test_invented_citations_fail_the_case_and_the_gate():
    r = run_eval(CASES[:3], Fixed("liar", _invent_ids))
    s = r.summary()
    assert s["fabricated_citations"] == 3 and s["pass_rate"] == 0
    assert any("fabricated" in g for g in r.gate(s))


def test_a_mutating_fix_without_high_risk_fails():
    r = run_eval(CASES[:2], Fixed("unsafe", _unsafe_fix))
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

    from skill.catalog import BY_ID

    from conftest import ROOT

    rows = re.findall(r"^\| `([a-z_]+)` \| ([^|]+) \|", (ROOT / "docs" / "taxonomy.md").read_text(), re.M)
    assert {i: p.strip() for i, p in rows} == {i: c.phase for i, c in BY_ID.items()}


def test_a_non_rules_agent_is_compared_with_the_rules_engine(capsys, monkeypatch):
    from evals import agents

    monkeypatch.setitem(agents.AGENTS, "always-hbm", lambda: Fixed("always-hbm", _always_hbm))
    cases = [str(FIXTURES / "case-001"), str(FIXTURES / "case-009")]  # tpu_hardware_failure, hbm_oom
    assert eval_main(["--agent", "always-hbm", "--format", "markdown", *cases]) == 1
    out = capsys.readouterr().out
    assert "## Against the rules engine (same cases)" in out
    assert "| top1 | 0.5 | 1.0 | -0.5 |" in out
    assert "only the rules engine passed: case-001" in out and "only the agent passed: none" in out
