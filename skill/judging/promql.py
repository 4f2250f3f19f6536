"""The PromQL a user can paste into Cloud Monitoring to see the series that decide between candidates (the templates
are catalog data: skill/catalog/series.py). Pure: strings from the workload's names."""

from __future__ import annotations

from ..catalog.series import PROMQL


def promql_for(failure_class: str, ctx: dict[str, str]) -> str | None:
    """The query whose series tell this class from its rivals, for this JobSet; None when no series decides it."""
    template = PROMQL.get(failure_class)
    if template is None:
        return None
    cluster = ctx.get("cluster", "<cluster>")
    sel = (f'cluster_name="{cluster}",namespace_name="{ctx.get("namespace", "default")}",'
           f'pod_name=~"{ctx.get("jobset", "<jobset>")}-.*"')
    return template.format(sel=sel, cluster=cluster)
