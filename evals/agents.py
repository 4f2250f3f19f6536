"""Agents the harness can run over a case: the rules engine now, an LLM agent through the same interface."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pathways_workload.skill.diagnosis import Diagnosis


@dataclass
class AgentRun:
    """What one agent produced on one case (one question), with its cost: model turns, tokens, tool calls."""

    diagnosis: Diagnosis | None
    error: str | None = None
    seconds: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    tool_calls: int = 0
    answer: str | None = None
    redundant_tool_calls: int = 0  # calls repeating an earlier one's name and arguments: tokens, no new evidence
    steps: int = 0  # model turns
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def spent(self) -> bool:
        return bool(self.steps or self.tool_calls or self.input_tokens or self.output_tokens)

    def usage(self) -> dict:
        """This question's spend, as the eval summary lists it."""
        return {"steps": self.steps, "tool_calls": self.tool_calls, "redundant_tool_calls": self.redundant_tool_calls,
                "tokens": {"input": self.input_tokens, "output": self.output_tokens,
                           "cache_write": self.cache_creation_input_tokens, "cache_read": self.cache_read_input_tokens},
                "cost_usd": round(self.cost_usd, 6)}


class Agent(Protocol):
    name: str

    def run(self, case_path: Path) -> AgentRun: ...


class RulesAgent:
    """The deterministic engine: skill.api.diagnose_replay."""

    name = "rules"

    def run(self, case_path: Path, jobset: str | None = None) -> AgentRun:
        """`jobset`: the JobSet to diagnose, as an engineer names it when the data holds no JobSet object."""
        from pathways_workload.skill.api import diagnose_replay
        from pathways_workload.skill.errors import PathwaysWorkloadError

        t0 = time.perf_counter()
        try:
            d = diagnose_replay(case_path, jobset=jobset)
        except PathwaysWorkloadError as err:
            return AgentRun(None, str(err), time.perf_counter() - t0)
        return AgentRun(d, None, time.perf_counter() - t0)


AGENTS: dict[str, Callable[[], Agent]] = {"rules": RulesAgent}


def register_agent(name: str, factory: Callable[[], Agent]) -> None:
    """Make another agent (e.g. the LLM agent) available to `eval --agent NAME`."""
    AGENTS[name] = factory
