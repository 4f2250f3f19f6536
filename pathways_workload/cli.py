"""`pathways-workload`: skill's command line with the tool commands, `ask`, `mcp` and `eval` wired in."""

from __future__ import annotations

import sys
from collections.abc import Callable

from pathways_workload.skill.cli import main as skill_main
from pathways_workload.skill.wiring import Wiring


def _registry():
    from pathways_workload.tools.registry import registry

    return registry()


def _mcp() -> int:
    from pathways_workload.tools.mcp_server import main as serve

    return serve()


def _eval_register() -> Callable | None:
    """evals.cli.register, imported only when `eval` runs (the other commands never load the harness); None when the
    harness is not installed."""
    try:
        from pathways_workload.evals.cli import register
    except ImportError:
        return None
    return register


def wiring() -> Wiring:
    """Everything the layers above skill/ lend the command line."""
    import importlib.util

    has_evals = importlib.util.find_spec("pathways_workload.evals") is not None
    return Wiring(tools=_registry, mcp=_mcp, eval_register=_eval_register if has_evals else None)


def main(argv: list[str] | None = None) -> int:
    return skill_main(argv, wiring=wiring())


if __name__ == "__main__":
    sys.exit(main())
