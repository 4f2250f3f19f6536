"""The `rename` transformation: every name a user or the platform chose, changed consistently in every file.

Renamed: the JobSet name, the random suffixes of pod names, the hash and suffix of GKE node names, cluster and
project ids, bucket names, Kubernetes UIDs, and versions of the form 0.X.Y (the minor plus 2, so equal versions
stay equal and order is kept). Kept: insertIds, conventions (`-worker-`, `pathways-head`, `gke-`, node pools),
and words that carry meaning (tpu, v5e, spot, ...). Each new name has the old one's shape (digits stay digits,
hex stays hex, dashes stay), drawn from a hash of the old name, so the mapping is deterministic.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from .case_copy import Copy

UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
VERSION = re.compile(r"(?<![\d.])0\.(\d+)\.(\d+)(?![\d.]*\d)")
BUCKET = re.compile(r"gs://([a-z0-9][a-z0-9._-]{1,61}[a-z0-9])")
NODE = re.compile(r"^gke-.+-([0-9a-f]{8})-([a-z0-9]{4})$")
POD_SUFFIX = re.compile(r"-([a-z0-9]{5})$")
KEEP = {"tpu", "cpu", "gke", "np", "v4", "v5e", "v5p", "v6e", "tpu7x", "spot", "pathways", "worker", "head", "rm",
        "proxy", "tmp", "scratch", "ckpt", "default", "gcs", "ml", "prod", "dev"}
MEANINGFUL = re.compile(r"oom|tpu|err|hbm|kil|fail|dead|nan|gpu|quota|evict|abort|panic|fatal|crash|ssh|tmp")
HEX = set("0123456789abcdef")


class Renamer:
    def __init__(self) -> None:
        self.map: dict[str, str] = {}
        self._pattern: re.Pattern | None = None

    def _shape(self, part: str) -> str:
        hexish = set(part) <= HEX and any(ch.isdigit() for ch in part)
        for salt in range(100):
            h = hashlib.sha256(f"{salt}:{part}".encode()).digest() * 4
            new = "".join(
                str(h[i] % 10) if ch.isdigit() else
                "abcdef"[h[i] % 6] if hexish and ch.islower() else
                chr(97 + h[i] % 26) if ch.islower() else
                chr(65 + h[i] % 26) if ch.isupper() else ch
                for i, ch in enumerate(part))
            if new != part and not MEANINGFUL.search(new) and new not in self.map.values():
                return new
        return part

    def add(self, name: str | None, whole: bool = False) -> None:
        """Map a name; by dash-separated parts (keeping meaningful words) unless whole."""
        if not name or len(name) < 3 or name in self.map or name in KEEP:
            return
        parts = [name] if whole else name.split("-")
        self.map[name] = "-".join(p if p in KEEP or not p else self._shape(p) for p in parts)
        self._pattern = None

    def sub(self, s: str) -> str:
        s = UUID.sub(lambda m: str(uuid.uuid5(uuid.NAMESPACE_OID, m.group(0))), s)
        s = VERSION.sub(lambda m: f"0.{int(m.group(1)) + 2}.{m.group(2)}", s)
        if not self.map:
            return s
        if self._pattern is None:
            alt = "|".join(re.escape(k) for k in sorted(self.map, key=len, reverse=True))
            self._pattern = re.compile(rf"(?<![A-Za-z0-9])(?:{alt})(?![A-Za-z0-9])")
        return self._pattern.sub(lambda m: self.map[m.group(0)], s)

    def walk(self, o: object, key: str = "") -> object:
        if isinstance(o, str):
            return o if key == "insertId" else self.sub(o)
        if isinstance(o, dict):
            return {k: self.walk(v, k) for k, v in o.items()}
        if isinstance(o, list):
            return [self.walk(v, key) for v in o]
        return o


def _strings(o: object, key: str = ""):
    if isinstance(o, dict):
        for k, v in o.items():
            yield from _strings(v, k)
    elif isinstance(o, list):
        for v in o:
            yield from _strings(v, key)
    elif isinstance(o, str):
        yield key, o


def names(c: Copy) -> Renamer:
    """The names of a case, collected from the fields that hold them."""
    r = Renamer()
    docs = [c.logs, *c.docs.values(), c.expected.get("root_cause_entities") or []]
    pods, nodes, buckets = set(), set(), set()
    for doc in docs:
        for key, s in _strings(doc):
            if key in ("jobset-name", "k8s-pod/jobset_sigs_k8s_io/jobset-name", "jobset.sigs.k8s.io/jobset-name"):
                r.add(s)
            elif key in ("cluster_name", "project_id"):
                r.add(s)
            elif key in ("pod_name",):
                pods.add(s)
            elif key in ("node_name", "nodeName", "host", "reportingInstance"):
                nodes.add(s)
            buckets.update(BUCKET.findall(s))
    for doc in c.docs.values():
        if isinstance(doc, dict) and doc.get("kind") == "JobSet":
            r.add((doc.get("metadata") or {}).get("name"))
        for item in (doc.get("items") or []) if isinstance(doc, dict) else []:
            meta = item.get("metadata") or {}
            (pods if item.get("kind", "Pod") == "Pod" else nodes).add(meta.get("name") or "")
            nodes.add((item.get("spec") or {}).get("nodeName") or "")
    for e in c.expected.get("root_cause_entities") or []:
        {"JobSet": r.add, "Pod": pods.add, "Node": nodes.add}.get(e.get("kind"), lambda _: None)(e.get("name"))
    for p in pods:
        m = POD_SUFFIX.search(p)
        if m:
            r.add(m.group(1), whole=True)
    for n in nodes:
        m = NODE.match(n)
        if m:
            r.add(m.group(1), whole=True)
            r.add(m.group(2), whole=True)
    for b in buckets:
        r.add(b)
    return r


def rename(c: Copy) -> int:
    r = names(c)
    c.logs = cast(list[dict], r.walk(c.logs))
    c.docs = {k: r.walk(v) for k, v in c.docs.items()}
    exp = dict(c.expected)
    for key in ("evidence", "fix_requires", "data_gaps_require"):
        if exp.get(key):
            exp[key] = [r.sub(str(x)) for x in exp[key]]
    exp["root_cause_entities"] = [{**e, "name": r.sub(str(e.get("name", "")))} for e in exp.get("root_cause_entities") or []]
    c.expected = exp
    c.extra.pop("scenario.yaml", None)  # the builder's source, not read by the engine; it would keep the old names
    return len(r.map)
