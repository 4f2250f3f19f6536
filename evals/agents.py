"""Agents the harness can run over a case: the rules engine now, an LLM agent through the same interface."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from skill.diagnosis import Diagnosis


@dataclass
class AgentRun:
    """What one agent produced on one case, with its cost."""

    diagnosis: Diagnosis | None
    error: str | None = None
    seconds: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    tool_calls: int = 0
    answer: str | None = None


class Agent(Protocol):
    name: str

    def run(self, case_path: Path) -> AgentRun: ...


class RulesAgent:
    """The deterministic engine: skill.api.diagnose_replay."""

    name = "rules"

    def run(self, case_path: Path) -> AgentRun:
        from skill.api import diagnose_replay
        from skill.errors import PathwaysWorkloadError

        t0 = time.perf_counter()
        try:
            d = diagnose_replay(case_path)
        except PathwaysWorkloadError as err:
            return AgentRun(None, str(err), time.perf_counter() - t0)
        return AgentRun(d, None, time.perf_counter() - t0)


AGENTS: dict[str, Callable[[], Agent]] = {"rules": RulesAgent}


def register_agent(name: str, factory: Callable[[], Agent]) -> None:
    """Make another agent (e.g. the LLM agent) available to `eval --agent NAME`."""
    AGENTS[name] = factory
