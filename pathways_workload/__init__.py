"""pathways-workload's composition root: the one place that wires the layers together.

skill/ (the engine and the command line's own commands), tools/ (the agent's tools and the MCP server, above skill/)
and evals/ (the harness, above both) import only downwards; this package sits above all three and hands the command
line what the upper layers lend it (skill.cli.Wiring). The console script `pathways-workload` and
`python -m pathways_workload` start here.

In a checkout skill/, tools/, evals/ and bench/ sit at the root, as the design lays them out; pathways_workload/skill (and
the others) are relative symlinks to them, so Python and static tools (mypy, jedi, pyright) find them as files.
"""

