"""A recorded case as the harness and the evaluators see it: its answer key (expected.yaml) and its input ids."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class ExpectedEntity(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str
    name: str


class Expected(BaseModel):
    """A case's expected.yaml."""

    model_config = ConfigDict(extra="forbid")
    failure_class: str
    status: str
    root_cause_entities: list[ExpectedEntity] = []
    evidence: list[str] = []
    fix_requires: list[str] = []
    data_gaps_require: list[str] = []
    tags: list[str] = []
    # the run's fate as its lives show it (issue 41): recovered, waiting, crashing, failed, stalled, running,
    # completed; optional, scored only where a key gives it
    fate: str | None = None


@dataclass
class Case:
    name: str
    path: Path
    expected: Expected
    input_ids: frozenset[str]
