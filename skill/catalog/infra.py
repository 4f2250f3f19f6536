"""Infrastructure: TPU chips and hosts, kernels, nodes, Spot preemption, maintenance and the head pod's node."""

from __future__ import annotations

from .types import FailureClass, Fix, Pattern

_RUNTIME_SYMPTOMS = ("megascale_hang", "proxy_connection_lost", "workload_stalled", "tpu_device_busy", "slices_not_ready",
                     "user_code_error", "elastic_recovery_exhausted", "tpu_init_failure", "suspend_resume_failure",
                     "hot_swap_failure", "unknown_failure")
_CORDON = (
    Fix("Look at the node and what ran on it.", "kubectl describe node {{ node }}", "read-only"),
    Fix("Take the faulty host out of scheduling so the restarted slice lands elsewhere.", "kubectl cordon {{ node }}", "high"),
    Fix("Move the remaining pods off it; GKE auto-repair (or deleting the VM) replaces it. If the same physical host keeps failing, report it as a faulty host.",
        "kubectl drain {{ node }} --ignore-daemonsets --delete-emptydir-data", "high"),
)

TPU_HARDWARE_FAILURE = FailureClass(
    id="tpu_hardware_failure", machine_fault=True, title="A TPU chip, host or ICI link is faulty", phase="run", component="TPU host / chip",
    patterns=(
        Pattern(r"observed errors are: \[(?:Hardware|Network|Power)\]", 0.95,
                origin='https://github.com/openxla/xla/blob/2c8839d0683e3d12b4fe7665d2ca3606c9ba6747/docs/errors/error_0200.md',
                example='observed errors are: [Hardware]'),
        # libtpu's fatal error on a core, naming the chip's physical location: "likely ... bad TPU hardware" when it
        # repeats on the same machine (the maxtest guide's reading).
        Pattern(r"A program or fatal error occurred, all pending programs will fail, and results may be corrupted", 0.85,
                origin='https://github.com/AI-Hypercomputer/maxtext/blob/8de505910a150014e9ab4427fb15de118f2bf230/benchmarks/maxtest/getting_started.md',
                example='6x2x0_SC1: *** A program or fatal error occurred, all pending programs will fail, and results may be corrupted. This is likely an XLA compiler bug or your job hit a bad TPU hardware. If you suspect a compiler bug please file a bug to xla-tpu@ and CC tfrt-devs@. If the error is repeatedly happening on the same machine and you suspect faulty hardware, consider reporting a bad machine. Physical location: tpu3:pe2:2'),
        # libtpu's driver and error handler on a chip that took a fatal error, and the program continuator failing
        # what was pending on it (marin's multi-slice v4-64 run; the shared reference's class 30).
        Pattern(r"!!!! FATAL ERROR !!!!", 0.9,
                origin='https://github.com/marin-community/marin/issues/1534',
                example='E0827 23:43:41.200122   39475 synchronous_driver.cc:820] [/dev/accel0 tpu1013:pe1:0] !!!! FATAL ERROR !!!! for [/dev/accel0 tpu1013:pe1:0] , fatal_error: true, running_timer: 0xeacdbdd045e77'),
        Pattern(r"Received Error Interrupt! fatal: true", 0.9,
                origin='https://github.com/marin-community/marin/issues/1534',
                example='E0827 23:43:41.200136   39689 error_handler.cc:100] Received Error Interrupt! fatal: true, running_timer: 0xeacdaccd3b4ec'),
        Pattern(r"Unknown error has occurred, all pending programs will fail, and results may be corrupted", 0.85,
                origin='https://github.com/marin-community/marin/issues/1534',
                example='E0827 23:43:41.200512   39676 fake_program_continuator.cc:556] 1x0x2_BC1: *** [Physical location: tpu1013:pe1:3] A Unknown error has occurred, all pending programs will fail, and results may be corrupted. An unknown error has occurred, contact your next level of support.'),
        Pattern(r"Megascale detects a hang that is likely caused by bad TPU chips", 0.9,
                origin='https://github.com/AI-Hypercomputer/maxtext/blob/4c5a710f76c680dee758c03dc98ea8c35cbd9791/docs/guides/megascale_hang_playbook.md',
                example='Megascale detects a hang that is likely caused by bad TPU chips on the following hosts. Please remove the hosts from the fleet and restart the workload. If problem persists please contact Megascale XLA team.'),
        Pattern(r"Potential cause: Bad TPU chips", 0.9,
                origin='https://github.com/AI-Hypercomputer/maxtext/blob/4c5a710f76c680dee758c03dc98ea8c35cbd9791/docs/guides/megascale_hang_playbook.md',
                example='  Potential cause: Bad TPU chips'),
        # The TPU device plugin / DRA driver reporting chips it will no longer hand out.
        Pattern(r"(?i)no healthy (?:tpu )?devices|\btpu (?:chip|device)s? .{0,60}\b(?:marked|reported|is|are) unhealthy",
                0.8, ("container", "node", "event"),
                origin='https://github.com/trueforge-org/truecharts/issues/19201',
                example='Allocate failed due to no healthy devices present; cannot allocate unhealthy devices amd.com/gpu, which is unexpected'),
        # A TPU or chip marked unhealthy by its host, either word order ("Marking TPU1 unhealthy", "Chip marked
        # unhealthy"; never a count such as "unhealthy=0"): Cloud TPU health monitoring's
        # UNHEALTHY status is a physical fault (BAD_TPU_CHIP), not the program's.
        Pattern(r"(?i)\bmark(?:s|ed|ing)?\s+(?:tpu|chip)[\w/()-]*\s+(?:as\s+)?unhealthy\b|\b(?:tpu|chip)[\w/()-]*\s+(?:is\s+|was\s+)?marked\s+(?:as\s+)?unhealthy\b"
                r"|\bassigns?\s+an?\s+unhealthy\s+status\s+to\s+an?\s+tpu\b",
                0.8,
                ("container", "node", "event"),
                origin='https://docs.cloud.google.com/tpu/docs/troubleshooting/tpu-health',
                example='When TPU health monitoring assigns an UNHEALTHY status to a TPU, it provides identifying information of the failing TPU'),
        # kubelet's device manager changing the node's allocatable google.com/tpu: with NodeNotSchedulable, gcpdiag's
        # signature of an unallocatable TPU. kubelet also logs it when a node first registers its chips, so it only
        # supports a chip fault named elsewhere.
        Pattern(r"\"Updated allocatable\" device=\"google\.com/tpu\"", 0.4, ("node", "event"), entities=("Node",), support=True,
                note="kubelet withdrew TPU chips from the node's allocatable google.com/tpu",
                origin='https://github.com/GoogleCloudPlatform/gcpdiag/blob/06ec8584ec5919df53a4e6841ad2ad74a5f045b2/gcpdiag/runbook/gke/node_auto_repair.py',
                example="  # - '\"Updated allocatable\" device=\"google.com/tpu\"' for unallocatable TPU"),
        # The coordinator's session master: the slice-failure kind that names a chip, and the worker and chips that
        # reported it (the two lines of one event, in the maxtest guide).
        Pattern(r"Detected failure SLICE_FAILURE_(?:CHIP|HBM|ICI|TPU|HOST_HARDWARE)\w*|TPU session error .{0,160}reporting TPU chip locations are",
                0.9, origin='https://github.com/AI-Hypercomputer/maxtext/blob/8de505910a150014e9ab4427fb15de118f2bf230/benchmarks/maxtest/getting_started.md',
                example='E0511 18:18:50.796852     915 tpunetd_client.cc:311] Detected failure SLICE_FAILURE_CHIP_DRIVER_ERROR in session e6c885828b538167; Start failure handling'),
        # An uncorrectable ECC error is a memory fault of the device itself, whatever the accelerator: "This usually
        # means a hardware error ... If it occurs in every run, it is likely that your hardware is broken" (vLLM's
        # maintainer); NVIDIA's and the TPU health page's readings agree (a BAD_TPU_CHIP is a physical fault).
        Pattern(r"(?i)\buncorrectable\b[^\n]{0,40}\bECC\b|\bECC\b[^\n]{0,40}\buncorrectable\b", 0.85,
                origin='https://github.com/vllm-project/vllm/issues/5222',
                example='RuntimeError: CUDA error: uncorrectable ECC error encountered'),
        Pattern(r"Accelerator device halted prematurely", 0.5,
                origin='https://github.com/openxla/xla/blob/2c8839d0683e3d12b4fe7665d2ca3606c9ba6747/docs/errors/error_0200.md',
                example='INTERNAL: Accelerator device halted prematurely, perhaps due to an on-device check-failure. Node 0 halted unexpectedly at tag:pc TensorCoreSequencer:1:0x1d9 ...'),
    ),
    explanation="A TPU chip on {{ node }} ({{ pod }}) reported a fatal hardware error ({{ detail }}); {% if timed_out and restarted %}the other hosts' timeouts and the restarts follow from it{% elif timed_out %}the other hosts' timeouts and what failed after it follow from it{% elif restarted %}the restarts follow from it{% else %}what failed after it follows from it{% endif %}.",
    # a withdrawn chip leaves its node short of google.com/tpu, so the restarted worker cannot be placed there again
    explains=_RUNTIME_SYMPTOMS + ("node_lost", "tpu_init_failure", "host_oom", "xla_compile_error", "hbm_oom",
                                  "tpu_capacity_unavailable"),
    lookalikes=("megascale_hang", "tpu_init_failure"),
    fixes=_CORDON + (
        Fix("Let the job survive the next bad host: resubmit with restarts allowed (spec.failurePolicy.maxRestarts, xpk --max-restarts=3) or elastic slices (--elastic-slices=1 --max-slice-restarts=2).", None, "low"),
    ),
    leans_on=("serial_console",),
)

NODE_KERNEL_ERROR = FailureClass(
    id="node_kernel_error", machine_fault=True, title="The node's kernel reports a fault", phase="run", component="node kernel",
    patterns=(
        # node-problem-detector kernel-monitor event reasons (temporary problems and permanent conditions).
        # rendered: KernelOops + the kernel line its rule matched (node-problem-detector's event message) from config/kernel-monitor.json
        Pattern(r"^(?:KernelOops|TaskHung|Ext4Error|IOError|CperHardwareErrorFatal|CperHardwareErrorRecoverable|XfsShutdown|KernelDeadlock|DockerHung|MemoryReadError|UnregisterNetDevice): ",
                0.9, ("event",), entities=("Node",),
                origin='https://github.com/kubernetes/node-problem-detector/blob/6632ca67148f7a23df9cdbd98d9e89b388561a3a/config/kernel-monitor.json',
                example='KernelOops: BUG: unable to handle kernel NULL pointer dereference at 0000000000000078'),
        # A read-only root or data filesystem breaks every later write and container creation on the node.
        # rendered: FilesystemIsReadOnly (config/readonly-monitor.json) + the condition-change message from pkg/util/helpers.go
        # filled from the format string in pkg/util/helpers.go ("Node condition %s is now: %s, reason: %s, message: %q")
        Pattern(r"^(?:ReadonlyFilesystem|FilesystemIsReadOnly): |Node condition ReadonlyFilesystem is now: True", 0.9,
                ("event",), entities=("Node",),
                origin='https://github.com/kubernetes/node-problem-detector/blob/6632ca67148f7a23df9cdbd98d9e89b388561a3a/pkg/util/helpers.go',
                example='FilesystemIsReadOnly: Node condition ReadonlyFilesystem is now: True, reason: FilesystemIsReadOnly, message: "EXT4-fs (sda1): Remounting filesystem read-only"'),
        # The kernel's oops in its older ("unable to handle kernel NULL pointer dereference") and newer ("kernel NULL
        # pointer dereference, address: ...", "unable to handle page fault") wordings, and general protection faults.
        Pattern(r"BUG: (?:unable to handle (?:kernel )?(?:NULL pointer dereference|paging request|page fault)|kernel NULL pointer dereference)"
                r"|general protection fault(?:, probably for non-canonical address)?:? [0-9a-fx]+|Kernel panic|kernel BUG at", 0.9,
                ("serial", "node"), entities=("Node",),
                origin='https://github.com/kubernetes/node-problem-detector/blob/6632ca67148f7a23df9cdbd98d9e89b388561a3a/test/kernel_log_generator/problems/null_pointer',
                example='BUG: unable to handle kernel NULL pointer dereference at 0000000000000078'),
        Pattern(r"task \S+ blocked for more than \d+ seconds", 0.85, ("serial", "node", "event"), entities=("Node",),
                origin='https://github.com/kubernetes/node-problem-detector/blob/6632ca67148f7a23df9cdbd98d9e89b388561a3a/test/kernel_log_generator/problems/aufs_umount_hung',
                example='INFO: task umount.aufs:21568 blocked for more than 120 seconds.'),
        # CPU lockups and RCU stalls: the kernel's watchdogs saying the host stopped scheduling.
        Pattern(r"watchdog: BUG: soft lockup|NMI watchdog: .{0,40}hard LOCKUP|rcu_(?:sched|preempt) (?:self-)?detected (?:stall|stalls)",
                0.85, ("serial", "node", "event"), entities=("Node",),
                origin='https://github.com/iron-fish/ironfish/issues/701',
                example='watchdog: BUG: soft lockup - CPU#0 stuck for 27s! [node:1984]'),
        Pattern(r"\[Hardware Error\]: event severity: (?:fatal|recoverable)|PCIe Bus Error: severity=Uncorrected|AER: .{0,40}Uncorrected",
                0.9, ("serial", "node", "event"), entities=("Node",),
                origin='https://github.com/kubernetes/node-problem-detector/blob/6632ca67148f7a23df9cdbd98d9e89b388561a3a/pkg/systemlogmonitor/log_buffer_equivalence_test.go',
                example='mce: [Hardware Error]: event severity: fatal'),
        # A local disk (NVMe SSD, persistent disk) that stops completing I/O: the usual start of hung tasks on the host.
        Pattern(r"\bnvme\d+: (?:I/O \d+ QID \d+ timeout|controller is down|Device not ready|Removing after probe failure)|"
                r"blk_update_request: (?:I/O|critical medium) error|I/O error, dev (?:nvme|sd)\w+", 0.85,
                ("serial", "node", "event"), entities=("Node",), note="the host's local disk stopped completing I/O",
                origin='https://github.com/vmware/open-vm-tools/issues/579',
                example='nvme nvme0: I/O 34 QID 13 timeout, aborting'),
        Pattern(r"EXT4-fs error|Buffer I/O error|Remounting filesystem read-only|XFS .{0,40}[Ss]hutdown", 0.85,
                ("serial", "node", "event"), entities=("Node",),
                origin='https://github.com/kubernetes/node-problem-detector/blob/6632ca67148f7a23df9cdbd98d9e89b388561a3a/test/kernel_log_generator/problems/readonly_filesystem',
                example='EXT4-fs (sda1): Remounting filesystem read-only'),
        # rendered: condition KernelDeadlock, reason DockerHung + the kernel line its rule matched from config/kernel-monitor.json
        # filled from the rule's pattern (task docker:\w+ blocked for more than \w+ seconds\.)
        Pattern(r"node condition (?:KernelDeadlock|ReadonlyFilesystem|CperHardwareErrorFatal|XfsShutdown)=True", 0.85,
                ("object",), entities=("Node",),
                origin='https://github.com/kubernetes/node-problem-detector/blob/6632ca67148f7a23df9cdbd98d9e89b388561a3a/config/kernel-monitor.json',
                example='node condition KernelDeadlock=True reason=DockerHung: task docker:1234 blocked for more than 120 seconds.'),
        # Host memory failing under a process: the machine-check handler kills whatever touched the page.
        # (the x86 machine-check handler's line; memory_failure() then sends the process SIGBUS)
        Pattern(r"Uncorrected hardware memory error in user-access", 0.9, ("serial", "node", "event"),
                entities=("Node",), note="the host's memory failed under a process and the kernel killed it",
                origin='https://github.com/torvalds/linux/blob/41ce0564bfe2e129d56730418d8c0a9f9f2d31b5/arch/x86/kernel/cpu/mce/core.c',
                example='pr_err("Uncorrected hardware memory error in user-access at %llx",'),
        # A corrected machine check alone says the host's memory is wearing, not that anything broke.
        Pattern(r"mce: \[Hardware Error\]: Machine check events logged|Memory failure: \S+: recovery action .{0,40}Recovered", 0.3,
                ("serial", "node"), entities=("Node",),
                origin='https://github.com/radiasoft/devops/issues/134',
                example='Feb 23 03:28:16 kernel: mce: [Hardware Error]: Machine check events logged'),
    ),
    explanation="The kernel of {{ node }} reported a fault ({{ detail }}) that broke the pods on it.",
    explains=_RUNTIME_SYMPTOMS + ("node_lost", "tpu_hardware_failure"),
    lookalikes=("tpu_hardware_failure", "node_lost"),
    fixes=_CORDON,
    sources=("event", "serial", "node"),
    leans_on=("serial_console",),
)

NODE_LOST = FailureClass(
    id="node_lost", machine_fault=True, title="A node failed or disappeared", phase="run", component="GKE node / Compute Engine VM",
    patterns=(
        Pattern(r"compute\.instances\.hostError", 0.95, ("node",), entities=("Node",),
                origin='https://github.com/GoogleCloudPlatform/gcpdiag/blob/06ec8584ec5919df53a4e6841ad2ad74a5f045b2/website/content/en/runbook/steps/gce/host-error.md',
                example='A host error (compute.instances.hostError) means that there was a hardware or software issue'),
        # rendered: NodeNotReady + RecordNodeStatusChange's message from pkg/controller/nodelifecycle/node_lifecycle_controller.go
        # filled from the format string in pkg/controller/util/node/controller_utils.go ("Node %s status is now: %s")
        Pattern(r"status is now: NodeNotReady|^NodeNotReady: ", 0.8, ("event",), entities=("Node",),
                origin='https://github.com/kubernetes/kubernetes/blob/003e86297d18a8538c9da3619871393f9703bf70/pkg/controller/nodelifecycle/node_lifecycle_controller.go',
                example='NodeNotReady: Node gke-tpu-v5e-np-4a1f2c3d-x7k2 status is now: NodeNotReady'),
        # The taint eviction controller deleting a pod that does not tolerate its node's NoExecute taint (on a node lost,
        # node.kubernetes.io/unreachable or not-ready, after the pod's tolerationSeconds, 300 by default): the node
        # stayed gone that long, not a blip. rendered: TaintManagerEviction + "Marking for deletion Pod %s" from
        # pkg/controller/tainteviction/taint_eviction.go (emitPodDeletionEvent)
        Pattern(r"^TaintManagerEviction: Marking for deletion Pod ", 0.9, ("event",), entities=("Pod",),
                origin='https://github.com/kubernetes/kubernetes/blob/master/pkg/controller/tainteviction/taint_eviction.go',
                example='TaintManagerEviction: Marking for deletion Pod default/rm-v6e-k2-tpu-workers-0-0-zjxin'),
        # rendered: Ready=Unknown, NodeStatusUnknown + "Kubelet stopped posting node status." from node_lifecycle_controller.go
        Pattern(r"node condition Ready=(?:False|Unknown)", 0.75, ("object",), entities=("Node",),
                origin='https://github.com/kubernetes/kubernetes/blob/003e86297d18a8538c9da3619871393f9703bf70/pkg/controller/nodelifecycle/node_lifecycle_controller.go',
                example='node condition Ready=Unknown reason=NodeStatusUnknown: Kubelet stopped posting node status.'),
        Pattern(r"(?:AUTO_REPAIR_NODES|auto-repair|NodeAutoRepair)", 0.7, ("event", "node"), entities=("Node",),
                origin='https://github.com/GoogleCloudPlatform/gcpdiag/blob/06ec8584ec5919df53a4e6841ad2ad74a5f045b2/gcpdiag/runbook/gke/node_auto_repair.py',
                example='\'protoPayload.request.metadata.annotations."gke-current-operation":"AUTO_REPAIR_NODES"\','),
        # rendered: RemovingNode + "Removing Node %v from Controller" (node_lifecycle_controller.go) from controller_utils.go
        # filled from the format string in pkg/controller/util/node/controller_utils.go (RecordNodeEvent: "Node %s event: %s")
        Pattern(r"^(?:RemovingNode|DeletingNode|NodeDeleted): ", 0.7, ("event",), entities=("Node",),
                origin='https://github.com/kubernetes/kubernetes/blob/025f2834a128798cef30018a5e6a6ae82b5ad885/pkg/controller/util/node/controller_utils.go',
                example='RemovingNode: Node gke-tpu-v5e-np-4a1f2c3d-x7k2 event: Removing Node gke-tpu-v5e-np-4a1f2c3d-x7k2 from Controller'),
        Pattern(r"(?:NodeLost|node .{0,40} (?:is|was) (?:lost|deleted|unreachable))", 0.6, ("event", "object"), entities=("Node", "Pod"),
                origin='https://github.com/kubernetes/kubernetes/pull/60705',
                example='Report `NodeLost` status on `kubectl get pods` instead of `Unknown` when a pod is on a node that became unavailable'),
        # A cordon alone is a drain, an upgrade or an autoscaler scale-down, not a lost node: it only supports NotReady.
        # rendered: NodeNotSchedulable + recordNodeStatusEvent's message from pkg/kubelet/kubelet_node_status.go
        # filled from the format string in kubelet_node_status.go ("Node %s status is now: %s")
        Pattern(r"^NodeNotSchedulable: ", 0.3, ("event",), entities=("Node",),
                origin='https://github.com/kubernetes/kubernetes/blob/00b88c14b077ac9c239c62d6e5e23d9e1a5e5160/pkg/kubelet/kubelet_node_status.go',
                example='NodeNotSchedulable: Node gke-tpu-v5e-np-4a1f2c3d-x7k2 status is now: NodeNotSchedulable'),
        # kubelet on start-up after an unplanned restart of the VM: every pod that ran there died with it.
        # rendered: Rebooted (events.NodeRebooted) + its message from pkg/kubelet/nodestatus/setters.go
        # filled from the format string in setters.go ("Node %s has been rebooted, boot id: %s")
        Pattern(r"^Rebooted: Node \S+ has been rebooted, boot id: ", 0.6, ("event",), entities=("Node",),
                origin='https://github.com/kubernetes/kubernetes/blob/00267ac822c2df40bab2e223873f2b76864c5f3d/pkg/kubelet/nodestatus/setters.go',
                example='Rebooted: Node gke-tpu-v5e-np-4a1f2c3d-x7k2 has been rebooted, boot id: 3f1c9e7a-5b2d-4c8e-9a61-0d7e2b4f8c15'),
    ),
    explanation="The node {{ node }} failed ({{ detail }}) for a reason other than Spot preemption or maintenance, taking its pods with it.",
    explains=_RUNTIME_SYMPTOMS,
    lookalikes=("spot_preemption", "host_maintenance", "node_kernel_error"),
    fixes=(
        Fix("See the node's conditions and the VM's recent system events.", "kubectl describe node {{ node }}", "read-only"),
        Fix("Check whether GKE repaired the node.", "gcloud container operations list --project={{ project }} --location={{ location }} --filter=operationType=AUTO_REPAIR_NODES --limit=10", "read-only"),
        Fix("Let auto-repair replace it; if the same host keeps failing, report a faulty host. Allow restarts so the job survives: spec.failurePolicy.maxRestarts (xpk --max-restarts=3).", None, "low"),
    ),
    sources=("event", "node"),
    scope="node", leans_on=("serial_console", "gce_audit",),
)

SPOT_PREEMPTION = FailureClass(
    id="spot_preemption", machine_fault=True, title="A Spot TPU VM was reclaimed", phase="run", component="Compute Engine Spot capacity",
    patterns=(
        Pattern(r"compute\.instances\.preempted", 0.97, ("node",), entities=("Node",),
                origin='https://github.com/GoogleCloudPlatform/gcpdiag/blob/06ec8584ec5919df53a4e6841ad2ad74a5f045b2/gcpdiag/runbook/gke/node_unavailability.py',
                example='\'protoPayload.methodName="compute.instances.preempted"\','),
        Pattern(r"(?i)\bwas preempted\b|PreemptionEvent", 0.8, ("node", "event"), entities=("Node",),
                origin='https://github.com/google/skills/blob/1af77752950126ae12dec176a0a3b27a16b7f5f7/plugins/cloud/google-cloud-gke/skills/gke-ai-troubleshooting-jobset-interruption/references/failure_signatures.md',
                example='"PreemptionEvent: Node \'gke-tpu-pool-12345-abcde\' in node pool \'tpu-pool\' was preempted."'),
        # A graceful node shutdown is what a reclaimed Spot VM gets ~30 s before it stops (ACPI power-off), but also what
        # maintenance or a stop gives an on-demand VM: these count only unless the node is known not to be Spot.
        Pattern(r"Pod was terminated in response to imminent node shutdown", 0.55, ("object", "event"), entities=("Pod", "Node"),
                needs="spot_node",
                origin='https://github.com/kubernetes/kubernetes/blob/9d26641844bb569950a7b02b2a141c6b184a96fc/pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go',
                example='Pod was terminated in response to imminent node shutdown.'),
        Pattern(r"TerminationByKubelet", 0.45, ("object", "event"), entities=("Pod", "Node"), needs="spot_node",
                origin='https://github.com/kubernetes/kubernetes/blob/9d26641844bb569950a7b02b2a141c6b184a96fc/pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go',
                example='v1.PodReasonTerminationByKubelet'),
        Pattern(r"Shutdown manager detected new shutdown event|Shutdown manager .{0,40}(?:shutting down|processing shutdown)",
                0.5, ("node",), entities=("Node",), needs="spot_node",
                origin='https://github.com/kubernetes/kubernetes/blob/9d26641844bb569950a7b02b2a141c6b184a96fc/pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go',
                example='Shutdown manager detected new shutdown event, isNodeShuttingDownNow'),
        Pattern(r"Shutdown manager killing pod with gracePeriod", 0.5, ("node",), entities=("Node",), needs="spot_node",
                origin='https://github.com/kubernetes/kubernetes/blob/9d26641844bb569950a7b02b2a141c6b184a96fc/pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go',
                example='Shutdown manager killing pod with gracePeriod'),
        # The guest's side of the ACPI power-off on the serial console (the VM is being stopped from outside).
        Pattern(r"systemd-logind\[\d+\]: Power key pressed|ACPI: .{0,40}\bPower Button\b|System is powering down", 0.5,
                ("serial", "node"), entities=("Node",), needs="spot_node",
                origin='https://github.com/systemd/systemd/issues/39521',
                example='Nov 01 23:02:47 abreu systemd-logind[633]: System is powering down.'),
        # The pods were placed on Spot capacity (their node selector or affinity, or the node's own label).
        # rendered: nodeSelector cloud.google.com/gke-spot: "true" from gke-cost-optimization/assets/spot-deployment-example.yaml,
        # as skill/reading/objects.py writes a pod's Spot placement
        Pattern(r"^(?:pod node selector|pod node affinity|node label) cloud\.google\.com/gke-(?:spot|preemptible)=true", 0.3,
                ("object",), entities=("Node",), support=True, note="the workers ran on Spot capacity",
                origin='https://github.com/google/skills/blob/1af77752950126ae12dec176a0a3b27a16b7f5f7/plugins/cloud/google-cloud-gke/skills/gke-cost-optimization/assets/spot-deployment-example.yaml',
                example='pod node selector cloud.google.com/gke-spot=true'),
    ),
    explanation="The Spot VM {{ node }} was reclaimed by Compute Engine; its workers died{% if timed_out and restarted %} and the job's timeouts and restarts followed{% elif timed_out %} and the job's timeouts followed{% elif restarted %} and the job restarted{% endif %}.",
    # Compute Engine reclaims Spot VMs when it needs the capacity back ("Compute Engine might preempt Spot VMs to reclaim
    # capacity", https://cloud.google.com/compute/docs/instances/spot): the replacement then waits on the same shortage,
    # so a stockout after a reclaim is its consequence (issue 41: the run waits, the reclaim is what happened).
    explains=_RUNTIME_SYMPTOMS + ("node_lost", "host_oom", "head_pod_evicted", "tpu_capacity_unavailable"),
    lookalikes=("host_maintenance", "node_lost"),
    fixes=(
        Fix("List recent preemptions in the project.", "gcloud logging read 'log_id(\"cloudaudit.googleapis.com/system_event\") AND protoPayload.methodName=\"compute.instances.preempted\"' --project={{ project }} --freshness=1d --limit=20", "read-only"),
        Fix("Run long jobs on reserved or on-demand capacity, or make preemption survivable: elastic slices (xpk --elastic-slices=1), restarts (spec.failurePolicy.maxRestarts, xpk --max-restarts=N), and frequent checkpoints.", None, "low"),
    ),
    sources=("node",),
    scope="node", leans_on=("gce_audit",),
)

HOST_MAINTENANCE = FailureClass(
    id="host_maintenance", machine_fault=True, title="Host maintenance terminated TPU VMs", phase="run", component="Compute Engine host maintenance",
    patterns=(
        Pattern(r"compute\.instances\.terminateOnHostMaintenance", 0.97, ("node",), entities=("Node",),
                origin='https://github.com/GoogleCloudPlatform/gcpdiag/blob/06ec8584ec5919df53a4e6841ad2ad74a5f045b2/gcpdiag/runbook/gce/constants.py',
                example="TERMINATE_ON_HOST_MAINTENANCE_METHOD = 'compute.instances.terminateOnHostMaintenance'"),
        # rendered: label cloud.google.com/active-node-maintenance + value ONGOING ("set to `ONGOING`") from
        # gke-ai-troubleshooting-handle-disruption-gpu-tpu/SKILL.md, as skill/reading/objects.py writes a node label
        Pattern(r"cloud\.google\.com/active-node-maintenance=ONGOING", 0.85, ("object", "event", "node"), entities=("Node",),
                origin='https://github.com/google/skills/blob/1af77752950126ae12dec176a0a3b27a16b7f5f7/plugins/cloud/google-cloud-gke/skills/gke-ai-troubleshooting-handle-disruption-gpu-tpu/SKILL.md',
                example='node label cloud.google.com/active-node-maintenance=ONGOING'),
        # rendered: taint cloud.google.com/impending-node-termination:NoSchedule from
        # gke-ai-troubleshooting-handle-disruption-gpu-tpu/SKILL.md, as skill/reading/objects.py writes a node taint
        Pattern(r"cloud\.google\.com/impending-node-termination", 0.6, ("object", "event", "node"), entities=("Node",),
                origin='https://github.com/google/skills/blob/1af77752950126ae12dec176a0a3b27a16b7f5f7/plugins/cloud/google-cloud-gke/skills/gke-ai-troubleshooting-handle-disruption-gpu-tpu/SKILL.md',
                example='node taint cloud.google.com/impending-node-termination:NoSchedule'),
    ),
    explanation="A host maintenance event terminated the TPU VM {{ node }} (TPU VMs do not live-migrate){% if restarted %}; the restarts followed{% endif %}.",
    explains=_RUNTIME_SYMPTOMS + ("node_lost", "spot_preemption", "head_pod_evicted"),
    lookalikes=("spot_preemption", "node_lost"),
    fixes=(
        Fix("See upcoming maintenance on the nodes.", "kubectl get nodes -l cloud.google.com/scheduled-maintenance-time -L cloud.google.com/scheduled-maintenance-time", "read-only"),
        Fix("Give the Pathways snapshot time to finish (raise terminationGracePeriodSeconds, xpk -tgps=600), set maintenance windows/exclusions, and use elastic slices; do not tolerate the impending-termination taint.", None, "low"),
        Fix("Let a maintenance event cost one restart, not the run: allow restarts in the JobSet (spec.failurePolicy.maxRestarts, xpk --max-restarts=3) and checkpoint often enough to resume.", None, "low"),
    ),
    sources=("node", "object"),
    scope="node", leans_on=("gce_audit",),
)

HEAD_POD_EVICTED = FailureClass(
    id="head_pod_evicted", title="The head pod was evicted or reclaimed", phase="run", component="pathways-head pod (cpu-np node)",
    patterns=(
        # rendered: Evicted + nodeLowMessageFmt from pkg/kubelet/eviction/helpers.go
        # filled from the format string in helpers.go ("The node was low on resource: %v. ")
        Pattern(r"pod status reason=Evicted", 0.9, ("object",), entities=("Pod", "Node"), head_only=True,
                origin='https://github.com/kubernetes/kubernetes/blob/008b3652959ca58af8be3fb5b6ecfe9ae7638282/pkg/kubelet/eviction/helpers.go',
                example='pod status reason=Evicted: The node was low on resource: ephemeral-storage. '),
        # rendered: Evicted + nodeLowMessageFmt from pkg/kubelet/eviction/helpers.go
        # filled from the format string in helpers.go ("The node was low on resource: %v. ")
        Pattern(r"^(?:Evicted|Preempted|Preempting): ", 0.85, ("event",), entities=("Pod", "Node"), head_only=True,
                origin='https://github.com/kubernetes/kubernetes/blob/008b3652959ca58af8be3fb5b6ecfe9ae7638282/pkg/kubelet/eviction/helpers.go',
                example='Evicted: The node was low on resource: ephemeral-storage. '),
        # kubelet's node-pressure eviction for local disk: what the head wrote to its container filesystem or emptyDir
        # rendered: Evicted + nodeLowMessageFmt from pkg/kubelet/eviction/helpers.go
        # filled from the format string in helpers.go ("The node was low on resource: %v. ")
        Pattern(r"low on resource: ephemeral-storage", 0.9, ("event", "object"), entities=("Pod", "Node"), head_only=True,
                id="ephemeral_storage",
                origin='https://github.com/kubernetes/kubernetes/blob/008b3652959ca58af8be3fb5b6ecfe9ae7638282/pkg/kubelet/eviction/helpers.go',
                example='Evicted: The node was low on resource: ephemeral-storage. '),
        # rendered: ScaleDown + "marked the node as toBeDeleted/unschedulable" from cluster-autoscaler/core/scaledown/actuation/actuator.go
        Pattern(r"(?i)(?:ScaleDown|scale-down|scale down|marked the node as toBeDeleted)", 0.8, ("event",),
                entities=("Pod", "Node"), head_only=True,
                origin='https://github.com/kubernetes/autoscaler/blob/0039da9706163523a1e645b3071c7cd3547b32e8/cluster-autoscaler/core/scaledown/actuation/actuator.go',
                example='ScaleDown: marked the node as toBeDeleted/unschedulable'),
        # Compute Engine deleting the node's VM from its instance group (the autoscaler's scale-down carried out).
        Pattern(r"compute\.instanceGroupManagers\.deleteInstances", 0.3, ("node",), logs=("cloudaudit.googleapis.com",),
                entities=("Node",), support=True, note="the node's VM was deleted from its instance group",
                origin='https://github.com/googleapis/google-api-go-client/blob/5c177bfb67a81aa8c029732039af480559e428a9/compute/v1/compute-api.json',
                example='"id": "compute.instanceGroupManagers.deleteInstances",'),
        # The autoscaler marking the head's node for removal (the Node's own event): what the head's eviction followed.
        # rendered: ScaleDown + "marked the node as toBeDeleted/unschedulable" from cluster-autoscaler/core/scaledown/actuation/actuator.go
        Pattern(r"^ScaleDown: marked the node as toBeDeleted", 0.4, ("event",), entities=("Node",), support=True,
                needs="on_the_head_node", note="the cluster autoscaler marked the head's node for removal",
                origin='https://github.com/kubernetes/autoscaler/blob/0039da9706163523a1e645b3071c7cd3547b32e8/cluster-autoscaler/core/scaledown/actuation/actuator.go',
                example='ScaleDown: marked the node as toBeDeleted/unschedulable'),
        # Kubernetes audit: someone (kubectl drain, a node-pool upgrade) called the Eviction API on the head pod.
        Pattern(r"io\.k8s\.core\.v1\.pods\.eviction\.create", 0.9, ("node",), head_only=True, entities=("Pod", "Node"),
                origin='https://github.com/google/skills/blob/1af77752950126ae12dec176a0a3b27a16b7f5f7/skills/cloud/cloud-logging-query-generation/references/query_gke.md',
                example='protoPayload.methodName="io.k8s.core.v1.pods.eviction.create"'),
        # The pod's own record of it, while the object still exists.
        # rendered: condition DisruptionTarget + its reason EvictionByEvictionAPI from disruptions.md, as skill/objects.py
        # writes a pod condition
        Pattern(r"pod condition DisruptionTarget=True reason=(?:EvictionByEvictionAPI|PreemptionByScheduler|DeletionByTaintManager)",
                0.8, ("object",), head_only=True, entities=("Pod", "Node"),
                origin='https://github.com/kubernetes/website/blob/0ee4c5fa252958e58787d7c3b11095d06d3f97dc/content/en/docs/concepts/workloads/pods/disruptions.md',
                example='pod condition DisruptionTarget=True reason=EvictionByEvictionAPI'),
    ),
    explanation="The head pod {{ pod }} (RM, proxy and client) was evicted from {{ node }} ({{ detail }}), orphaning the workers.",
    explains=_RUNTIME_SYMPTOMS,
    lookalikes=("proxy_connection_lost", "node_lost"),
    fixes=(
        Fix("See why the head pod left its node.", "kubectl get events -n {{ namespace }} --field-selector involvedObject.name={{ pod }}", "read-only"),
        Fix("The kubelet evicted the head for local disk (ephemeral-storage): write profiles, dumps and scratch to GCS or a mounted volume instead of the container filesystem or /tmp, and give the head's containers an ephemeral-storage request (resources.requests.ephemeral-storage) so the scheduler places it on a node with room.",
            None, "low", when=("ephemeral_storage",)),
        Fix("See who called the Eviction API on the head pod (kubectl drain, a node-pool upgrade).",
            "gcloud logging read 'protoPayload.methodName:\"pods.eviction\" AND protoPayload.resourceName:\"pods/{{ jobset }}-pathways-head\"' --project={{ project }} --freshness=1d --limit=10",
            "read-only"),
        Fix("Keep the autoscaler from removing the head's node: annotate the head pod template with cluster-autoscaler.kubernetes.io/safe-to-evict: \"false\" and give cpu-np its own non-autoscaled pool.", None, "low"),
        Fix("Make voluntary evictions (drains, upgrades) of the running head wait: a PodDisruptionBudget that allows none.",
            "kubectl create poddisruptionbudget {{ jobset }}-head -n {{ namespace }} --selector=jobset.sigs.k8s.io/jobset-name={{ jobset }},jobset.sigs.k8s.io/replicatedjob-name=pathways-head --max-unavailable=0",
            "high"),
    ),
    sources=("event", "object"),
    leans_on=("autoscaler",),
)

FAMILY = (TPU_HARDWARE_FAILURE, NODE_KERNEL_ERROR, NODE_LOST, SPOT_PREEMPTION, HOST_MAINTENANCE, HEAD_POD_EVICTED)
