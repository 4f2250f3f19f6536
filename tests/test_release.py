"""The GA release as data (skill/catalog/release.py) and the workload checked against it (skill/judging/matrix.py)."""

from __future__ import annotations

import re

import pytest

from pathways_workload.skill.catalog import Pattern
from pathways_workload.skill.catalog.release import RELEASE, parse_image
from pathways_workload.skill.judging.matrix import findings, pins
from pathways_workload.skill.understanding.model import ContainerInfo, Workload
from pathways_workload.skill.reading.records import Record
from pathways_workload.skill.understanding.signals import Signal

from conftest import CASES

GA = RELEASE.images
PRE_GA = re.compile(r"cloud-tpu-v2-images/(?:pathways/|pathways-colocated-python/)")


@pytest.mark.parametrize("ref,component,kind,jax", [
    (f"{GA['server']}:20261108-jax_0.12.0.1", "server", "pinned", "0.12.0.1"),
    (f"{GA['proxy']}:jax-0.11.2", "proxy", "rolling", "0.11.2"),
    (f"{GA['sidecar']}:latest", "sidecar", "latest", ""),
    ("us-docker.pkg.dev/cloud-tpu-v2-images/pathways/server:jax-0.7.2", "server", "rolling", "0.7.2"),
    ("us-central1-docker.pkg.dev/p/images/trainer:v41", "", "other", ""),
    (f"{GA['server']}@sha256:abc", "server", "latest", ""),
])
def test_image_references_are_read(ref, component, kind, jax):
    r = parse_image(ref)
    assert (r.component, r.kind, r.jax) == (component, kind, jax)


def workload(server: str, proxy: str | None = None, client_jax: str = "", accel: str = "tpu-v6e-slice",
             digests: tuple[str, ...] = ()) -> Workload:
    m = Workload(jobset="js")
    w = m.pod("js-worker-0-0-abcde")
    w.role, w.uid, w.accelerator, w.attempt = "worker", "uid-w", accel, "0"
    w.containers["pathways-worker"] = ContainerInfo("pathways-worker", server,
                                                    image_id=f"x@sha256:{digests[0]}" if digests else None)
    if len(digests) > 1:
        w2 = m.pod("js-worker-0-0-fghij")
        w2.role, w2.uid, w2.attempt = "worker", "uid-w2", "1"
        w2.containers["pathways-worker"] = ContainerInfo("pathways-worker", server, image_id=f"x@sha256:{digests[1]}")
    if proxy:
        h = m.pod("js-pathways-head-0-0-klmno")
        h.role, h.uid = "head", "uid-h"
        h.containers["pathways-proxy"] = ContainerInfo("pathways-proxy", proxy)
    if client_jax:
        rec = Record(id="j", ts=1, source="container", log="stdout", text=f"System Information: Jax Version: {client_jax}")
        m.add_milestone(Signal("milestone", "client_jax", Pattern("x"), rec, {"version": client_jax}))
    return m


def kinds(m: Workload) -> list[str]:
    return [f.kind for f in findings(m)]


def test_a_supported_pinned_workload_has_no_finding():
    m = workload(f"{GA['server']}:20261108-jax_0.12.0.1", f"{GA['proxy']}:20261108-jax_0.12.0.1", "0.12.0.1")
    assert kinds(m) == []
    assert pins(m)["server_image_pin"] == f"{GA['server']}:20261108-jax_0.12.0.1"


@pytest.mark.parametrize("m,kind", [
    (workload(f"{GA['server']}:20261108-jax_0.12.0.1", accel="tpu-v4-podslice"), "unsupported_tpu"),
    (workload(f"{GA['server']}:20260101-jax_0.9.0"), "unsupported_jax"),
    (workload(f"{GA['server']}:20261108-jax_0.12.0.1", client_jax="0.11.2"), "jax_skew"),
    (workload(f"{GA['server']}:latest"), "rolling_tag"),
    (workload(f"{GA['server']}:jax-0.12.0"), "rolling_tag"),
    (workload(f"{GA['server']}:20261108-jax_0.12.0.1", digests=("a" * 64, "b" * 64)), "digest_changed"),
    (workload("us-docker.pkg.dev/cloud-tpu-v2-images/pathways/server:20261108-jax_0.12.0.1"), "pre_ga_image"),
])
def test_each_finding(m, kind):
    assert kind in kinds(m)
    assert all(f.evidence for f in findings(m))  # cited by the Pod object it was read from


def test_a_version_fix_names_a_pinned_supported_tag_for_the_client_s_jax():
    p = pins(workload(f"{GA['server']}:latest", f"{GA['proxy']}:latest", "0.11.2"))
    assert p["server_image_pin"] == f"{GA['server']}:<YYYYMMDD>-jax_0.11.2"
    assert p["proxy_image_pin"] == f"{GA['proxy']}:<YYYYMMDD>-jax_0.11.2"
    mirror = pins(workload("europe-docker.pkg.dev/acme/mirror/server:jax-0.10.2", client_jax="0.10.2"))
    assert mirror["server_image_pin"] == "europe-docker.pkg.dev/acme/mirror/server:<YYYYMMDD>-jax_0.10.2"


VERSION_FIXES = ("image_pull_failure", "ifrt_version_mismatch", "libtpu_mismatch", "colocated_python_failure",
                 "megascale_hang")
_OLD_IMAGE = re.compile(r"us-docker\.pkg\.dev/cloud-tpu-v2-images/(?:pathways/(server|proxy_server)|"
                        r"pathways-colocated-python/sidecar):[\w.\-]+")


def _to_ga(m: re.Match) -> str:
    return f"{GA['server' if m.group(1) == 'server' else 'proxy' if m.group(1) else 'sidecar']}:20261108-jax_0.12.0.1"


@pytest.mark.parametrize("case", [c for c in CASES if __import__("yaml").safe_load((c / "expected.yaml").read_text())
                                  ["failure_class"] in VERSION_FIXES], ids=lambda c: c.name)
def test_no_fix_names_a_pre_ga_location_on_a_workload_on_ga_images(case, tmp_path):
    """The library's version-class incidents, moved onto the GA images: no fix may send the user to a pre-GA path."""
    from pathways_workload.skill.api import diagnose_replay

    for f in case.iterdir():
        if f.is_file():
            (tmp_path / f.name).write_text(_OLD_IMAGE.sub(_to_ga, f.read_text()))
    d = diagnose_replay(tmp_path)
    text = " ".join(f"{f.summary} {f.command or ''}" for f in d.fix)
    assert not PRE_GA.search(text)
    if d.failure_class in ("ifrt_version_mismatch", "libtpu_mismatch"):
        assert re.search(r"/server:(?:<YYYYMMDD>|\d{8})-jax_", text)  # pinned, in the workload's own registry


# --- the matrix check on whole incidents: case-009 (three restart attempts) moved onto each kind of workload ------

GA_PIN = "20261108-jax_0.12.0.1"


def _incident(tmp_path, server_tag: str = GA_PIN, client_jax: str = "0.12.0.1", accel: str = "tpu-v6e-slice",
              other_digest: bool = False):
    import json as _json
    import shutil

    from conftest import FIXTURES

    src = FIXTURES / "case-009"
    for f in src.iterdir():
        if f.suffix not in (".json",):
            continue
        text = f.read_text()
        text = text.replace("cloud-tpu-v2-images/pathways/server:jax-0.7.2", f"cloud-tpu-v2-images/cloud-pathways/server:{server_tag}")
        text = text.replace("cloud-tpu-v2-images/pathways/proxy_server:jax-0.7.2",
                            f"cloud-tpu-v2-images/cloud-pathways/proxy_server:{server_tag}")
        text = text.replace("Jax Version: 0.7.2", f"Jax Version: {client_jax}").replace("Jaxlib Version: 0.7.2", f"Jaxlib Version: {client_jax}")
        text = text.replace('"tpu-v6e-slice"', f'"{accel}"')
        (tmp_path / f.name).write_text(text)
    shutil.copy(src / "expected.yaml", tmp_path / "expected.yaml")
    if other_digest:  # a worker of the previous attempt that ran another build of the same tag
        pods = _json.loads((tmp_path / "pods.json").read_text())
        old = _json.loads(_json.dumps(next(p for p in pods["items"] if "-worker-" in p["metadata"]["name"])))
        old["metadata"]["name"] += "-old"
        old["metadata"]["uid"] = "a0a0a0a0-0000-4000-8000-000000000001"
        old["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"] = "1"
        for c in old["status"]["containerStatuses"]:
            c["imageID"] = c["imageID"].split("@")[0] + "@sha256:" + "f" * 64
        pods["items"].append(old)
        (tmp_path / "pods.json").write_text(_json.dumps(pods))
    return tmp_path


@pytest.mark.parametrize("kw,kind", [
    ({}, None),
    ({"accel": "tpu-v4-podslice"}, "unsupported_tpu"),
    ({"server_tag": "20260101-jax_0.9.0", "client_jax": "0.9.0"}, "unsupported_jax"),
    ({"client_jax": "0.11.2"}, "jax_skew"),
    ({"server_tag": "latest"}, "rolling_tag"),
    ({"other_digest": True}, "digest_changed"),
], ids=["supported-pinned", "tpu", "jax", "skew", "rolling", "digest"])
def test_the_matrix_on_whole_incidents(tmp_path, kw, kind):
    from pathways_workload.skill.api import diagnose_replay

    d = diagnose_replay(_incident(tmp_path, **kw))
    found = [o for o in d.observations if o.kind == "support_matrix"]
    if kind is None:
        assert found == [], [o.excerpt for o in found]
    else:
        said = {"unsupported_tpu": "does not support", "unsupported_jax": "outside the release's supported versions",
                "jax_skew": "but the server image is built for JAX", "rolling_tag": "rolling tag",
                "digest_changed": "different image digests across restart attempts"}[kind]
        assert any(said in o.excerpt for o in found), [o.excerpt for o in found]
        assert all(set(o.evidence) <= d.cited_ids() for o in found)
    assert d.failure_class == "hbm_oom"  # the check never changes the verdict


def test_a_version_skew_verdict_explains_itself_with_the_matrix(diagnoses):
    """case-038 (ifrt_version_mismatch) runs a server tag outside the release: the explanation says so."""
    d = diagnoses["case-038"]
    assert d.failure_class == "ifrt_version_mismatch"
    assert "Against the Pathways release of" in d.root_cause.explanation and "rolling tag" in d.root_cause.explanation
