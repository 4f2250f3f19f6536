"""Shared test helpers: the fixture cases, an engine-independent collector of the ids in a case's input, and each
library incident diagnosed once per test run (`replayed`), shared by every test file that checks it."""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CASES = sorted(p.parent for p in FIXTURES.glob("*/expected.yaml"))


def input_ids(case: Path) -> set[str]:
    """Every insertId and metadata.uid in a case's JSON files, read without the engine (the harness's own reader)."""
    from pathways_workload.evals.harness import input_ids as harness_ids

    return set(harness_ids(case))


def expected(case: Path) -> dict:
    return yaml.safe_load((case / "expected.yaml").read_text())


LIBRARY = (ROOT / "fixtures", ROOT / "heldout")  # read-only during a run: what may be cached


class Replayed:
    """skill.api.analyse_replay and diagnose_replay of the library's incidents, computed once per run for each folder
    and set of options. The cache holds pickled bytes, so nothing a test does to its copy reaches another test."""

    def __init__(self) -> None:
        self._analyses: dict[tuple, bytes] = {}
        self._diagnoses: dict[tuple, bytes] = {}

    @staticmethod
    def _key(folder: Path | str, opts: dict) -> tuple:
        folder = Path(folder).resolve()
        if folder.parent not in LIBRARY:  # a test's own folder may change between calls: diagnose it afresh
            raise ValueError(f"{folder}: only the library's incidents are cached")
        return str(folder), tuple(sorted(opts.items()))

    def analysis(self, folder: Path | str, **opts):
        """A private copy of the folder's Analysis (opts as analyse_replay's). One run with the digest serves both:
        the digest only groups the records the run took, so without it the Analysis is the same less `digest`."""
        from pathways_workload.skill.api import analyse_replay

        digest = opts.pop("digest", False)
        key = self._key(folder, opts)
        if key not in self._analyses:
            self._analyses[key] = pickle.dumps(analyse_replay(folder, digest=True, **opts))
        analysis = pickle.loads(self._analyses[key])
        if not digest:
            analysis.digest = None
        return analysis

    def diagnosis(self, folder: Path | str, **opts):
        """A private copy of the folder's Diagnosis (opts as analyse_replay's), built from the cached Analysis."""
        from pathways_workload.skill.telling.explain import build

        opts.pop("digest", None)  # the same Diagnosis either way
        key = self._key(folder, opts)
        if key not in self._diagnoses:
            self._diagnoses[key] = pickle.dumps(build(self.analysis(folder, **opts), logging_requests=0))
        return pickle.loads(self._diagnoses[key])


class Diagnoses(Mapping):
    """Fixture case name -> a private copy of its Diagnosis."""

    def __init__(self, replayed: Replayed):
        self.replayed = replayed

    def __getitem__(self, name: str):
        if not (FIXTURES / name / "expected.yaml").exists():
            raise KeyError(name)
        return self.replayed.diagnosis(FIXTURES / name)

    def __iter__(self) -> Iterator[str]:
        return iter(case.name for case in CASES)

    def __len__(self) -> int:
        return len(CASES)


@pytest.fixture(scope="session")
def replayed() -> Replayed:
    """The session's one cache of library diagnoses (a fixture, so every test file shares the same instance)."""
    return Replayed()


@pytest.fixture(scope="session")
def diagnoses(replayed) -> Diagnoses:
    """Each fixture case diagnosed once per session."""
    return Diagnoses(replayed)
