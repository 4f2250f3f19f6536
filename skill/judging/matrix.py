"""The workload against the Pathways release (skill/catalog/release.py): what it runs, and what a TPU engineer would
check first when the runtime misbehaves. Pure: no I/O.

From the pods (images, image digests, the TPU type their spec selects, restart attempts) and the client's own report
of its JAX version, it reads the Pathways images and the client's JAX, and finds: a TPU type or JAX version outside
the support matrix, a client whose JAX differs from the server image's, a rolling tag (`latest`, `jax-X`) that may
pull another build on a restart, an image digest that changed between restart attempts, an image at a pre-GA
location. It also proposes the images a version fix should name (`pins`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.types import SIDECAR_CONTAINER
from ..catalog.release import RELEASE, VERSION_CLASS, ImageRef, nearest_supported_jax, parse_image, supported_jax
from ..understanding.model import Workload

SERVER_CONTAINERS = ("pathways-worker", "pathways-rm")
PROXY_CONTAINERS = ("pathways-proxy",)
SIDECAR_CONTAINERS = (SIDECAR_CONTAINER,)


@dataclass(frozen=True)
class Finding:
    kind: str  # unsupported_tpu | unsupported_jax | jax_skew | rolling_tag | digest_changed | pre_ga_image
    text: str
    failure_class: str | None  # the version-skew class it bears on, when one does
    resource: str  # pod/container, image or node selector
    evidence: tuple[str, ...] = ()  # ids of the Pod objects it was read from


@dataclass(frozen=True)
class Images:
    server: ImageRef | None
    proxy: ImageRef | None
    sidecar: ImageRef | None
    client_jax: str  # what the client reported, or its image's tag names, "" unknown


def images(m: Workload) -> Images:
    def first(names: tuple[str, ...]) -> ImageRef | None:
        for p in m.pods.values():
            for c in p.containers.values():
                if c.name in names and c.image:
                    return parse_image(c.image)
        return None

    said = sorted(m.milestones.get("client_jax", []), key=lambda s: s.ts)
    jax = said[-1].groups.get("version", "") if said else ""
    return Images(first(SERVER_CONTAINERS), first(PROXY_CONTAINERS), first(SIDECAR_CONTAINERS), jax)


def findings(m: Workload) -> list[Finding]:
    out: list[Finding] = []
    im = images(m)
    uids = tuple(dict.fromkeys(p.uid for p in m.pods.values() if p.uid))[:1]
    accel = sorted({p.accelerator for p in m.pods.values() if p.accelerator})
    for a in accel:
        if a not in RELEASE.tpu_types:
            out.append(Finding("unsupported_tpu", f"the pods select TPU type {a}, which the Pathways release of "
                               f"{RELEASE.date} does not support ({', '.join(sorted(set(RELEASE.tpu_types.values())))})",
                               None, f"nodeSelector {a}", uids))
    server_jax = im.server.jax if im.server else ""
    runs: dict[str, list[str]] = {}
    for name, v in (("the client", im.client_jax), ("the server image", server_jax)):
        if v and not supported_jax(v):
            runs.setdefault(v, []).append(name)
    for v, who in runs.items():
        out.append(Finding("unsupported_jax", f"{' and '.join(who)} run{'s' if len(who) == 1 else ''} JAX {v}, outside "
                           f"the release's supported versions ({', '.join(RELEASE.jax_versions)}); nearest supported: "
                           f"{nearest_supported_jax(v)}", VERSION_CLASS,
                           im.server.ref if im.server and "the server image" in who else "client", uids))
    if im.server is not None and im.client_jax and server_jax and im.client_jax != server_jax:
        out.append(Finding("jax_skew", f"the client reports JAX {im.client_jax} but the server image is built for JAX "
                           f"{server_jax} ({im.server.ref})", VERSION_CLASS, im.server.ref, uids))
    refs = [r for r in (im.server, im.proxy, im.sidecar) if r is not None]
    rolling = [r for r in refs if r.kind in ("rolling", "latest")]
    if rolling:
        out.append(Finding("rolling_tag", f"{', '.join(r.ref for r in rolling)} use{'s' if len(rolling) == 1 else ''} a "
                           "rolling tag: a restart attempt may pull another build than the first; pin a YYYYMMDD-jax_X "
                           "tag", VERSION_CLASS, rolling[0].ref, uids))
    old = [r for r in refs if r.pre_ga]
    if old:
        out.append(Finding("pre_ga_image", f"{', '.join(r.repository for r in old)}: pre-GA location"
                           f"{'s' if len(old) > 1 else ''}; the release publishes "
                           f"{', '.join(RELEASE.images[r.component] for r in old)}", None, old[0].ref, uids))
    out += _digests(m)
    return out


def _digests(m: Workload) -> list[Finding]:
    """The same container of a JobSet running different image digests in different restart attempts."""
    seen: dict[tuple[str, str], dict[str, str]] = {}  # (role, container) -> digest -> attempt
    uid: dict[tuple[str, str], str] = {}
    for p in m.pods.values():
        for c in p.containers.values():
            if c.image_id and "@sha256:" in c.image_id:
                key = (p.role, c.name)
                seen.setdefault(key, {}).setdefault(c.image_id.split("@", 1)[1], p.attempt or "?")
                uid.setdefault(key, p.uid or "")
    out = []
    for (role, name), digests in sorted(seen.items()):
        if len(digests) > 1:
            where = ", ".join(f"{d[:19]}… in attempt {a}" for d, a in digests.items())
            out.append(Finding("digest_changed", f"the {role} container {name} ran different image digests across "
                               f"restart attempts ({where}): a rolling tag pulled another build",
                               VERSION_CLASS, f"{role}/{name}", (uid[(role, name)],) if uid[(role, name)] else ()))
    return out


def pins(m: Workload) -> dict[str, str]:
    """The images a version fix should name: the workload's own repositories (a mirror, or the pre-GA path it uses),
    else the release's; a pinned tag for the client's JAX (kept when the workload already pins that one)."""
    im = images(m)
    jax = im.client_jax or (im.server.jax if im.server else "")
    target = jax if jax and supported_jax(jax) else (nearest_supported_jax(jax) if jax else "<client jax version>")

    def pin(ref: ImageRef | None, component: str) -> str:
        repo = ref.repository if ref is not None else RELEASE.images[component]
        if ref is not None and ref.kind == "pinned" and ref.jax == target:
            return ref.ref.split("@", 1)[0]
        if ref is not None and ref.pre_ga:  # a pre-GA deployment keeps its own world: its path, its tag grammar
            return f"{repo}:jax-{jax or target}"
        return f"{repo}:<YYYYMMDD>-jax_{target}"

    server = pin(im.server, "server")
    # "the official image": the release's server, in the family (pre-GA or GA) of any official image the workload runs
    official = next((r for r in (im.server, im.proxy, im.sidecar) if r is not None and r.official), None)
    if official is not None and official.pre_ga:
        official_server = f"{RELEASE.pre_ga_images['server']}:jax-{jax or target}"
    else:
        official_server = f"{RELEASE.images['server']}:<YYYYMMDD>-jax_{target}"
    return {"server_image_pin": server, "official_server_pin": official_server, "proxy_image_pin": pin(im.proxy, "proxy"),
            "sidecar_image_pin": pin(im.sidecar, "sidecar"), "target_jax": target,
            "server_repo": server.rsplit(":", 1)[0], "ga_server_repo": RELEASE.images["server"],
            "ga_sidecar_repo": RELEASE.images["sidecar"]}
