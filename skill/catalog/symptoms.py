"""Symptoms (evidence that something failed, not why) and the milestones of a healthy start-up."""

from __future__ import annotations

import re

from .types import Milestone, Pattern, Symptom

_ANY = ("container", "node", "event", "serial", "object")

# A container line logged at one of these severities is fatal, whether or not it still carries a glog F prefix.
FATAL_SEVERITIES = ("CRITICAL", "ALERT", "EMERGENCY")
# The last line of a Python traceback: an exception class (dotted, ending in Error or Exception, or one of the standard
# library's lower-case ones: zlib.error, socket.timeout, socket.gaierror) at the start of the line, then its message.
# ... or a class of a library's `exceptions` module whose name says the status instead (google-api-core's
# google.api_core.exceptions.Forbidden, NotFound, TooManyRequests ...).
EXCEPTION_LINE = (r"^(?:(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)|(?:[a-z_]\w*\.)+(?:error|timeout|herror|gaierror)"
                  r"|(?:[a-z_]\w*\.)*exceptions\.[A-Z]\w*)(?::|$)")
# CPython 3.11+ prints column markers under a traceback's source line (PEP 657): a line of ^ and ~ only, saying nothing
COLUMN_MARKERS = r"^\s*[\^~]+\s*$"

SYMPTOMS = (
    Symptom("jobset_failed", "the JobSet failed", (
        # rendered: FailedJobs + FailedJobsMessage from pkg/controllers/failure_policy.go (pkg/constants/constants.go)
        # filled from the format string in failure_policy.go (messageWithFirstFailedJob: "%s (first failed job: %s)")
        Pattern(r"JobSet condition Failed=True", 1.0, ("object",), entities=("JobSet",),
                origin='https://github.com/kubernetes-sigs/jobset/blob/08dfbdfd682714a9ab929633eca8dc95315187e7/pkg/controllers/failure_policy.go',
                example='JobSet condition Failed=True reason=FailedJobs: jobset failed due to one or more job failures (first failed job: train-pathways-worker-0)'),
        # rendered: ReachedMaxRestarts + ReachedMaxRestartsMessage from pkg/controllers/failure_policy.go (the condition's event)
        # filled from the format string in failure_policy.go (messageWithFirstFailedJob)
        Pattern(r"^(?:ReachedMaxRestarts|FailedJobs|FailJobSetFailurePolicyAction): ", 1.0, ("event",), entities=("JobSet",),
                origin='https://github.com/kubernetes-sigs/jobset/blob/08dfbdfd682714a9ab929633eca8dc95315187e7/pkg/controllers/failure_policy.go',
                example='ReachedMaxRestarts: jobset failed due to reaching max number of restarts (first failed job: train-pathways-worker-0)'),
        Pattern(r"jobset failed due to", 1.0, ("event", "object"), entities=("JobSet",),
                origin='https://github.com/kubernetes-sigs/jobset/blob/08dfbdfd682714a9ab929633eca8dc95315187e7/pkg/constants/constants.go',
                example='jobset failed due to reaching max number of restarts'),
    )),
    Symptom("jobset_restarting", "the JobSet restarted", (
        Pattern(r"^RestartJobSet\w*FailurePolicyAction: |applying RestartJobSet", 0.8, ("event",), entities=("JobSet",),
                origin='https://github.com/kubernetes-sigs/jobset/blob/08dfbdfd682714a9ab929633eca8dc95315187e7/pkg/constants/constants.go',
                example='applying RestartJobSet failure policy action'),
        # rendered: DefaultFailurePolicy + RestartJobSetActionMessage from pkg/controllers/failure_policy.go
        # filled from the format string in failure_policy.go (messageWithFirstFailedJob)
        Pattern(r"JobSet condition Restarting=True|JobSet condition RestartingJobSet=True", 0.8, ("object",), entities=("JobSet",),
                origin='https://github.com/kubernetes-sigs/jobset/blob/08dfbdfd682714a9ab929633eca8dc95315187e7/pkg/controllers/failure_policy.go',
                example='JobSet condition RestartingJobSet=True reason=DefaultFailurePolicy: applying RestartJobSet failure policy action (first failed job: train-pathways-worker-0)'),
    )),
    Symptom("job_failed", "a child Job failed", (
        # rendered: BackoffLimitExceeded + "Job has reached the specified backoff limit" from kubernetes/kubernetes#92245
        Pattern(r"^BackoffLimitExceeded: |Job has reached the specified backoff limit", 0.9, ("event", "object"),
                origin='https://github.com/kubernetes/kubernetes/issues/92245',
                example='BackoffLimitExceeded: Job has reached the specified backoff limit'),
    )),
    Symptom("container_failed", "a container exited with an error", (
        # rendered: Last State Terminated, Reason Error, Exit Code 137, Restart Count 1 from kubernetes/kubernetes#122256
        Pattern(r"terminated: reason=\w+ exitCode=[1-9]\d*", 0.8, ("object",), entities=("Pod", "Container", "Node"),
                origin='https://github.com/kubernetes/kubernetes/issues/122256',
                example='container wk64c terminated: reason=Error exitCode=137 restartCount=1'),
    )),
    Symptom("crashloop", "a container is crash-looping", (
        Pattern(r"waiting: reason=CrashLoopBackOff|Back-off restarting failed container", 0.7, ("object", "event"),
                origin='https://github.com/kubernetes/kubernetes/issues/93826',
                example='Back-off restarting failed container'),
    )),
    Symptom("unschedulable", "pods cannot be scheduled", (
        # rendered: FailedScheduling + "0/3 nodes are available: 3 Insufficient memory." from gke-workload-troubleshooting/SKILL.md
        Pattern(r"^FailedScheduling: |PodScheduled=False", 0.5, ("event", "object"), transient=True,
                origin='https://github.com/google/skills/blob/1af77752950126ae12dec176a0a3b27a16b7f5f7/plugins/cloud/google-cloud-gke/skills/gke-workload-troubleshooting/SKILL.md',
                example='FailedScheduling: 0/3 nodes are available: 3 Insufficient memory.'),
    )),
    Symptom("heartbeat_timeout", "workers or the client timed out waiting for peers", (
        Pattern(r"(?i)heartbeat.{0,60}(?:time[ds]? ?out|timeout|missed|deadline|failed|lost)", 0.5,
                origin='https://github.com/jax-ml/jax/issues/23599',
                example='UNAVAILABLE: Task /job:jax_worker/replica:0/task:0 heartbeat timeout. This indicates that the remote task has failed, got preempted, or crashed unexpectedly.'),
        Pattern(r"DEADLINE_EXCEEDED", 0.4,
                origin='recording:coordinator-unreachable',
                example='`, to be sure to see all the previous output. absl::Status: DEADLINE_EXCEEDED: Deadline Exceeded'),
    )),
    Symptom("data_loss", "the client lost a slice (DATA_LOSS)", (
        Pattern(r"DATA_LOSS", 0.5,
                origin='recording:orbax-corrupt-manifest',
                example='ValueError: DATA_LOSS: Error opening "cast" driver: Error ope'),
        Pattern(r"Elastic event detected", 0.5,
                origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/8950a34f5e4ad7a7798453efa49856013c07e96e/pathwaysutils/elastic/manager.py',
                example='Elastic event detected'),
    )),
    Symptom("error_line", "an error line", (
        Pattern(r"^[EF]\d{4} \d\d:\d\d:\d\d", 0.1, ("container",),
                origin='recording:coordinator-unreachable',
                example='F1205 11:09:02.553077    7882 client.h:80] Terminating proce'),
        Pattern(r"(?i)\b(?:fatal|panic|segmentation fault|core dumped|aborted|check failed|exception)\b", 0.1, ("container",),
                origin='recording:coordinator-unreachable',
                example='nating process because the JAX distributed service detected fatal errors. This most likely indicates that'),
        Pattern(r"^(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception)(?::|$)", 0.1, ("container",),
                origin='recording:orbax-corrupt-manifest',
                example='ValueError: DATA_LOSS: Error opening "cast" driver: Error op'),
        # a class of a library's `exceptions` module named for the status it stands for (google-api-core)
        Pattern(r"^(?:[a-z_]\w*\.)*exceptions\.[A-Z]\w*(?::|$)", 0.1, ("container",),
                origin="https://github.com/googleapis/python-api-core/blob/main/google/api_core/exceptions.py",
                example="google.api_core.exceptions.Forbidden: 403 POST https://storage.googleapis.com/upload/storage/"
                        "v1/b/orchard-tb/o?uploadType=resumable: Permission 'storage.objects.create' denied"),
        # the standard library's lower-case exception classes (zlib.error, socket.timeout, socket.gaierror)
        Pattern(r"^(?:[a-z_]\w*\.)+(?:error|timeout|herror|gaierror):", 0.1, ("container",),
                origin='https://github.com/jcgregorio/httplib2/issues/317',
                example='zlib.error: Error -3 while decompressing data: incorrect header check'),
        # glibc's heap-consistency checks abort the process with one line of their own (malloc_printerr in
        # malloc/malloc.c), just before the signal page: the process's last words
        Pattern(r"^(?:free|malloc|realloc|double free or corruption|corrupted size vs\. prev_size)\b.{0,40}"
                r"(?:\(\))?: ?(?:double free|invalid|corrupted|unaligned|memory corruption)", 0.1, ("container",),
                origin="https://github.com/bminor/glibc/blob/master/malloc/malloc.c",
                example="free(): double free detected in tcache 2"),
        # filled from the format string in absl/debugging/failure_signal_handler.cc ("*** %s received at time=%ld%s ***")
        Pattern(r"^\*\*\* SIG[A-Z]+ received at time=\d+", 0.1, ("container",),
                origin='https://github.com/abseil/abseil-cpp/blob/926f1d05a4f85663e4ca057f70f1a7f0a7d6b762/absl/debugging/failure_signal_handler.cc',
                example='*** SIGSEGV received at time=1733396522 on cpu 4 ***'),  # absl failure signal handler
        # libtpu's crash handler, as a process that loaded libtpu prints it when a signal kills it (with the faulting
        # address for SIGSEGV, without it for SIGABRT: recordings crash-sigsegv and crash-sigabrt)
        Pattern(r"^\*\*\* SIG[A-Z]+ (?:\(@0x[0-9a-f]+\).{0,80} )?received by PID \d+", 0.1, ("container",),
                origin="recording:crash-sigsegv",
                example="*** SIGSEGV (@0xfffe00000afc), si_code=0, see go/stacktraces#s15 received by PID 2812 (TID 2812) "
                        "on cpu 4; stack trace: ***"),
        Pattern(r"^PC: @\s+0x[0-9a-f]+", 0.1, ("container",),
                origin='recording:crash-sigabrt',
                example='PC: @     0x7eb5c085a267  (unknown)  kill'),  # ... and the frame it stopped in
    ), failure=False, severities=FATAL_SEVERITIES),
    # A program's own account of its death, read from its logs alone (issue 36): what a process prints as it aborts.
    # Live without the Kubernetes API, and an export made before the Pod's terminated status was, see only these.
    # (An uncaught Python exception ends a program too: skill.understanding.death reads it from the stream, since
    # the same exception line printed by a handler that goes on is no death.)
    Symptom("program_died", "a program ended on a fatal error (its own last words)", (
        # glog/absl LOG(FATAL) and CHECK failures abort the process after printing the F line
        Pattern(r"^F\d{4} \d\d:\d\d:\d\d", 0.8, ("container",), entities=("Pod", "Container"),
                origin='recording:coordinator-unreachable',
                example='F1205 11:09:02.553077    7882 client.h:80] Terminating process because the JAX distributed '
                        'service detected fatal errors.'),
        # ... and the stack trace absl prints after a fatal message, before abort()
        Pattern(r"^\*\*\* Check failure stack trace: \*\*\*", 0.8, ("container",), entities=("Pod", "Container"),
                origin='recording:b20-coordinator-dns', example='*** Check failure stack trace: ***'),
        # CPython's fatal_error() (Python/pylifecycle.c), e.g. from faulthandler on a signal
        Pattern(r"^Fatal Python error: ", 0.8, ("container",), entities=("Pod", "Container"),
                origin='recording:b22-sidecar-segv', example='Fatal Python error: Segmentation fault'),
        # the failure-signal handlers' page: absl's and libtpu's (the process dies of the signal after it)
        Pattern(r"^\*\*\* SIG[A-Z]+ received at time=\d+", 0.8, ("container",), entities=("Pod", "Container"),
                origin='https://github.com/abseil/abseil-cpp/blob/926f1d05a4f85663e4ca057f70f1a7f0a7d6b762/absl/debugging/failure_signal_handler.cc',
                example='*** SIGSEGV received at time=1733396522 on cpu 4 ***'),
        Pattern(r"^\*\*\* SIG[A-Z]+ (?:\(@0x[0-9a-f]+\).{0,80} )?received by PID \d+", 0.8,
                ("container",), entities=("Pod", "Container"), origin="recording:crash-sigsegv",
                example="*** SIGSEGV (@0xfffe00000afc), si_code=0, see go/stacktraces#s15 received by PID 2812 (TID "
                        "2812) on cpu 4; stack trace: ***"),
        # The final line of an uncaught Python traceback (CPython's traceback.format_exception_only: "<type>: <value>"
        # at the start of the line). It is death only where the stream shows it: the program printed no progress
        # after it and its output ends with it, so the matcher never reads this pattern alone (no source);
        # skill.understanding.death applies it to the streams.
        # The kernel's OOM killer ending a process of the workload (mm/oom_kill.c prints "Killed process <pid>
        # (<comm>)", comm being the binary's name cut to 15 characters): a Pathways server (the images' binaries
        # server and proxy_server, in any build's name pathways_*), or the JAX client's or sidecar's python on a node
        # of the JobSet. The process's death whether or not the export ties the node to a pod (issue 41), so the
        # matcher never reads this pattern alone (no source): skill.understanding.death applies it to the kill lines.
        Pattern(r"(?:Memory cgroup out of memory|Out of memory): Kill(?:ed)? process \d+ \((?P<comm>[^)]+)\)", 0.8, (),
                entities=("Node",), id="killed",
                origin="https://github.com/docker/for-linux/issues/1001",
                example="Memory cgroup out of memory: Killed process 15617 (python3) total-vm:11892kB, anon-rss:4292kB"),
        Pattern(EXCEPTION_LINE, 0.8, (), entities=("Pod", "Container"), id="uncaught",
                origin='recording:b26-upload-error-then-eval-shape',
                example="TypeError: dot_general requires contracting dimensions to have the same shape, got (768,) "
                        "and (512,)."),
    )),
    Symptom("pod_killed", "a pod was killed or terminated", (
        Pattern(r"^Killing: |NodeShutdown|Pod was rejected as the node is shutting down", 0.4, ("event", "object"),
                origin='https://github.com/kubernetes/kubernetes/blob/9d26641844bb569950a7b02b2a141c6b184a96fc/pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go',
                example='Pod was rejected as the node is shutting down.'),
    ), failure=False),
)

MILESTONES = (
    Milestone("rm_serving", "resource manager serving",
              Pattern(r"Pathways Server serving on \S+:(?P<port>\d+)", 1.0, containers=("pathways-rm",),
                      origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/8950a34f5e4ad7a7798453efa49856013c07e96e/pathwaysutils/experimental/shared_pathways_service/README.md',
                      example='Pathways Server serving on [::]:29005')),
    Milestone("slices_ready", "slices ready",
              Pattern(r"\*\*\* (?P<ready>\d+)/(?P<total>\d+) Pathways Slices Now Ready \*\*\*", 1.0, containers=("pathways-rm",),
                      origin='https://docs.cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/troubleshooting-pathways',
                      example='multi_job_allocator.cc:1063] *** 2/2 Pathways Slices Now Ready ***')),
    Milestone("proxy_started", "IFRT proxy started",
              Pattern(r"IFRT proxy server started with status OK", 1.0, containers=("pathways-proxy",),
                      origin='https://docs.cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/troubleshooting-pathways',
                      example='IFRT proxy server started with status OK')),
    Milestone("worker_serving", "worker serving",
              Pattern(r"Pathways Server serving on \S+:(?P<port>\d+)", 1.0, containers=("pathways-worker",),
                      origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/8950a34f5e4ad7a7798453efa49856013c07e96e/pathwaysutils/experimental/shared_pathways_service/README.md',
                      example='Pathways Server serving on [::]:29005')),
    Milestone("megascale_init", "MegaScale transport initialised",
              Pattern(r"MegaScale transport init(?:ialized| succeeded)", 1.0, containers=("pathways-worker",),
                      origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/8950a34f5e4ad7a7798453efa49856013c07e96e/pathwaysutils/experimental/shared_pathways_service/README.md',
                      example='MegaScale transport init succeeded.')),
    Milestone("worker_rm_address", "worker's resource manager address",
              Pattern(r"--resource_manager_address=(?P<addr>[^'\"\s]+)", 1.0, containers=("pathways-worker",),
                      origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/8950a34f5e4ad7a7798453efa49856013c07e96e/pathwaysutils/experimental/shared_pathways_service/README.md',
                      example="argv[2]: '--resource_manager_address=pathways-cluster-pathways-head-0-0.pathways-cluster:29001'")),
    Milestone("rm_instance_count", "resource manager's expected slice count",
              Pattern(r"--instance_count=(?P<count>\d+)", 1.0, containers=("pathways-rm",),
                      origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/8950a34f5e4ad7a7798453efa49856013c07e96e/pathwaysutils/test/experimental/gke/testdata/model_lite_tpuv5e_4x8.yaml',
                      example='- --instance_count=2')),
    Milestone("scratch_location", "the Pathways GCS scratch location a server was started with",
              Pattern(r"--gcs_scratch_location=(?P<bucket>gs://[^'\"\s]+)", 1.0,
                      containers=("pathways-rm", "pathways-proxy", "pathways-worker"),
                      origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/8950a34f5e4ad7a7798453efa49856013c07e96e/pathwaysutils/test/experimental/gke/testdata/model_lite_tpuv5e_4x8.yaml',
                      example='- --gcs_scratch_location=gs://fake-bucket/scratch')),
    # The Python a container's process reports at start-up (a banner, or a sidecar's "serving ... (Python 3.12.7, ...)").
    Milestone("python_version", "the Python version a container runs",
              Pattern(r"\bPython (?P<version>3\.\d{1,2})\.\d{1,3}\b", 1.0,
                      origin='https://github.com/jax-ml/jax/issues/12550',
                      example='Python 3.10.6 | packaged by conda-forge | (main, Aug 22 2022, 20:35:26) [GCC 10.4.0] on linux')),
    # The JAX version the client reports (MaxText's "System Information: Jax Version: 0.10.2", a "jax==0.10.2" pin, and
    # the common start-up print f"JAX {jax.__version__} ..." -- the version after a space -- as the programs
    # of the TPU recordings print it: "JAX 0.10.2, devices [TpuDevice(id=0, ...)]", recording b20-crash-sigbus).
    Milestone("client_jax", "the JAX version the client reports",
              # filled from the format string in jax/_src/environment_info.py ("jax:    {version.__version__}")
              Pattern(r"(?i)\bjax(?:(?:\s+version)?\s*(?:==|:|=)\s*|\s+v?)(?P<version>\d+\.\d+(?:\.\d+)*)\b", 1.0,
                      user_only=True,
                      origin='https://github.com/jax-ml/jax/blob/cec06d116c05f0d52adfceee3d3b730fdbcb0ce5/jax/_src/environment_info.py',
                      example='jax:    0.10.2')),
    Milestone("client_backend", "client detected the Pathways backend",
              Pattern(r"Detected Pathways-on-Cloud backend", 1.0, user_only=True,
                      origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/8950a34f5e4ad7a7798453efa49856013c07e96e/pathwaysutils/_initialize.py',
                      example='Detected Pathways-on-Cloud backend. Applying changes.')),
    # The Pathways executor's periodic report on a worker: the program is running on the TPUs even when the client
    # prints no step lines (used only to tell a fault that resolved from one that stopped the run).
    Milestone("worker_launches", "worker reported completed program launches",
              Pattern(r"Completed \d+ program launches since last report", 1.0, containers=("pathways-worker",))),
    # A component that says it is still waiting (for slices, workers, peers, a barrier): repeated, evidence of a stall
    # in its own right, before the absence of a milestone can be judged (Absence.waiting).
    # JAX's own report of a persistent-cache hit (logged with JAX_LOG_COMPILES / the jax._src.compiler logger):
    # which function's executable came from the cache, the one a wrong cached executable would break.
    Milestone("cache_hit", "a persistent compilation cache hit",
              Pattern(r"Persistent compilation cache hit for '(?P<fn>[^']+)'", 1.0,
                      origin='recording:b21-cache-swap',
                      example="Persistent compilation cache hit for 'jit_train_step' with key 'jit_train_step-6227219cab208f7b89e436f883e2a782040df2d1a47969f78716f7897ccf1a65'")),
    Milestone("waiting", "a component waits for slices, workers, peers or a barrier",
              # filled from the format string in pathwaysutils/elastic/elastic.py ("Waiting for %s slices. Poll interval: %s, Timeout: %s")
              Pattern(r"(?i)\b(?:still )?waiting (?:for|on)\b.{0,120}?\b(?:slices?|workers?|devices?|backend|barrier|"
                      r"peers?|tasks?|TPUs?|hosts?|resource manager|servers?)\b", 1.0,
                      origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/8950a34f5e4ad7a7798453efa49856013c07e96e/pathwaysutils/elastic/elastic.py',
                      example='Waiting for 2 slices. Poll interval: 10, Timeout: 600')),
    Milestone("progress", "training progress",
              Pattern(r"(?i)\bstep\b[\s:=#]*(?P<step>\d+)", 1.0, user_only=True,
                      origin='recording:healthy-train',
                      example='step 0 loss 1.152680')),
    # nanoGPT's training loop and the many loops written after it count iterations, not steps
    # (print(f"iter {iter_num}: loss {lossf:.4f}, time {dt*1000:.2f}ms, mfu {running_mfu*100:.2f}%"))
    Milestone("progress", "training progress",
              Pattern(r"(?i)\biter(?:ation)?\b[\s:=#]*(?P<step>\d+)\s*[:,|]?\s*(?:train[_ ])?loss\b", 1.0, user_only=True,
                      origin='https://github.com/karpathy/nanoGPT/blob/e2221318e607eb5ee0669d6b7641af25a2111545/train.py',
                      example='iter 1200: loss 2.3105, time 35.21ms, mfu 41.20%')),
)
# The progress lines as one filter regex (read as a capped sample), without the milestones' group names.
PROGRESS_RX = "(?i)" + "|".join(re.sub(r"\(\?P<\w+>", "(", m.pattern.regex.removeprefix("(?i)"))
                                for m in MILESTONES if m.id == "progress")
