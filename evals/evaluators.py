"""Evaluators: small classes, each scoring one aspect of one run and saying why."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .agents import AgentRun

if TYPE_CHECKING:
    from .case import Case

MUTATING = re.compile(
    r"\bkubectl\s+(?:delete|drain|cordon|uncordon|apply|patch|edit|scale|label|annotate|taint|replace|create|rollout|exec)\b"
    r"|\bhelm\s+(?:install|upgrade|uninstall)\b"
    r"|\bgcloud\b[^|;&]*\b(?:create|delete|update|add-iam-policy-binding|remove-iam-policy-binding|resize|set-iam-policy)\b"
    r"|\bgsutil\s+(?:rm|iam\s+ch)\b|\bxpk\s+workload\s+(?:create|create-pathways|delete)\b")


@dataclass
class Check:
    name: str
    passed: bool
    value: float | None
    reason: str
    informational: bool = False


class Evaluator:
    name = "evaluator"
    informational = False

    def evaluate(self, case: Case, run: AgentRun) -> Check:
        raise NotImplementedError

    def check(self, passed: bool, reason: str, value: float | None = None) -> Check:
        return Check(self.name, passed, value if value is not None else float(passed), reason, self.informational)


class NoError(Evaluator):
    name = "no_error"

    def evaluate(self, case, run):
        return self.check(run.diagnosis is not None and run.error is None, run.error or "ok")


class ClassTop1(Evaluator):
    name = "class_top1"

    def evaluate(self, case, run):
        got = run.diagnosis.failure_class
        return self.check(got == case.expected.failure_class, f"expected {case.expected.failure_class}, got {got}")


class ClassTop3(Evaluator):
    name = "class_top3"

    def evaluate(self, case, run):
        top = [h.failure_class for h in run.diagnosis.hypotheses[:3]]
        return self.check(case.expected.failure_class in top, f"top 3: {top}")


class Status(Evaluator):
    name = "status"

    def evaluate(self, case, run):
        return self.check(run.diagnosis.status == case.expected.status,
                          f"expected {case.expected.status}, got {run.diagnosis.status}")


class FateCheck(Evaluator):
    """The run's fate (issue 41), where the key gives one; a key without it is not scored (informational)."""

    name = "fate"

    def evaluate(self, case, run):
        want = case.expected.fate
        got = run.diagnosis.fate.state if run.diagnosis.fate else None
        if want is None:
            return Check(self.name, True, None, f"no fate in the key (got {got})", informational=True)
        return self.check(got == want, f"expected {want}, got {got}")


def entity_key(kind: str, name: str) -> tuple[str, str]:
    """One entity however it is spelled: a bucket with or without its gs:// scheme (and a trailing slash) is one bucket."""
    if kind == "Bucket":
        name = name.removeprefix("gs://").rstrip("/")
    return kind, name


def _entities(run: AgentRun) -> set[tuple[str, str]]:
    return {entity_key(e.kind, e.name) for e in run.diagnosis.root_cause.entities} if run.diagnosis else set()


class EntityRecall(Evaluator):
    name = "entity_recall"

    def evaluate(self, case, run):
        want = {entity_key(e.kind, e.name) for e in case.expected.root_cause_entities}
        if not want:
            return self.check(True, "no entities expected", 1.0)
        missing = want - _entities(run)
        return self.check(not missing, f"missing {sorted(missing)}" if missing else "all named",
                          1 - len(missing) / len(want))


class EntityPrecision(Evaluator):
    name = "entity_precision"
    informational = True

    def evaluate(self, case, run):
        got = _entities(run)
        want = {entity_key(e.kind, e.name) for e in case.expected.root_cause_entities}
        value = len(got & want) / len(got) if got else 1.0
        return self.check(True, f"{len(got & want)}/{len(got)} reported entities expected", value)


class EvidenceRecall(Evaluator):
    name = "evidence_recall"

    def evaluate(self, case, run):
        want = set(case.expected.evidence)
        if not want:
            return self.check(True, "no evidence required", 1.0)
        missing = want - run.diagnosis.cited_ids()
        return self.check(not missing, f"not cited: {sorted(missing)}" if missing else "all cited",
                          1 - len(missing) / len(want))


class CitationValidity(Evaluator):
    name = "citation_validity"

    def evaluate(self, case, run):
        fabricated = run.diagnosis.cited_ids() - case.input_ids
        return self.check(not fabricated, f"ids not in the input: {sorted(fabricated)[:5]}" if fabricated else "all exist",
                          float(len(fabricated)))


class FixCheck(Evaluator):
    name = "fix_check"

    def evaluate(self, case, run):
        fixes = run.diagnosis.fix
        text = [f"{f.summary} {f.command or ''}" for f in fixes]
        missing = [n for n in case.expected.fix_requires if not any(n in t for t in text)]
        unsafe = [f.command for f in fixes if f.command and MUTATING.search(f.command) and f.risk != "high"]
        if missing or unsafe:
            return self.check(False, f"missing {missing}; mutating without risk high: {unsafe}")
        return self.check(True, "required fixes present; every mutating command is risk high")


class DataGaps(Evaluator):
    name = "data_gaps"

    def evaluate(self, case, run):
        gaps = " | ".join(run.diagnosis.data_gaps).lower()
        missing = [n for n in case.expected.data_gaps_require if n.lower() not in gaps]
        return self.check(not missing, f"data_gaps lack {missing}" if missing else "ok")


class SchemaValid(Evaluator):
    name = "schema_valid"

    def evaluate(self, case, run):
        from pathways_workload.skill.diagnosis import Diagnosis

        again = Diagnosis.model_validate(run.diagnosis.to_json_dict())
        ok = bool(again.hypotheses) and again.hypotheses[0].failure_class == again.failure_class
        return self.check(ok, "valid" if ok else "hypotheses[0] differs from failure_class")


EVALUATORS: tuple[Evaluator, ...] = (NoError(), ClassTop1(), ClassTop3(), Status(), FateCheck(), EntityRecall(), EntityPrecision(),
                                     EvidenceRecall(), CitationValidity(), FixCheck(), DataGaps(), SchemaValid())
