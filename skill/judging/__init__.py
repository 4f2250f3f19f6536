"""Judging: which cause, how sure, and what to look at next.

The third stage. `impact` decides whether each suspicious line hurt the run (linked) or was survived; `classify`
ranks the candidate classes with their precedence and cascades; `sufficiency` says whether the evidence is enough;
`next_checks` names the read-only checks that would settle a doubt; `matrix` checks the workload against the GA
support matrix; `engine` runs the stages from records to a verdict (`analyse`). Imports the lower stages, never
telling.
"""
