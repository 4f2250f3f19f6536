"""Start-up and connection: images, versions, the IFRT proxy and the colocated Python sidecar."""

from __future__ import annotations

from .types import FactRule, FailureClass, Fix, Pattern, RuleContext, SIDECAR_CONTAINER

_PCI = ("Pod", "Container", "Image")


def _not_backend_probe(c: RuleContext) -> bool:
    """JAX on the CPU head tries the 'tpu' backend first and warns; with the proxy backend that is expected."""
    return "Unable to initialize backend 'tpu'" not in c.text


def _not_cancelled(c: RuleContext) -> bool:
    return "CANCELLED" not in c.text and "failed to agree on the protocol version" not in c.text


IMAGE_PULL_FAILURE = FailureClass(
    id="image_pull_failure", fixed_in_workload=True, title="An image cannot be pulled", phase="start", component="kubelet image pull",
    patterns=(
        # rendered: Failed (events.FailedToPullImage) + "Failed to pull image %q: %v" from image_manager.go; filled from
        # the format string in image_manager.go (the runtime's error as containerd reports a missing tag)
        Pattern(r"Failed to pull image \"(?P<image>[^\"]+)\"", 0.95, ("event", "node"), entities=("Pod", "Image"),
                transient=True,
                origin='https://github.com/kubernetes/kubernetes/blob/cfce511e157eb37917f5ad1d86197e732f0a097f/pkg/kubelet/images/image_manager.go',
                example='Failed: Failed to pull image "us-docker.pkg.dev/my-project/jax/client:v2": rpc error: code = NotFound desc = failed to pull and unpack image "us-docker.pkg.dev/my-project/jax/client:v2": not found'),
        # rendered: BackOff (events.BackOffPullImage) + "Back-off pulling image %q" from image_manager.go; filled from the
        # format string in image_manager.go
        Pattern(r"Back-off pulling image \"(?P<image>[^\"]+)\"", 0.85, ("event",), entities=("Pod", "Image"), transient=True,
                origin='https://github.com/kubernetes/kubernetes/blob/cfce511e157eb37917f5ad1d86197e732f0a097f/pkg/kubelet/images/image_manager.go',
                example='BackOff: Back-off pulling image "us-docker.pkg.dev/my-project/jax/client:v2"'),
        # rendered: the container's waiting state, reason ErrImagePullBackOff ("ImagePullBackOff") + the message
        # image_manager.go returns with it ("Back-off pulling image %q"), from types.go
        Pattern(r"waiting: reason=(?:ErrImagePull|ImagePullBackOff|InvalidImageName)", 0.9, ("object",),
                entities=("Pod", "Image"), transient=True,
                origin='https://github.com/kubernetes/kubernetes/blob/0a2f5b122db7f5dab90e3b6384811a68dd030ca3/pkg/kubelet/images/types.go',
                example='container jax-client waiting: reason=ImagePullBackOff message=Back-off pulling image "us-docker.pkg.dev/my-project/jax/client:v2"'),
        # rendered: ErrImageNeverPull (events.ErrImageNeverPullPolicy) + "Container image %q is not present with pull
        # policy of Never" from image_manager.go; filled from the format string in image_manager.go
        Pattern(r"^(?:ErrImagePull|ImagePullBackOff|InvalidImageName|ErrImageNeverPull): ", 0.85, ("event",),
                entities=("Pod",), transient=True,
                origin='https://github.com/kubernetes/kubernetes/blob/cfce511e157eb37917f5ad1d86197e732f0a097f/pkg/kubelet/images/image_manager.go',
                example='ErrImageNeverPull: Container image "us-docker.pkg.dev/my-project/jax/client:v2" is not present with pull policy of Never'),
    ),
    explanation="The kubelet cannot pull {{ image }} for {{ pod }} (wrong tag, no registry permission, or no egress), so the container never starts.",
    explains=("slices_not_ready", "workload_stalled", "proxy_unreachable", "colocated_python_failure"),
    lookalikes=("node_selector_mismatch",),
    fixes=(
        Fix("Read the pull error on the pod (not found = wrong tag; 403/insufficient_scope = permission; i/o timeout = no egress).",
            "kubectl describe pod {{ pod }} -n {{ namespace }}", "read-only"),
        Fix("Check that the tag exists.", "gcloud artifacts docker tags list {{ image_repo }} --project={{ project }} --limit=20", "read-only"),
        Fix("For 403 Forbidden / failed to authorize: let the node pool's service account read the repository (roles/artifactregistry.reader on it); find the account with `gcloud container node-pools describe <pool> --cluster={{ cluster }} --location={{ location }} --format='value(config.serviceAccount)'`.",
            "{% set p = image.split('/') %}{% if p|length >= 4 and p[0].endswith('-docker.pkg.dev') %}gcloud artifacts repositories add-iam-policy-binding {{ p[2] }} --project={{ p[1] }} --location={{ p[0][:-15] }} --member=serviceAccount:<node-pool-service-account> --role=roles/artifactregistry.reader{% else %}gcloud artifacts repositories add-iam-policy-binding <repository> --project=<registry-project> --location=<region> --member=serviceAccount:<node-pool-service-account> --role=roles/artifactregistry.reader{% endif %}",
            "high"),
        Fix("Pin existing, matching Pathways images, e.g. xpk --server-image={{ server_image_pin }} --proxy-server-image={{ proxy_image_pin }} (a pinned YYYYMMDD-jax_X tag never changes under a restart; list them with the command below); for a user image in your registry grant roles/artifactregistry.reader to the node service account; for timeouts enable Private Google Access or Cloud NAT.", None, "low"),
        Fix("List the pinned server tags for the client's JAX ({{ target_jax }}).", "gcloud artifacts docker tags list {{ server_repo }} --filter='tag~jax_{{ target_jax }}$' --format='value(tag)'", "read-only"),
    ),
    sources=("event", "object"),
    scope="spread", status_when_root="stalled",
)

IFRT_VERSION_MISMATCH = FailureClass(
    id="ifrt_version_mismatch", fixed_in_workload=True, title="IFRT proxy client and server disagree on the protocol version", phase="connect",
    component="JAX client (IFRT proxy client) vs pathways proxy_server image",
    patterns=(
        Pattern(r"failed to agree on the protocol version", 0.97, ("container",), entities=("Pod", "Container"),
                origin='https://docs.cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/troubleshooting-pathways',
                example='IFRT Proxy client and server failed to agree on the protocol version; supported versions: client = [1, 1], server = [3, 14]'),
        Pattern(r"(?i)(?:could not|couldn't|failed to|unable to) (?:settle on|agree on|negotiate) (?:a |the )?(?:common )?"
                r"(?:IFRT )?(?:proxy )?protocol version", 0.95, ("container",), entities=("Pod", "Container"),
                origin='https://docs.cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/troubleshooting-pathways',
                example='IFRT Proxy client and server failed to agree on the protocol version; supported versions: client = [1, 1], server = [3, 14]'),
        # the proxy's side (the server computes the version) names the server build to change: its image
        Pattern(r"IFRT Proxy client and server failed to agree on the", 0.9, ("container",),
                containers=("pathways-proxy",), entities=("Pod", "Container", "Image"),
                origin='https://github.com/tensorflow/tensorflow/blob/08df8c40b4376ed012fa3ba03ff3e3068d8d2a94/third_party/xla/xla/python/ifrt_proxy/server/version.cc',
                example='        "IFRT Proxy client and server failed to agree on the "'),
    ),
    explanation="The client's jax/jaxlib (which carries the IFRT proxy client) and the proxy_server image of {{ jobset }} speak different protocol versions ({{ detail }}); the connection works but the handshake fails.",
    explains=("user_code_error", "proxy_unreachable"),
    lookalikes=("proxy_unreachable",),
    fixes=(
        Fix("See the images the head pod runs.", "kubectl get pod {{ head_pod }} -n {{ namespace }} -o jsonpath='{range .spec.initContainers[*]}{.name}={.image}{\"\\n\"}{end}{range .spec.containers[*]}{.name}={.image}{\"\\n\"}{end}'", "read-only"),
        Fix("List the server builds made for the client's JAX ({{ target_jax }}): a YYYYMMDD-jax_X tag is pinned, jax-X and latest move.", "gcloud artifacts docker tags list {{ server_repo }} --filter='tag~jax_{{ target_jax }}$' --format='value(tag)'", "read-only"),
        Fix("Pin the server and proxy image tags to the client's JAX version instead of a moving tag: --server-image={{ server_image_pin }} --proxy-server-image={{ proxy_image_pin }}; or move jax/jaxlib in the client image to the server's version.", None, "low"),
    ),
    names_jobset=True,
    names_images=True,
)

PROXY_BACKEND_NOT_REGISTERED = FailureClass(
    id="proxy_backend_not_registered", fixed_in_workload=True, title="JAX_PLATFORMS=proxy but the proxy backend is not registered", phase="connect",
    component="JAX client (pathwaysutils)",
    patterns=(
        # the client's image lacks what registers the backend (pathwaysutils): the image is what to fix
        Pattern(r"Backend 'proxy' is not in the list of known backends", 0.97, ("container",), entities=("Pod", "Container", "Image"),
                origin='recording:proxy-not-registered', example="RuntimeError: Backend 'proxy' is not in the list of known backends: ['cpu', 'tpu']."),
    ),
    explanation="The client in {{ pod }} sets JAX_PLATFORMS=proxy but the proxy backend was never registered: pathwaysutils is missing or pathwaysutils.initialize() ran after the first JAX call.",
    explains=("user_code_error",),
    lookalikes=("proxy_unreachable",),
    fixes=(
        Fix("See where the first JAX call happens: the traceback's frames above xla_bridge show the module; a call at import time (a module-level jax.devices()/device_count()) runs before main() can initialise pathwaysutils.", "kubectl logs {{ pod }} -n {{ namespace }} -c {{ container }} --tail=60", "read-only"),
        Fix("Install pathwaysutils in the client image and register the backend before any JAX call: `pip install pathwaysutils`, then `import pathwaysutils; pathwaysutils.initialize()` at the very top of the entry point (before importing modules that touch jax.devices() at import time). 'known backends' without 'proxy' means it was never registered.", None, "low"),
    ),
    names_jobset=True,
    names_images=True,
)

LIBTPU_MISMATCH = FailureClass(
    id="libtpu_mismatch", fixed_in_workload=True, title="libtpu / jaxlib / PJRT plugin incompatible or missing", phase="start",
    component="libtpu / PJRT plugin",
    patterns=(
        Pattern(r"Failed to open libtpu\.so|libtpu\.so: cannot open shared object file", 0.95, ("container",), entities=_PCI,
                check=_not_backend_probe, origin='https://github.com/jax-ml/jax/issues/24987',
                example="RuntimeError: Unable to initialize backend 'tpu': INTERNAL: Failed to open /home/XXXXX/.local/lib/python3.10/site-packages/libtpu/libtpu.so: /home/XXXXX/.local/lib/python3.10/site-packages/libtpu/libtpu.so: cannot open shared object file: No such file or directory (set JAX_PLATFORMS='' to automatically choose an available backend)"),
        Pattern(r"PJRT_Api version mismatch|PJRT C API version mismatch|[Uu]nexpected PJRT_Api size|PJRT plugin.{0,40}(?:incompatible|version)", 0.85, ("container",), entities=_PCI,
                origin='https://github.com/jax-ml/jax/issues/20148',
                example="RuntimeError: Unable to initialize backend 'tpu': INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API version (0.23) and framework PJRT API version 0.40). (set JAX_PLATFORMS='' to automatically choose an available backend)"),
        Pattern(r"cloud_tpu_init failed", 0.9, ("container",), entities=_PCI, check=_not_backend_probe,
                origin='https://github.com/jax-ml/jax/blob/cec06d116c05f0d52adfceee3d3b730fdbcb0ce5/jax/__init__.py', example='cloud_tpu_init failed: {exc!r}\\n This a JAX bug; please report '),
        # the PJRT plugin loader refusing the libtpu.so it was pointed at (TPU_LIBRARY_PATH, a copied library); a missing
        # file is not it: a CPU host's probe logs "cannot open shared object file" and falls back (recording libtpu-missing)
        Pattern(r"Failed to open \S*libtpu[^\s:]*\.so: .{0,200}(?:invalid ELF header|wrong ELF class|undefined symbol|"
                r"file too short)", 0.9, ("container",), entities=_PCI,
                origin="recording:libtpu-invalid",
                example="RuntimeError: Unable to initialize backend 'tpu': INTERNAL: Failed to open "
                        "/tmp/rec-libtpu-custom/libtpu.so: /tmp/rec-libtpu-custom/libtpu.so: invalid ELF header (set "
                        "JAX_PLATFORMS='' to automatically choose an available backend)"),
        # the PJRT loader opened a file named libtpu that is not a PJRT plugin (another library copied or linked in
        # its place): xla/pjrt/pjrt_api.cc returns NotFound("GetPjrtApi not found in ", library_path)
        # the framework refusing a plugin whose PJRT C API is outside the range it supports (an old libtpu, or a newer
        # one than the jaxlib knows)
        Pattern(r"Plugin PJRT API version \S+ is (?:older|newer) than the (?:minimum|maximum) supported version", 0.9,
                ("container",), entities=_PCI, origin="recording:b22-libtpu-old-pjrt",
                example="RuntimeError: Unable to initialize backend 'tpu': INVALID_ARGUMENT: Plugin PJRT API version 0.14 "
                        "is older than the minimum supported version 0.29 (set JAX_PLATFORMS='' to automatically choose an "
                        "available backend)"),
        Pattern(r"GetPjrtApi not found in \S*libtpu", 0.9, ("container",), entities=_PCI,
                origin="https://github.com/openxla/xla/blob/main/xla/pjrt/pjrt_api.cc",
                example="jax.errors.JaxRuntimeError: NOT_FOUND: GetPjrtApi not found in /opt/libtpu/libtpu.so"),
    ),
    explanation="The TPU runtime in {{ container }} on {{ pod }} could not load a compatible libtpu/PJRT plugin ({{ detail }}): the libtpu shipped in {{ image }} does not fit the binary or OS that loads it. A version problem is image-wide, so every host fails the same way.",
    explains=("user_code_error", "tpu_init_failure", "slices_not_ready", "workload_stalled", "colocated_python_failure"),
    lookalikes=("tpu_device_busy", "tpu_init_failure"),
    fixes=(
        Fix("See which images the workers run (a custom or nightly server image is the usual source of a foreign libtpu).",
            "kubectl get pod {{ pod }} -n {{ namespace }} -o jsonpath='{range .spec.initContainers[*]}{.name}={.image}{\"\\n\"}{end}{range .spec.containers[*]}{.name}={.image}{\"\\n\"}{end}'", "read-only"),
        Fix("Confirm the device is not held by another process before chasing versions (a busy device can look like a PJRT mismatch: look for 'Device or resource busy' or a libtpu lockfile earlier in the log).", "kubectl logs {{ pod }} -n {{ namespace }} -c {{ container }} --previous --tail=200", "read-only"),
        Fix("Run the official server image, whose libtpu matches its binary: xpk --server-image={{ official_server_pin }} (the same tag for --proxy-server-image). To run your own libtpu.so, link it at run time with pathwaysutils' PathwaysJobSet.with_custom_libtpu, the supported way since the GA release, rather than copying it into the image or pointing TPU_LIBRARY_PATH at it.", None, "low"),
    ),
    names_images=True,
)

_SIDECAR = (SIDECAR_CONTAINER,)
_PCN = ("Pod", "Container", "Node")

COLOCATED_PYTHON_FAILURE = FailureClass(
    id="colocated_python_failure", fixed_in_workload=True, title="The colocated Python sidecar fails", phase="start/run",
    component="colocated-python-sidecar",
    patterns=(
        # filled from the format string in validators.py (the stored copy is newer than any pinned one, so main)
        Pattern(r"(?:Python|JAX) version mismatch: sidecar image matches", 0.97, ("container",), entities=("Pod", "Container"),
                origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/main/pathwaysutils/experimental/shared_pathways_service/validators.py',
                example="ValueError: JAX version mismatch: sidecar image matches JAX version 0.10.0, but the user environment is running JAX 0.9.0."),
        # filled from the format string in validators.py
        Pattern(r"No (?:tag|Python or JAX versions) found in sidecar image", 0.4, ("container",), entities=("Pod", "Container"),
                origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/main/pathwaysutils/experimental/shared_pathways_service/validators.py',
                example="No Python or JAX versions found in sidecar image tag: latest. Skipping version validation."),
        Pattern(r"jaxlib is version \S+, but this version of jax requires version", 0.92, ("container",), containers=_SIDECAR,
                entities=("Pod", "Container", "Image"),
                origin='https://github.com/jax-ml/jax/blob/510a9167c5ebb921ffb55da76d94f672f388d4fd/jax/lib/__init__.py', example='jaxlib is version {}, but this version of jax requires version {}.'),
        # filled from the format string in faulthandler.c (PUTS "Fatal Python error: " then the handler's name)
        Pattern(r"Fatal Python error: (?P<sig>Segmentation fault|Aborted|Bus error|Floating point exception)", 0.85,
                ("container",), containers=_SIDECAR, entities=_PCN,
                origin='https://github.com/python/cpython/blob/e3bf42548f91c47723f358b593754079883f1d75/Modules/faulthandler.c',
                example="Fatal Python error: Segmentation fault"),
        # rendered: the container's waiting state, reason kubecontainer.ErrCrashLoopBackOff ("CrashLoopBackOff") + the
        # message doBackOff returns ("back-off %s restarting failed container=%s pod=%s"), from kuberuntime_manager.go;
        # filled from the format string in kuberuntime_manager.go
        Pattern(r"container colocated-python-sidecar waiting: reason=CrashLoopBackOff", 0.7, ("object",), entities=_PCN,
                origin='https://github.com/kubernetes/kubernetes/blob/000f26050b9be6fb3d79fae95e06b47fc96128cd/pkg/kubelet/kuberuntime/kuberuntime_manager.go',
                example="container colocated-python-sidecar waiting: reason=CrashLoopBackOff message=back-off 5m0s restarting failed container=colocated-python-sidecar pod=llama-worker-0-0-x7k2p_llama(4c1f6a2e-0d3b-4a8e-9b1e-2f6c7d8e9a01)"),
        # rendered: BackOff (events.BackOffStartContainer) + "Back-off restarting failed container %s in pod %s" from
        # kuberuntime_manager.go; filled from the format string in kuberuntime_manager.go (format.Pod: name_namespace(uid))
        Pattern(r"Back-off restarting failed container colocated-python-sidecar", 0.6, ("event",), entities=_PCN,
                origin='https://github.com/kubernetes/kubernetes/blob/000f26050b9be6fb3d79fae95e06b47fc96128cd/pkg/kubelet/kuberuntime/kuberuntime_manager.go',
                example="BackOff: Back-off restarting failed container colocated-python-sidecar in pod llama-worker-0-0-x7k2p_llama(4c1f6a2e-0d3b-4a8e-9b1e-2f6c7d8e9a01)"),
        Pattern(r"^[A-Za-z_.]*(?:Error|Exception): ", 0.6, ("container",), containers=_SIDECAR, entities=_PCN,
                origin='recording:proxy-not-registered', example="RuntimeError: Backend 'proxy' is not in the list of known backends: ['cpu', 'tpu']."),
        Pattern(r"Traceback \(most recent call last\)", 0.4, ("container",), containers=_SIDECAR, entities=_PCN,
                origin='recording:proxy-not-registered', example='Traceback (most recent call last):'),
    ),
    explanation="The colocated Python sidecar on {{ pod }} failed ({{ detail }}). It runs the client's pickled functions on the TPU host, so its Python, JAX and libraries must match the client's and its native code must not crash; calls to it fail while it is down.",
    explains=("user_code_error", "suspend_resume_failure", "proxy_connection_lost", "checkpoint_failure"),
    lookalikes=("image_pull_failure", "host_oom", "user_code_error"),
    fixes=(
        Fix("Read the sidecar's own log, including the run before the last restart.", "kubectl logs {{ pod }} -n {{ namespace }} -c colocated-python-sidecar --previous --tail=200", "read-only"),
        Fix("{% if client_python and sidecar_python and client_python != sidecar_python %}The sidecar runs Python {{ sidecar_python }} but the client runs Python {{ client_python }}, so the functions the client pickles cannot be loaded there: build the sidecar for python_{{ client_python }} (or move the client to {{ sidecar_python }}). {% endif %}The sidecar stopped on: {{ detail.rstrip('.') }}. Build the sidecar FROM {{ sidecar_image_pin }} (the sidecar build for the client's JAX{% if client_python %} and Python {{ client_python }}{% endif %}) and install extra dependencies with `pip install -c /opt/venv/server_constraints.txt ...` so jax/jaxlib stay pinned; pass it with xpk --colocated-python-sidecar-image=...", None, "low"),
        Fix("For a crash inside your colocated function (a segfault in a native library), reproduce it on the client with the same input shard, and pin or replace the library; a restarted sidecar does not retry the lost call.", None, "low"),
    ),
    facts=(
        FactRule(0.8, raised_in=("colocated_python",), exception=".", note="an error raised from colocated Python frames"),
    ),
    names_images=True,  # the sidecar image is what a version or packaging fault is fixed in
)

PROXY_UNREACHABLE = FailureClass(
    id="proxy_unreachable", fixed_in_workload=True, title="The client cannot reach the IFRT proxy", phase="connect",
    component="JAX client -> pathways-proxy",
    patterns=(
        # The client's first tries, before it gives up: the address it dialled and what the network answered.
        # xla's grpc_client.cc logs each failed try as "Connection to IFRT proxy server attempt #<n>failed: <status>".
        Pattern(r"Connection to IFRT proxy server attempt #\d*", 0.4,
                ("container",), entities=("Pod", "Container"),
                support=True, note="the client's connection attempts to the proxy failed",
                origin="https://github.com/openxla/xla/blob/80c095fc2f5ba8b1e8c8b7df79c0be532416dd69/xla/python/ifrt_proxy/client/grpc_client.cc",
                example='CONN_UPDATE_LOG(absl::StrCat("Connection to IFRT proxy server attempt #", i,'),
        Pattern(r"Unable to establish connection to ifrt_proxy server", 0.95, ("container",), entities=("Pod", "Container"),
                check=_not_cancelled,
                origin='recording:proxy-unreachable', example="jax.errors.JaxRuntimeError: UNAVAILABLE: Unable to establish connection to ifrt_proxy server, please check provided address 'lm8b-pt-r14-pathways-head-0-0.lm8b-pt-r14:29000'"),
        Pattern(r"Unable to initialize backend 'proxy': (?:UNAVAILABLE|DEADLINE_EXCEEDED)", 0.85, ("container",),
                entities=("Pod", "Container"), check=_not_cancelled,
                origin='recording:proxy-unreachable', example="RuntimeError: Unable to initialize backend 'proxy': UNAVAILABLE: Unable to establish connection to ifrt_proxy server"),
    ),
    explanation="The JAX client in {{ pod }} could not connect to the IFRT proxy ({{ detail }}): JAX_BACKEND_TARGET is wrong, DNS does not resolve, the port-forward is down, or the proxy is not serving.",
    explains=("user_code_error",),
    lookalikes=("ifrt_version_mismatch", "proxy_connection_lost"),
    fixes=(
        Fix("Check that the head pod runs and the proxy printed 'IFRT proxy server started with status OK'.",
            "kubectl get pods -n {{ namespace }} | grep {{ jobset }}-pathways-head && kubectl logs {{ head_pod }} -n {{ namespace }} -c pathways-proxy --tail=50", "read-only"),
        Fix("See the address the client was given (a hard-coded IP or an old JobSet name in it is the usual cause).",
            "kubectl get pod {{ head_pod }} -n {{ namespace }} -o jsonpath='{.spec.containers[?(@.name==\"{{ user_container }}\")].env[?(@.name==\"JAX_BACKEND_TARGET\")].value}'", "read-only"),
        Fix("Point the client at the proxy by name, never by IP (the head moves between nodes): in-cluster JAX_BACKEND_TARGET=grpc://{{ jobset }}-pathways-head-0-0.{{ jobset }}:29000, or grpc://$(PATHWAYS_HEAD):29000 as xpk sets it; from outside, run `kubectl port-forward {{ head_pod }} 29000:29000 -n {{ namespace }}` and use grpc://127.0.0.1:29000. PATHWAYS_PROXY_CONNECTION_TIMEOUT_SECS raises the connect timeout.", None, "low"),
    ),
    names_jobset=True,  # the location or address it fails on is set in the JobSet's spec
)

PROXY_CONNECTION_LOST = FailureClass(
    id="proxy_connection_lost", title="An established proxy session ended", phase="run",
    component="pathways-proxy session",
    patterns=(
        Pattern(r"GrpcClientSession: writes no longer allowed", 0.85, ("container",), entities=("Pod", "Container"),
                origin='https://github.com/openxla/xla/blob/main/xla/python/ifrt_proxy/client/grpc_client_session.cc', example='GrpcClientSession: writes no longer allowed.'),
        Pattern(r"Connection to IFRT proxy server was terminated: CANCELLED", 0.85, ("container",), entities=("Pod", "Container"),
                origin='https://docs.cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/troubleshooting-pathways',
                example="E0927 21:19:52.919607 37624 rpc_helper.cc:56] Connection to IFRT proxy server was terminated: CANCELLED: Cancelled"),
        Pattern(r"Connection to IFRT proxy server was terminated", 0.6, ("container",), entities=("Pod", "Container"),
                origin='https://github.com/openxla/xla/blob/863ba3c374ecb79d597e6ca71720e4edc0c5995b/xla/python/ifrt_proxy/client/rpc_helper.cc', example='<< "Connection to IFRT proxy server was terminated: " << r.status();'),
    ),
    explanation="The client's session with the IFRT proxy of {{ jobset }} ended ({{ detail }}). A Pathways cluster serves one client at a time: CANCELLED means another client (a notebook, a port-forward) took the session; 'writes no longer allowed' means the proxy dropped it, and no proxy restart, OOM kill or head-pod loss in the data explains why.",
    explains=("user_code_error",),
    lookalikes=("host_oom", "head_pod_evicted"),
    fixes=(
        Fix("See whether the proxy restarted and why.", "kubectl get pod {{ head_pod }} -n {{ namespace }} -o jsonpath='{range .status.initContainerStatuses[*]}{.name} restarts={.restartCount} last={.lastState.terminated.reason}{\"\\n\"}{end}'", "read-only"),
        Fix("Rule out a deeper cause on the head's node (a kernel OOM kill or a kubelet restart of pathways-proxy) before calling it a bare drop.",
            "gcloud logging read 'resource.type=\"k8s_node\" resource.labels.node_name=\"{{ node }}\" (log_id(\"kubelet\") OR log_id(\"node-problem-detector\") OR log_id(\"events\")) (\"OOM\" OR \"pathways-proxy\")' --project={{ project }} --freshness=1d --limit=50", "read-only"),
        Fix("Find who else connected: port-forwards to the head show up in the Kubernetes audit log.",
            "gcloud logging read 'log_id(\"cloudaudit.googleapis.com/activity\") resource.type=\"k8s_cluster\" protoPayload.methodName:\"pods.portforward\" protoPayload.resourceName:\"{{ jobset }}-pathways-head\"' --project={{ project }} --freshness=1d --format='value(timestamp,protoPayload.authenticationInfo.principalEmail)'", "read-only"),
        Fix("Only one client may hold a Pathways session: disconnect the other client, then restart your client or notebook kernel (after an unexpected drop, recreate the JobSet if the proxy keeps refusing); for several users use Shared Pathways Service, which gives each client its own proxy.", None, "low"),
    ),
)

FAMILY = (IMAGE_PULL_FAILURE, IFRT_VERSION_MISMATCH, PROXY_BACKEND_NOT_REGISTERED, LIBTPU_MISMATCH,
          COLOCATED_PYTHON_FAILURE, PROXY_UNREACHABLE, PROXY_CONNECTION_LOST)
