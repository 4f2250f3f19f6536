"""The LLM agent for the eval harness: `skill.ask.ask` over a case, scored like the rules engine.

Importing this module registers it as `eval --agent llm`. The model and budgets come from the environment
(PATHWAYS_WORKLOAD_MODEL, PATHWAYS_WORKLOAD_MAX_STEPS); a test passes its own client (e.g. one pointed at the
replay fake). API and input errors become a failed run with the error, never a crash of the whole eval.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .agents import AgentRun, register_agent

QUESTION = ("Why did this Pathways JobSet fail, crash or stall? Name the root cause, cite the evidence by id, "
            "and propose the fix.")


class LLMAgent:
    name = "llm"

    def __init__(self, *, client=None, model: str | None = None, max_steps: int | None = None,
                 question: str = QUESTION):
        self.client = client
        self.model = model
        self.max_steps = max_steps or int(os.environ.get("PATHWAYS_WORKLOAD_MAX_STEPS", "8"))
        self.question = question

    def run(self, case_path: Path) -> AgentRun:
        import anthropic

        from pathways_workload.skill.ask import ask
        from pathways_workload.skill.errors import PathwaysWorkloadError
        from pathways_workload.tools.registry import registry

        t0 = time.perf_counter()
        try:
            r = ask(self.question, replay=case_path, model=self.model, max_steps=self.max_steps, client=self.client,
                    tools=registry())
        except (PathwaysWorkloadError, anthropic.APIError) as err:
            return AgentRun(None, f"{type(err).__name__}: {err}", time.perf_counter() - t0)
        return AgentRun(r.diagnosis, f"fell back to the deterministic diagnosis: {r.fallback}" if r.fallback else None,
                        time.perf_counter() - t0, r.input_tokens, r.output_tokens, r.cost_usd or 0.0,
                        len(r.tool_calls), r.answer, redundant_tool_calls=r.redundant_tool_calls, steps=r.steps,
                        cache_creation_input_tokens=r.cache_creation_input_tokens,
                        cache_read_input_tokens=r.cache_read_input_tokens)


register_agent("llm", LLMAgent)
