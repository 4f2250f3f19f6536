"""Telling: the diagnosis and the ways it is shown.

The last stage. `explain` assembles the `Diagnosis` (the output contract in `skill.diagnosis`) from a verdict;
`citations` holds the rules that choose which lines prove each claim, one named row each; `report` (Markdown),
`html` (a page with the timeline) and `answer` (an agent's answer, validated) render it; `resources` finds the
packaged templates. Everything below may be imported here; nothing below imports this folder.
"""
