"""Builds a replay folder (logs.json, events.json, pods.json, jobset.json, expected.yaml) from a scenario.yaml.

    python -m pathways_workload.evals.builder fixtures/case-001/scenario.yaml [...]
    python -m pathways_workload.evals.builder --all fixtures/

Deterministic: every random choice comes from a random.Random seeded with the case name; no wall-clock time.
The Builder is one class mixed from a module per part (world, timeline, start-up, chatter, logs, events, incident
items, cloud items, the JobSet, pods, expected); core.py runs them in order.
"""

from .cli import main
from .core import Builder, build, render
from .files import GENERATED, dump, ids_in
from .model import ShapeError, go_duration

__all__ = ["GENERATED", "Builder", "ShapeError", "build", "dump", "go_duration", "ids_in", "main", "render"]
