"""`ask`: an Anthropic Messages tool-use loop over the registry's tools, starting from the deterministic diagnosis.

The model gets the deterministic diagnosis first (as a rendered, delimited tool result), may call registry tools
only (anything else is answered with an error result and counted; nothing else can execute), and answers by calling
`submit_diagnosis` (skill.telling.answer), whose input schema is the Diagnosis contract; that call ends the loop. The input
is validated with the pydantic contract and every id it cites must appear in what the tools returned; a rejection
goes back to the model as an error tool result, at most `max_answer_retries` times, after which (or when the
budget runs out first) the deterministic diagnosis is returned and `fallback` says why in one line. On its last
allowed turn, or after a turn that ended without the tool, the model is made to call `submit_diagnosis`.

Every model-requested tool call is recorded; one with the same name and (validated) arguments as an earlier one,
or as the seeded `diagnose`, is marked redundant: it costs tokens without adding evidence.

Prices (USD per million tokens, input / output; cache writes cost 1.25x input, cache reads 0.1x input) are the
published list prices at the time of writing, in `PRICES`; an unknown model reports `cost_usd = None`.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from collections.abc import Mapping
from typing import cast

from pydantic import ValidationError

from .telling.answer import FINAL_TOOL, check_answer, submit_tool_definition
from .diagnosis import SCHEMA_ID, Diagnosis
from .errors import InputError, error_object
from .ask_call import call_model as _call_model
from .redact import redact, redact_obj
from .wiring import AgentTool, tool_definition

__all__ = ["AgentTool", "tool_definition"]  # defined in .wiring; tools/anthropic_tools reads them here
from .telling.report import environment

DEFAULT_MODEL = "claude-sonnet-4-5"
MODEL_ENV = "PATHWAYS_WORKLOAD_MODEL"

# model id prefix -> (input, output) USD per million tokens
PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
}
CACHE_WRITE, CACHE_READ = 1.25, 0.10
RESULT_MAX = 60_000  # characters of one tool result sent to the model
_DELIM = re.compile(r"<<<|>>>")


@dataclass
class ToolCall:
    name: str
    input: dict
    ok: bool
    error: str | None = None
    redundant: bool = False  # the same name and arguments as an earlier call (or the seeded diagnose)


@dataclass
class AskResult:
    answer: str
    diagnosis: Diagnosis
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    tool_calls: list[ToolCall] = field(default_factory=list)
    steps: int = 0
    model: str = DEFAULT_MODEL
    rejected_tool_calls: int = 0  # calls to names outside the registry
    fallback: str | None = None  # why the deterministic diagnosis was used, when it was
    stop: str = "end_turn"  # end_turn | max_steps | deadline | max_tokens | ...
    seconds: float = 0.0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    rejected_answers: list[str] = field(default_factory=list)  # why each refused submit_diagnosis was refused
    answered: bool = False  # the API answered once: a later connection failure is transient, not a wrong endpoint

    @property
    def redundant_tool_calls(self) -> int:
        return sum(c.redundant for c in self.tool_calls)

    def to_json_dict(self) -> dict:
        return {"answer": self.answer, "diagnosis": self.diagnosis.to_json_dict(), "model": self.model,
                "steps": self.steps, "stop": self.stop, "fallback": self.fallback,
                "tool_calls": [vars(c) for c in self.tool_calls], "rejected_tool_calls": self.rejected_tool_calls,
                "redundant_tool_calls": self.redundant_tool_calls, "rejected_answers": self.rejected_answers,
                "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                          "cache_creation_input_tokens": self.cache_creation_input_tokens,
                          "cache_read_input_tokens": self.cache_read_input_tokens},
                "cost_usd": self.cost_usd, "seconds": round(self.seconds, 3)}


def price(model: str) -> tuple[float, float] | None:
    for prefix in sorted(PRICES, key=len, reverse=True):
        if model.startswith(prefix):
            return PRICES[prefix]
    return None


def cost(model: str, input_tokens: int, output_tokens: int, cache_write: int = 0, cache_read: int = 0) -> float | None:
    p = price(model)
    if p is None:
        return None
    pin, pout = p
    return round((input_tokens * pin + cache_write * pin * CACHE_WRITE + cache_read * pin * CACHE_READ
                  + output_tokens * pout) / 1_000_000, 6)


def render_tool_result(name: str, result: dict) -> str:
    """A tool result as the model reads it: redacted JSON inside untrusted-data delimiters it cannot close."""
    text = json.dumps(redact_obj(result), indent=1, ensure_ascii=False, sort_keys=False)
    if len(text) > RESULT_MAX:
        text = text[:RESULT_MAX] + "\n… (truncated; narrow the query)"
    text = _DELIM.sub(lambda m: m.group(0)[0] + " " + m.group(0)[1:], text)
    return environment().get_template("tool_result.md.j2").render(name=name, error="error" in result, payload=text)


def render_system(*, now: str, tools, max_steps: int) -> str:
    from .catalog import BY_ID

    return environment().get_template("system.md.j2").render(
        now=now, max_steps=max_steps, schema_id=SCHEMA_ID, final_tool=FINAL_TOOL, classes=sorted(BY_ID),
        tools=[{"name": t.name, "summary": t.description.splitlines()[0]} for t in tools.values()])


def _ids_in(value: object, out: set[str]) -> None:
    """Every id a tool result shows: values of `id`/`uid` keys and the strings in `evidence` lists."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("id", "uid") and isinstance(v, str):
                out.add(v)
            elif k == "evidence" and isinstance(v, list):
                out.update(x for x in v if isinstance(x, str))
            _ids_in(v, out)
    elif isinstance(value, list):
        for v in value:
            _ids_in(v, out)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def make_client(**kw):
    """An anthropic client; ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL are honoured by the SDK."""
    import anthropic

    if not os.environ.get("ANTHROPIC_API_KEY") and os.environ.get("ANTHROPIC_BASE_URL") and "api_key" not in kw:
        kw["api_key"] = "unused"  # a local proxy or replay server behind ANTHROPIC_BASE_URL
    return anthropic.Anthropic(**kw)


def tool_definitions_with_answer(tools: Mapping[str, AgentTool]) -> list[dict]:
    """The registry's tools, then `submit_diagnosis`; the last one carries the cache marker so the prefix is cached."""
    defs = [tool_definition(t) for t in tools.values()] + [submit_tool_definition()]
    defs[-1]["cache_control"] = {"type": "ephemeral"}
    return defs


def _call_key(tool, args: dict) -> str:
    """Name and arguments with the input model's defaults filled in, so `{}` and `{"limit": 50}` compare equal."""
    try:
        norm = tool.input.model_validate(args).model_dump(mode="json")
    except ValidationError:
        norm = args
    return tool.name + json.dumps(norm, sort_keys=True, default=str)


FORCE_ANSWER = {"type": "tool", "name": FINAL_TOOL}
NUDGE = (f"Give your final answer now by calling `{FINAL_TOOL}` with the complete diagnosis document; "
         "an answer in prose is not read.")


def ask(question: str, *, replay: str | Path | None = None, jobset: str | None = None, model: str | None = None,
        max_steps: int = 8, max_tokens: int = 4096, max_total_tokens: int = 400_000, deadline_s: float = 300.0,
        max_answer_retries: int = 2, client=None, now: str | None = None,
        tools: Mapping[str, AgentTool], analysis=None) -> AskResult:
    """Answer a question about one workload with the model and the registry's tools; see the module docstring.

    `tools`: name -> tool (tools.registry.registry()). `analysis`: the replay folder's
    skill.api.analyse_replay(replay, jobset=jobset, digest=True), when the caller has it already (it is computed here
    otherwise)."""
    _check_limits(replay, max_steps, max_answer_retries)
    t0 = time.monotonic()
    model = model or os.environ.get(MODEL_ENV) or DEFAULT_MODEL
    if FINAL_TOOL in tools:
        raise InputError(f"a registry tool may not be called {FINAL_TOOL!r}: that name is the answer")
    base, messages, seen, known, jobset = _seed(question, cast(str | Path, replay), jobset, analysis)  # checked above
    client = client or make_client()
    system = [{"type": "text", "text": render_system(now=now or _now(), tools=tools, max_steps=max_steps),
               "cache_control": {"type": "ephemeral"}}]
    res = AskResult(answer="", diagnosis=base, model=model)
    seed_args = {"replay": str(replay), "jobset": jobset}
    calls_seen = {_call_key(tools["diagnose"], seed_args)} if "diagnose" in tools else set()
    defs = tool_definitions_with_answer(tools)
    answer: Diagnosis | None = None
    answer_text = ""
    force = False
    while answer is None:
        remaining = deadline_s - (time.monotonic() - t0)
        if stop := _out_of_budget(res, max_steps, max_answer_retries, remaining, max_total_tokens):
            res.stop = stop
            break
        kw = {"tool_choice": FORCE_ANSWER} if force or res.steps == max_steps - 1 else {}
        resp = _call_model(client, res, remaining, model=model, max_tokens=max_tokens, system=system, tools=defs,
                           messages=messages, **kw)
        force = False
        messages.append({"role": "assistant", "content": resp.content})
        text = "".join(b.text for b in resp.content if b.type == "text").strip()
        uses = [b for b in resp.content if b.type == "tool_use"]
        if resp.stop_reason == "end_turn" and not uses:  # prose only: not an answer; ask for the tool
            res.rejected_answers.append(f"the turn ended without calling {FINAL_TOOL}")
            messages.append({"role": "user", "content": NUDGE})
            force = True
            continue
        if resp.stop_reason != "tool_use":  # max_tokens, refusal, ...: a cut-off turn is not an answer
            res.stop = resp.stop_reason or "unknown"
            break
        answer, results = _take_answer(uses, res, seen, known, max_answer_retries)
        if answer is not None:  # other tool calls of the same turn are not run: the answer ends the loop
            answer_text = text
            res.stop = "answer"
            break
        if len(res.rejected_answers) > max_answer_retries or res.steps >= max_steps:  # no turn left: run nothing more
            res.stop = "answer_rejected" if len(res.rejected_answers) > max_answer_retries else "max_steps"
            break
        for block in (b for b in uses if b.name != FINAL_TOOL):
            results.append(_run_tool(block, tools, res, replay=str(replay), jobset=jobset, seen=seen,
                                     calls_seen=calls_seen))
        messages.append({"role": "user", "content": results})
    return _finish(res, base, answer, answer_text, model, time.monotonic() - t0)


def _check_limits(replay: str | Path | None, max_steps: int, max_answer_retries: int) -> None:
    if replay is None:
        raise InputError("ask needs --replay DIR (live mode needs project, location, cluster and jobset)")
    if max_steps < 1:
        raise InputError("max_steps must be at least 1")
    if max_answer_retries < 0:
        raise InputError("max_answer_retries must be 0 or more")


def _seed(question: str, replay: str | Path, jobset: str | None, analysis=None
          ) -> tuple[Diagnosis, list[dict], set[str], set[str], str | None]:
    """The deterministic diagnosis and the conversation that starts from it: the question, then a `diagnose` call
    already made, its result carrying the diagnosis and the log digest in one untrusted-data block. Also the ids the
    model may cite (everything it was shown) and the class ids it may answer."""
    from .api import analyse_replay
    from .catalog import BY_ID
    from .telling.explain import build
    from .understanding.digest import digest_of

    if analysis is None or analysis.digest is None:
        analysis = analyse_replay(replay, jobset=jobset, digest=True)
    base = build(analysis, logging_requests=0)  # = diagnose_replay, keeping the analysis for the digest
    digest = digest_of(analysis, base)  # the logs behind it, grouped, within 8,000 tokens (skill.understanding.digest)
    jobset = jobset or base.workload.jobset
    base_json = base.to_json_dict()
    seen: set[str] = set(base.cited_ids())
    _ids_in(base_json, seen)
    _ids_in(digest, seen)
    known = set(BY_ID) | {base.failure_class}
    seed_args = {"replay": str(replay), "jobset": jobset}
    messages: list[dict] = [
        {"role": "user", "content": f"Question about JobSet `{jobset}`:\n\n{redact(question)}"},
        {"role": "assistant", "content": [{"type": "text", "text": "I start from the deterministic diagnosis."},
                                          {"type": "tool_use", "id": "toolu_pw_diagnose", "name": "diagnose",
                                           "input": seed_args}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_pw_diagnose",
                                      "content": render_tool_result("diagnose", {**base_json, "log_digest": digest})}]},
    ]
    return base, messages, seen, known, jobset


def _out_of_budget(res: AskResult, max_steps: int, max_answer_retries: int, remaining: float,
                   max_total_tokens: int) -> str | None:
    """Why the loop must stop before another model call, or None."""
    if res.steps >= max_steps:
        return "max_steps"
    if len(res.rejected_answers) > max_answer_retries:
        return "answer_rejected"
    if remaining <= 1:
        return "deadline"
    if res.input_tokens + res.output_tokens >= max_total_tokens:
        return "token_budget"
    return None


def _finish(res: AskResult, base: Diagnosis, answer: Diagnosis | None, answer_text: str, model: str,
            seconds: float) -> AskResult:
    """Time, cost, and the answer: the model's validated diagnosis, or the deterministic one and why."""
    res.seconds = seconds
    res.cost_usd = cost(model, res.input_tokens, res.output_tokens, res.cache_creation_input_tokens,
                        res.cache_read_input_tokens)
    if answer is None:
        last = f"; last rejection: {res.rejected_answers[-1]}" if res.rejected_answers else ""
        res.fallback = (f"the model's diagnosis was rejected {len(res.rejected_answers)} times{last}"
                        if res.stop == "answer_rejected" else f"no valid {FINAL_TOOL} call ({res.stop}){last}")
        res.answer = redact(f"(The model's diagnosis was not used: {res.fallback}. This is the deterministic "
                            f"diagnosis: {base.failure_class}, {base.status}.)\n\n{base.summary}")
    else:
        res.diagnosis = answer
        res.answer = redact(answer_text or answer.summary)
    return res


def _take_answer(uses: list, res: AskResult, seen: set[str], known: set[str],
                 retries: int) -> tuple[Diagnosis | None, list[dict]]:
    """The first valid `submit_diagnosis` call of a turn, or None and an error tool result for each rejected one."""
    results = []
    for block in (b for b in uses if b.name == FINAL_TOOL):
        d, problem = check_answer(block.input, seen, known)
        if d is not None:
            return d, []
        res.rejected_answers.append(cast(str, problem))  # check_answer gives a reason with every refusal
        left = retries + 1 - len(res.rejected_answers)
        again = f"Fix it and call {FINAL_TOOL} again ({left} attempt{'s' * (left != 1)} left)." if left > 0 else ""
        results.append({"type": "tool_result", "tool_use_id": block.id, "is_error": True,
                        "content": redact(f"Rejected: {problem}. {again}".strip())})
    return None, results


def _run_tool(block, tools, res: AskResult, *, replay: str, jobset: str | None, seen: set[str],
              calls_seen: set[str]) -> dict:
    name = block.name
    args = dict(block.input) if isinstance(block.input, dict) else {}
    tool = tools.get(name)
    if tool is None:
        res.rejected_tool_calls += 1
        err = f"unknown tool {name!r}: only these tools exist: {', '.join([*tools, FINAL_TOOL])}; nothing was run"
        res.tool_calls.append(ToolCall(name, args, False, err))
        return {"type": "tool_result", "tool_use_id": block.id, "is_error": True,
                "content": render_tool_result(name, error_object("unknown_tool", err))}
    fields = tool.input.model_fields
    if "replay" in fields:  # the model never picks the folder: it reads this incident only
        args["replay"] = replay
        for live in ("project", "location", "cluster"):
            args.pop(live, None)
    if "jobset" in fields and jobset and not args.get("jobset"):
        args["jobset"] = jobset
    key = _call_key(tool, args)
    redundant = key in calls_seen
    calls_seen.add(key)
    result = tool.call(args)
    error = result.get("error") if isinstance(result, dict) else None
    error = error.get("message") if isinstance(error, dict) else error
    res.tool_calls.append(ToolCall(name, args, error is None, error, redundant))
    if error is None:
        _ids_in(result, seen)
    out = {"type": "tool_result", "tool_use_id": block.id, "content": render_tool_result(name, result)}
    if error is not None:
        out["is_error"] = True
    return out
