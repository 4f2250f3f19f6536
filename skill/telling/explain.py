"""An analysis as the Diagnosis contract: the root cause, its explanation and fixes, hypotheses, observations and
budget. Entities, evidence items, the timeline, template values and data gaps come from their own modules."""

from __future__ import annotations

import functools
from typing import cast

import jinja2

from ..catalog import BY_ID, HEALTHY
from ..catalog.release import RELEASE
from ..catalog.types import FailureClass, Text
from ..diagnosis import (Attempt, Budget, Diagnosis, Fate, FateState, Fix, Hypothesis, Observation, Risk, RootCause, Status,
                        Workload as WorkloadOut)
from ..judging.classify import Verdict
from ..judging.place import PLACE_NOTE
from ..judging.engine import Analysis
from ..judging.matrix import Finding, findings
from ..judging.next_checks import next_checks
from ..judging.ranking import Hypo
from ..judging.sufficiency import sufficiency
from ..reading.records import format_ns
from . import silence
from .citations import cite, doing, primary, told
from .entities import entities
from .excerpt import clip, excerpt
from .gaps import data_gaps
from .links import evidence_item
from .timeline import timeline
from .values import context
from .named import named, sentence

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)


def matched_ids(root: Hypo) -> frozenset[str]:
    """The ids of the signatures the root cause's own lines matched: what picks fix and explanation variants."""
    return frozenset(s.pattern.id for s in (primary(root) if root.signals else []) if s.pattern.id)


def _explanation_text(explanation: str | tuple[Text, ...], matched: frozenset[str]) -> str | None:
    if isinstance(explanation, str):
        return explanation
    return next((t.text for t in explanation if t.applies(matched)), None)


def _sentence(text: str) -> str:
    """A template that starts with a value ("{{ container_or_process }} on ...") starts its sentence in capitals when the
    value starts with our own article ("a process in ..."); a name (a pod, a binary) stays as it is written."""
    return text[0].upper() + text[1:] if text.startswith(("a ", "an ")) else text


def _render(template: str | None, ctx: dict[str, str]) -> str | None:
    return None if template is None else _fill(template, ctx)


def _fill(template: str, ctx: dict[str, str]) -> str:
    return _template(template).render(**ctx)


@functools.lru_cache(maxsize=1024)
def _template(source: str) -> jinja2.Template:
    """A catalog template compiled once (the catalog's templates are a fixed, small set)."""
    return _ENV.from_string(source)


def observations(v: Verdict, matrix: list[Finding]) -> list[Observation]:
    """The classes whose lines the run survived (skill.judging.impact): their first and latest line, and why not the cause;
    then the workload checked against the Pathways release (skill.judging.matrix)."""
    out = []
    for o in v.observations:
        first, last = o.signals[0], o.signals[-1]
        out.append(Observation(failure_class=o.failure_class, evidence=list(dict.fromkeys([first.record.id, last.record.id])),
                               timestamp=format_ns(first.ts) or None, resource=first.record.resource,
                               excerpt=clip(excerpt(first.record.text), 300), why_not_cause=o.why))
    skew = BY_ID[v.failure_class].names_images  # a version-skew class: the findings bear on it
    for f in matrix:
        why = (f"bears on the verdict ({v.failure_class})" if skew and f.failure_class else
               f"checked against the Pathways release of {RELEASE.date}: not shown to be the cause here, but the first "
               "thing to rule out when the runtime misbehaves")
        out.append(Observation(kind="support_matrix", failure_class=f.failure_class, evidence=list(f.evidence),
                               resource=f.resource, excerpt=f.text, why_not_cause=why))
    return out


def _explain(v: Verdict, cls: FailureClass, ctx: dict, matched: frozenset[str], matrix: list[Finding]) -> str:
    """The root cause in words: the class's explanation, then what the verdict adds (a death read by place, too soon
    to tell, the run's fate, a helper's survived death, why a higher-scored rival is not it, the version skew)."""
    explanation = _sentence(_render(_explanation_text(cls.explanation, matched), ctx) or cls.title)
    if place := next((n[len(PLACE_NOTE):] for n in v.notes if n.startswith(PLACE_NOTE)), None):
        explanation += f" No signature names this death; read by where and when it happened: {place}."
    for extra in (v.too_soon, v.fate.sentence if v.fate else "", _helper_death(v), rival_sentence(v)):
        if extra:
            explanation += " " + extra
    if cls.names_images:  # a version-skew verdict: what the workload runs against the release is part of the case
        skew = [f.text for f in matrix if f.failure_class]
        if skew:
            explanation += f" Against the Pathways release of {RELEASE.date}: " + "; ".join(skew) + "."
    return explanation


def _helper_death(v: Verdict) -> str:
    """For a verdict of no failure, the first helper's death the run went on past (survival.deaths_survived), in words:
    a healthy run that lost a process is not one whose warnings were all benign."""
    if v.failure_class != HEALTHY:
        return ""
    o = next((o for o in v.observations if "not the run's death" in o.why), None)
    if o is None:
        return ""
    r = o.signals[0].record
    return (f"A helper died and the run went on: {r.resource} at {format_ns(r.ts)[11:16]} ({o.failure_class}; "
            f"{o.why}).")


def rival_sentence(v: Verdict) -> str:
    """Why another class scored above the verdict's confidence is not the verdict, in words; "" when none did."""
    above = [h for h in v.ranked[1:] if round(min(1.0, h.score), 3) > v.confidence and h.signals]
    if not above or v.root is None or not v.root.signals:
        return ""
    h, root = above[0], v.root
    if any(n.startswith(f"{h.failure_class} ended an earlier attempt") for n in v.notes):
        why = f"the JobSet restarted after {h.failure_class}'s lines and {root.failure_class} holds the attempt after it"
    elif root.score > h.score + 0.0005:
        why = f"its own lines score higher ({min(1.0, root.score):.2f})"
    elif root.first_ts <= h.first_ts:
        why = (f"its lines came first ({format_ns(root.first_ts)[11:19]}, {h.failure_class}'s at "
               f"{format_ns(h.first_ts)[11:19]}): of two strong candidates the earlier is the first domino")
    else:
        why = "the ranking puts a strong candidate before a weaker one, then the earlier first"
    lowered = (f"; {h.failure_class} is a strong candidate {root.failure_class} does not explain, so the confidence "
               f"is lowered to {v.confidence:.2f}" if any(n.startswith("other unexplained candidates:") and
                                                         h.failure_class in n for n in v.notes) else "")
    return (f"{h.failure_class} scores {min(1.0, h.score):.2f} on its own lines, above this verdict's confidence, "
            f"and is not the verdict because {why}{lowered}.")


def _fate_word(v: Verdict) -> str:
    """The fate beside the status where it says more: ", recovered", ", waiting", ", recovering"."""
    return f", {v.fate.state}" if v.fate and v.fate.sentence else ""


def fate_out(v: Verdict) -> Fate | None:
    """The run's lives and its state at the end, as the contract writes them."""
    f = v.fate
    if f is None:
        return None
    ts = lambda ns: format_ns(ns) or None if ns else None  # noqa: E731
    sec = lambda ns: round(ns / 1e9, 1) if ns is not None else None  # noqa: E731
    attempts = [Attempt(index=a.index, started=ts(a.start), ended=ts(a.end or 0),
                        first_step=ts(a.first_step.ts) if a.first_step else None,
                        last_step=ts(a.last_step.ts) if a.last_step else None, steps_read=len(a.steps))
                for a in f.attempts]
    return Fate(state=cast(FateState, f.state), summary=f.sentence, restarts=f.restarts, attempts=attempts,
                recovered_at=ts(f.recovered_at or 0), waiting_since=ts(f.waiting_since or 0),
                downtime_seconds=sec(f.downtime_ns), steps_redone=f.steps_redone, work_lost_seconds=sec(f.work_lost_ns),
                evidence=[r.id for r in f.marks])


def _waiting_fixes(v: Verdict, ctx: dict[str, str], have: set[str]) -> list[Fix]:
    """The fixes of the scheduling-phase class the replacement waits on (its lines are ranked after the verdict)."""
    out = []
    for h in v.ranked[1:]:
        cls = BY_ID[h.failure_class]
        if cls.phase not in ("scheduling", "admission") or not h.signals:
            continue
        for f in cls.fixes:
            try:
                fix = Fix(summary=_fill(f.summary, ctx), command=_render(f.command, ctx), risk=cast(Risk, f.risk))
            except jinja2.UndefinedError:
                continue  # a template that needs what only its own verdict fills
            if fix.summary not in have:
                out.append(fix)
        break
    return out


def _before_changes(fixes: list[Fix], summary: str) -> None:
    """A workload fix in words, after the read-only steps and before the fixes that change something."""
    at = next((i for i, f in enumerate(fixes) if f.risk != "read-only"), len(fixes))
    fixes.insert(at, Fix(summary=summary, command=None, risk="low"))


def build(a: Analysis, *, logging_requests: int | None = None) -> Diagnosis:
    """The Diagnosis contract for one analysis. Every cited id comes from a record that was read."""
    m, v = a.model, a.verdict
    cls = BY_ID[v.failure_class]
    triggers = [h for h in v.ranked[1:] if h.failure_class in cls.absorbs and h.signals]
    ents = entities(m, v.root, v.symptoms, triggers)
    ctx = context(m, v.root, ents, v.symptoms)
    # the other classes with lines in the data: a sentence that says nothing reported one must not be said then
    ctx["also_seen"] = " ".join(h.failure_class for h in v.ranked[1:] if h.signals)
    told_ = told(m, v, a.last_words)
    cited = [s.record for _rule, s in cite(m, v, a.context, story=told_)]
    ctx["story"] = silence.sentence(told_) if told_ else ""
    evidence = {r.id: evidence_item(r, m.project) for r in cited}
    for r in v.fate.marks if v.fate else []:  # what shows the restarts, the recovery or the wait
        evidence.setdefault(r.id, evidence_item(r, m.project))
    matched = matched_ids(v.root)
    matrix = findings(m)  # the workload against the release: observations, and part of a version-skew explanation
    explanation = _explain(v, cls, ctx, matched, matrix)
    hypotheses = [Hypothesis(failure_class=h.failure_class, score=round(min(1.0, h.score), 3),
                             evidence=list(dict.fromkeys(s.record.id for s in h.strong_signals))[:5])
                  for h in v.ranked]
    if told_:  # a stall's own evidence is what its program printed after its last step
        story = [r.id for r in silence.cited(told_) if r.id in evidence]
        hypotheses[0].evidence = list(dict.fromkeys(hypotheses[0].evidence + story))[:5 + len(story)]
    fixes = [Fix(summary=_fill(f.summary, ctx), command=_render(f.command, ctx), risk=cast(Risk, f.risk))
             for f in cls.fixes if f.applies(matched)]
    if v.fate and v.fate.state == "waiting":  # what it waits on has fixes of its own (capacity, quota, placement)
        fixes += _waiting_fixes(v, ctx, {f.summary for f in fixes})
    texts = [r.text for r in cited] + [r.text for r in a.context]
    if cls.fixed_in_workload and (pointer := sentence(named(texts), m.settings)):
        if was := doing(a.context)[:1]:  # what the program was doing when it raised
            pointer += f" It raised right after printing {silence.quote(was[0], 140)}."
        _before_changes(fixes, pointer)
    if told_ and (where := silence.fix(told_)):
        _before_changes(fixes, where)
    stats = a.stats
    return Diagnosis(
        workload=WorkloadOut(jobset=m.jobset, namespace=m.namespace, cluster=m.cluster, project=m.project,
                             location=m.location),
        status=cast(Status, v.status), failure_class=v.failure_class, confidence=v.confidence,
        summary=f"{cls.title} ({v.status}{_fate_word(v)}). {explanation}",
        root_cause=RootCause(component=cls.component, entities=ents, explanation=explanation),
        hypotheses=hypotheses, evidence=list(evidence.values()), timeline=timeline(m, v.root, v.symptoms, told_), fix=fixes,
        data_gaps=data_gaps(a), sufficiency=sufficiency(m, v), observations=observations(v, matrix),
        next_checks=next_checks(v, ctx, lambda t, c: _render(t, c)), fate=fate_out(v),
        budget=Budget(logging_requests=stats.logging_requests if logging_requests is None else logging_requests,
                      entries_read=stats.entries_read, entries_skipped=stats.entries_skipped, seconds=round(a.seconds, 3)),
    )
