"""The Pathways-on-Cloud release the fixes and the support-matrix check are written against, as data.

Source: Google Cloud release notes, "Pathways on Cloud generally available on GKE, with elastic training"
(2026-11-09), restated in ../shared/reference/pathways-ga.md. A new release is a change to RELEASE below.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GA_REPOSITORY = "us-docker.pkg.dev/cloud-tpu-v2-images/cloud-pathways"
PRE_GA_REPOSITORIES = ("us-docker.pkg.dev/cloud-tpu-v2-images/pathways",
                       "us-docker.pkg.dev/cloud-tpu-v2-images/pathways-colocated-python")


@dataclass(frozen=True)
class Release:
    date: str
    source: str
    images: dict[str, str]  # component -> repository path, without a tag
    pre_ga_images: dict[str, str]  # component -> the pre-GA path that older manifests still use
    tpu_types: dict[str, str]  # GKE's cloud.google.com/gke-tpu-accelerator value -> the product name
    jax_versions: tuple[str, ...]  # newest first


RELEASE = Release(
    date="2026-11-09",
    source="Google Cloud release notes: Pathways on Cloud generally available on GKE, with elastic training (2026-11-09)",
    images={"server": f"{GA_REPOSITORY}/server", "proxy": f"{GA_REPOSITORY}/proxy_server",
            "sidecar": f"{GA_REPOSITORY}/colocated_python_sidecar"},
    pre_ga_images={"server": f"{PRE_GA_REPOSITORIES[0]}/server", "proxy": f"{PRE_GA_REPOSITORIES[0]}/proxy_server",
                   "sidecar": f"{PRE_GA_REPOSITORIES[1]}/sidecar"},
    tpu_types={"tpu7x": "TPU7x (Ironwood)", "tpu-v6e-slice": "TPU v6e (Trillium)", "tpu-v5p-slice": "TPU v5p",
               "tpu-v5-lite-podslice": "TPU v5e", "tpu-v5-lite-device": "TPU v5e"},
    jax_versions=("0.12.0.1", "0.12.0", "0.11.2", "0.11.1", "0.11.0", "0.10.2", "0.10.1"),
)

# The class a version finding (unsupported JAX, client/server skew, a rolling tag or a changed digest) bears on.
VERSION_CLASS = "ifrt_version_mismatch"

# Tags: `YYYYMMDD-jax_X` is pinned (promotion date, verified JAX); `jax-X` and `latest` are rolling.
PINNED = re.compile(r"^(?P<date>\d{8})-jax_(?P<jax>\d+(?:\.\d+)+)$")
ROLLING = re.compile(r"^jax-(?P<jax>\d+(?:\.\d+)+)$")
COMPONENT_OF = (("sidecar", re.compile(r"/(?:colocated_python_sidecar|sidecar)$")),
                ("proxy", re.compile(r"/proxy_server$")), ("server", re.compile(r"/server$")))


@dataclass(frozen=True)
class ImageRef:
    """An image reference read for what the release says about it."""

    ref: str
    repository: str  # without tag or digest
    tag: str
    component: str  # server | proxy | sidecar | "" (a user image)
    jax: str  # the JAX version the tag names, "" when it names none
    kind: str  # pinned | rolling | latest | other

    @property
    def official(self) -> bool:
        return self.repository.startswith(("us-docker.pkg.dev/cloud-tpu-v2-images/",))

    @property
    def pre_ga(self) -> bool:
        return self.repository.startswith(PRE_GA_REPOSITORIES) and not self.repository.startswith(GA_REPOSITORY + "/")


def parse_image(ref: str) -> ImageRef:
    """`registry/path/name:tag@sha256:...` read into its parts (a tag-less reference has tag "" and kind other)."""
    name = ref.split("@", 1)[0]
    repo, _, tag = name.rpartition(":") if ":" in name.rsplit("/", 1)[-1] else (name, "", "")
    component = next((c for c, rx in COMPONENT_OF if rx.search(repo)), "")
    if (m := PINNED.match(tag)) is not None:
        kind, jax = "pinned", m.group("jax")
    elif (m := ROLLING.match(tag)) is not None:
        kind, jax = "rolling", m.group("jax")
    elif tag == "latest" or (component and not tag):
        kind, jax = "latest", ""
    else:
        kind, jax = "other", (re.search(r"jax[_-](\d+(?:\.\d+)+)", tag) or [None, ""])[1] or ""
    return ImageRef(ref, repo, tag, component, jax, kind)


def supported_jax(version: str) -> bool:
    return version in RELEASE.jax_versions


def nearest_supported_jax(version: str) -> str:
    """The supported JAX version closest to `version` (the same minor release when there is one), newest first."""
    def key(v: str) -> tuple[int, ...]:
        return tuple(int(x) for x in v.split(".") if x.isdigit())
    same_minor = [v for v in RELEASE.jax_versions if key(v)[:2] == key(version)[:2]]
    if same_minor:
        return same_minor[0]
    newer = [v for v in RELEASE.jax_versions if key(v) >= key(version)]
    return newer[-1] if newer else RELEASE.jax_versions[-1]
