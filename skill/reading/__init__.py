"""Reading: evidence in, records out.

The first stage of the data path. Sources (replay of exported files, Cloud Logging, Log Analytics, the Kubernetes
API) read raw LogEntries, events and objects; the Logging query language (`query`) is the one definition of every
filter, compiled to a Python predicate for replay and to SQL (`sql`) for DuckDB and Log Analytics; `records` turns an
entry into a `Record` (time, severity, container, pod, node, text) and `objects` turns pods, nodes and the JobSet into
records of their own. Nothing here knows a failure class: this folder imports nothing from the rest of `skill/`
except `errors`.
"""
