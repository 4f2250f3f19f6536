"""pathways-workload's composition root: the one place that wires the layers together.

skill/ (the engine and the command line's own commands), tools/ (the agent's tools and the MCP server, above skill/)
and evals/ (the harness, above both) import only downwards; this package sits above all three and hands the command
line what the upper layers lend it (skill.cli.Wiring). The console script `pathways-workload` and
`python -m pathways_workload` start here.
"""


# In a source checkout the design's folders (skill/, tools/, evals/, bench/) sit beside this package, at the root; the
# wheel maps them under it (pyproject's package-dir). Let pathways_workload.skill find ./skill without an install.
import os as _os

_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_root, "pyproject.toml")) and _os.path.isdir(_os.path.join(_root, "skill")):
    __path__.append(_root)  # noqa: F821 - a package's __path__
