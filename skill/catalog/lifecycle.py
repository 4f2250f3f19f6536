"""Lifecycle: start-up that never completes, stalls, elastic recovery, hot swap, suspend-resume, and the two verdicts."""

from __future__ import annotations

from .types import Absence, FactRule, FailureClass, Fix, Pattern

# What the recovery mechanisms exist to survive: slice and host losses, and the capacity a replacement waits for.
_INTERRUPTIONS = ("spot_preemption", "host_maintenance", "node_lost", "tpu_hardware_failure", "node_kernel_error")
_REPLACEMENT = ("tpu_capacity_unavailable", "tpu_quota_exceeded")

SLICES_NOT_READY = FailureClass(
    id="slices_not_ready", title="The resource manager never reports all slices ready", phase="start",
    component="pathways-rm / worker registration",
    # decided from the workload model (the missing "n/n Pathways Slices Now Ready" milestone); lines only support it
    explanation="The resource manager of {{ jobset }} never reported all slices ready ({{ detail }}), so the client waits on virtual slices without an error.",
    lookalikes=("tpu_capacity_unavailable", "image_pull_failure", "workload_stalled"),
    fixes=(
        Fix("Compare the RM's slice count and the workers' RM address.",
            "kubectl logs {{ head_pod }} -n {{ namespace }} -c pathways-rm | grep -E 'instance_count|instance_type|Slices Now Ready'", "read-only"),
        Fix("Check every worker registered: each should print 'Pathways Server serving on [::]:29005' and 'MegaScale transport init succeeded.'",
            "kubectl logs -n {{ namespace }} -l jobset.sigs.k8s.io/jobset-name={{ jobset }},jobset.sigs.k8s.io/replicatedjob-name={{ worker_job }} -c pathways-worker --tail=20 --prefix", "read-only"),
        Fix("Read the RM address the worker template was created with (it must name this JobSet's head).",
            "kubectl get jobset {{ jobset }} -n {{ namespace }} -o jsonpath='{.spec.replicatedJobs[?(@.name==\"{{ worker_job }}\")].template.spec.template.spec.containers[?(@.name==\"pathways-worker\")].args}'", "read-only"),
        Fix("Regenerate the manifest so --instance_count equals the number of slices, --instance_type matches the TPU type and topology, and workers use --resource_manager_address=$(PATHWAYS_HEAD):29001 ({{ expected_rm_address }}).", None, "low"),
    ),
    names_jobset=True, status_when_root="stalled",
    patterns=(
    ),
    absence=Absence("milestone_missing", 0.75, 600, after="rm_serving", expect="slices_ready",
                    refine=("rm_address", "slice_count"), waiting="waiting"),
)

WORKLOAD_STALLED = FailureClass(
    id="workload_stalled", title="Progress stopped with no error", phase="run", component="training loop",
    patterns=(),  # decided from the workload model: progress lines stop while pods run
    explanation="{{ jobset }} stopped making progress ({{ detail }}){% if then_failed %}, and only then failed: the stall came first{% else %} while its pods kept running{% endif %}{% if story %}, and no error explains it; what its program printed tells where it stopped: {{ story }}{% else %}, and nothing in the data explains it{% endif %}.",
    lookalikes=("megascale_hang", "slices_not_ready"),
    fixes=(
        Fix("Confirm the pods are still running and see the client's last lines.", "kubectl logs {{ head_pod }} -n {{ namespace }} -c {{ user_container }} --tail=100", "read-only"),
        Fix("Collect stack traces of the hung processes (xpk --deploy-stacktrace-sidecar, or py-spy dump in the client) and, for multi-slice runs, enable --megascale_abort_on_hangs=true so a hang turns into a restart.", None, "low"),
    ),
    names_jobset=True, status_when_root="stalled", absence=Absence("progress_stopped", 0.7, 900, intervals=10),
)

ELASTIC_RECOVERY_EXHAUSTED = FailureClass(
    id="elastic_recovery_exhausted", title="Elastic training gave up", phase="run", component="pathwaysutils elastic manager",
    patterns=(
        Pattern(r"ElasticRuntimeError", 0.9, entities=("Pod", "Container"),
                origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/8950a34f5e4ad7a7798453efa49856013c07e96e/pathwaysutils/elastic/manager.py',
                example='class ElasticRuntimeError(RuntimeError):'),
        # filled from the format string in elastic.py (wait_for_slices' TimeoutError)
        Pattern(r"Timed out waiting for \d+ slices", 0.95, entities=("Pod", "Container"),
                origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/710ca741ce4ec0686575bdd0d0a70cfb94e8bcfe/pathwaysutils/elastic/elastic.py',
                example="TimeoutError: Timed out waiting for 2 slices. Only 1 active after 600.42 seconds. Next check would occur after the timeout of 600 seconds."),
        Pattern(r"Retry policy rejected retry", 0.8, entities=("Pod", "Container"),
                origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/8950a34f5e4ad7a7798453efa49856013c07e96e/pathwaysutils/elastic/manager.py',
                example='Retry policy rejected retry after jax.errors.JaxRuntimeError.'),
        Pattern(r"Catastrophic error in monitor thread", 0.8, entities=("Pod", "Container"),
                origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/8950a34f5e4ad7a7798453efa49856013c07e96e/pathwaysutils/elastic/manager.py',
                example='Catastrophic error in monitor thread, thread is dying!'),
        # filled from the format string in elastic.py (get_active_slice_indices' ValueError)
        Pattern(r"Error with _simple_execution for slice_index=\d+", 0.6, entities=("Pod", "Container"),
                note="a returning slice failed the elastic health check",
                origin='https://github.com/AI-Hypercomputer/pathways-utils/blob/710ca741ce4ec0686575bdd0d0a70cfb94e8bcfe/pathwaysutils/elastic/elastic.py',
                example="ValueError: Error with _simple_execution for slice_index=1."),
    ),
    explanation="Elastic training in {{ pod }} gave up ({{ detail }}): its retries or the wait for replacement slices ran out.",
    explains=("user_code_error",),
    absorbs=_INTERRUPTIONS + _REPLACEMENT,
    lookalikes=("hot_swap_failure",),
    fixes=(
        Fix("See why the replacement slice did not come back (its worker pods).", "kubectl get pods -n {{ namespace }} -l jobset.sigs.k8s.io/jobset-name={{ jobset }} -o wide", "read-only"),
        Fix("Read the elastic manager's attempts and slice waits in the client log.",
            "kubectl logs {{ head_pod }} -n {{ namespace }} -c {{ user_container }} | grep -E 'pathwaysutils.elastic|Elastic attempt|slices active|_simple_execution'", "read-only"),
        Fix("A slice that fails the _simple_execution health check on every attempt is faulty: find its nodes and take them out of scheduling before retrying.",
            "kubectl get pods -n {{ namespace }} -l jobset.sigs.k8s.io/jobset-name={{ jobset }} -o custom-columns=POD:.metadata.name,SLICE:.metadata.labels.jobset\\.sigs\\.k8s\\.io/job-index,NODE:.spec.nodeName,RESTARTS:.status.containerStatuses[*].restartCount", "read-only"),
        Fix("Raise ElasticRetryLimit(max_attempts) or the slice wait timeout, lower minimum_slice_count in Manager.elastic_retry so training continues on the surviving slices, and fix the capacity that kept the slice away (resubmit with xpk --elastic-slices=1 --max-slice-restarts=3 on a reservation rather than Spot).", None, "low"),
    ),
    facts=(
        FactRule(0.8, raised_in=("elastic",), exception=".", note="an error raised by pathwaysutils' elastic manager"),
    ),
)

HOT_SWAP_FAILURE = FailureClass(
    id="hot_swap_failure", title="An interrupted slice could not be hot-swapped", phase="run", component="Pathways hot swap",
    patterns=(
        # The scheduler's own words for a replacement pod that can neither use the lost node nor preempt a standby. Only
        # strong, not proof: the same words come for any replacement that finds no victim, hot swap configured or not.
        # "No preemption victims" alone is what any unplaceable replacement hears: strong, not proof, so it cannot outrank a
        # proven interruption (ranking.PROOF); the replacement's priority class forbidding preemption is specific.
        # rendered: FailedScheduling + the scheduler's summary, its preemption part "No preemption victims found for
        # incoming pod" from default_preemption.go (the filter part is the taint plugin's "node(s) had untolerated taint
        # {key: value}" for the lost node's node.kubernetes.io/unreachable taint)
        Pattern(r"(?:untolerated taint \{node\.kubernetes\.io/(?:unreachable|not-ready)|node\(s\) were unschedulable|impending-node-termination)"
                r".*No preemption victims found for incoming pod", 0.8, ("event",), transient=True,
                entities=("Pod",), note="a replacement slice could not preempt a standby workload",
                origin='https://github.com/kubernetes/kubernetes/blob/008b3652959ca58af8be3fb5b6ecfe9ae7638282/pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go',
                example="FailedScheduling: 0/5 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 4 Insufficient google.com/tpu. preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod."),
        # rendered: FailedScheduling + the summary, its preemption part "not eligible due to preemptionPolicy=Never."
        # from default_preemption.go (PodEligibleToPreemptOthers)
        Pattern(r"(?:untolerated taint \{node\.kubernetes\.io/(?:unreachable|not-ready)|node\(s\) were unschedulable|impending-node-termination)"
                r".*not eligible due to preemptionPolicy=Never", 0.9, ("event",), transient=True,
                entities=("Pod",), note="the replacement slice's priority class may not preempt a standby workload",
                origin='https://github.com/kubernetes/kubernetes/blob/008b3652959ca58af8be3fb5b6ecfe9ae7638282/pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go',
                example="FailedScheduling: 0/5 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 4 Insufficient google.com/tpu. preemption: not eligible due to preemptionPolicy=Never."),
        # A standby workload's pod preempted for a replacement (the scheduler's event on the victim, whatever JobSet it
        # belongs to): hot swap was under way. The victims' nodes name the standby pool.
        # rendered: Preempted + "Preempted by pod %v on node %v" (the preemptor's UID, the node) from preemption.go;
        # filled from the format string in preemption.go
        Pattern(r"^Preempted: Preempted by pod \S+ on node (?P<node>gke-\S+)", 0.85, ("event",), entities=("NodePool",),
                note="a standby workload was preempted to make room for a replacement slice",
                origin='https://github.com/kubernetes/kubernetes/blob/98be7dfc5da8533f62c063206c5751e884d6294d/pkg/scheduler/framework/preemption/preemption.go',
                example="Preempted: Preempted by pod 6f1c2a7e-3b7d-4c1e-9a55-0d2f1e8b9c44 on node gke-tpu-cluster-standby-np-7f3a2b1c-x2k9"),
        # The replacement did preempt, but its victims are still terminating (a long grace period holds the standby).
        # rendered: FailedScheduling + the summary, its preemption part from default_preemption.go
        Pattern(r"preemption: not eligible due to a terminating pod on the nominated node", 0.9, ("event",),
                entities=("Pod",), note="the replacement waits for preempted standby pods to terminate",
                origin='https://github.com/kubernetes/kubernetes/blob/008b3652959ca58af8be3fb5b6ecfe9ae7638282/pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go',
                example="FailedScheduling: 0/8 nodes are available: 8 Insufficient google.com/tpu. preemption: not eligible due to a terminating pod on the nominated node."),
    ),
    explanation="A slice of {{ jobset }} was interrupted and could not be remapped onto a standby slice ({{ detail }}), so the workload {% if restarted %}restarted and {% endif %}waited for a replacement.",
    explains=("workload_stalled", "user_code_error", "slices_not_ready"),
    absorbs=_INTERRUPTIONS + _REPLACEMENT,
    lookalikes=("elastic_recovery_exhausted", "tpu_capacity_unavailable"),
    fixes=(
        Fix("See the replacement pods that cannot be placed and the scheduler's reason.",
            "kubectl get events -n {{ namespace }} --field-selector reason=FailedScheduling --sort-by=.lastTimestamp | grep {{ jobset }}", "read-only"),
        Fix("Compare the priority classes: hot swap only preempts pods of a strictly lower priority, and only if the preemptor's preemptionPolicy allows it.",
            "kubectl get priorityclass -o custom-columns=NAME:.metadata.name,VALUE:.value,PREEMPTION:.preemptionPolicy && kubectl get pods -A -o custom-columns=NS:.metadata.namespace,POD:.metadata.name,PRIORITY:.spec.priorityClassName,NODE:.spec.nodeName | grep -v '<none>$'", "read-only"),
        Fix("Give the training JobSet's pods a priorityClassName above the standby workloads' (xpk --priority=high for training, --priority=low for standby jobs) whose PriorityClass has preemptionPolicy: PreemptLowerPriority, and keep the standby on the same accelerator and cloud.google.com/gke-tpu-topology so a replacement slice fits; or fall back to elastic slices (xpk --elastic-slices=1).", None, "low"),
    ),
    scope="spread", stalled_while_pending=True,
)

SUSPEND_RESUME_FAILURE = FailureClass(
    id="suspend_resume_failure", title="A planned preemption did not resume transparently", phase="run",
    component="Pathways suspend-resume",
    patterns=(
        # The resource manager's own account of the notice it acted on (which task, why, how long before termination).
        # (Pathways' own lines are not public: these are the terms of its documentation of suspend-resume.)
        Pattern(r"(?i)\bpreemption notice\b", 0.4, ("container",), entities=("JobSet",), support=True,
                note="the resource manager received the preemption notice", origin='https://cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/resilient-training',
                example='Typically, GKE sends a preemption notice to an accelerator pod, before the pod is preempted.'),
        # Pathways decides whether the workload is restorable; one that is not is shut down instead of suspended.
        Pattern(r"(?i)\bnot restorable\b", 0.9, entities=("JobSet",), origin='https://cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/resilient-training',
                example='If the workload is not restorable, Pathways shuts down the accelerator job and forwards the failure to your job if Elastic training is configured.'),
    ),
    explanation="A planned preemption of {{ jobset }} {% if restarted %}ended in a full restart instead of a transparent resume{% else %}was not resumed transparently{% endif %} ({{ detail }}).",
    explains=("user_code_error", "workload_stalled"),
    absorbs=("spot_preemption", "host_maintenance", "node_lost"),
    lookalikes=("spot_preemption", "host_maintenance"),
    fixes=(
        Fix("Read what the resource manager did with the preemption notice.",
            "kubectl logs {{ head_pod }} -n {{ namespace }} -c pathways-rm | grep -iE 'preemption|suspend|snapshot|restor'", "read-only"),
        Fix("Raise the pods' termination grace period (terminationGracePeriodSeconds; xpk -tgps=600) so the snapshot can finish, avoid colocated Python (stateful, not restorable) where resume matters, and keep the scratch bucket healthy.", None, "low"),
    ),
)

NO_FAILURE_DETECTED = FailureClass(
    id="no_failure_detected", title="No failure detected", phase="-", component="-",
    explanation="{% if finished %}{{ jobset }} finished its run: {{ finished }}. What still ran was stopped as the JobSet wound down (exit 143 after SIGTERM is expected), and any warnings in the data are benign.{% elif not progress_seen and slices_ready %}{{ jobset }} reached its start-up milestones, but no training step or program launch is in the data yet: nothing has failed so far, and it is too early to call the run healthy.{% elif not progress_seen %}Nothing in the data says {{ jobset }} failed, but nothing shows it running either (no training step, no program launch, not every slice ready): health is not claimed.{% else %}{{ jobset }} reached its start-up milestones and keeps making progress; any warnings in the data are benign.{% endif %}",
    fixes=(Fix("Nothing to fix. Keep an eye on progress.", "kubectl get jobset {{ jobset }} -n {{ namespace }}", "read-only"),),
)

UNKNOWN_FAILURE = FailureClass(
    id="unknown_failure", title="Something failed; no known signature explains it", phase="-", component="unknown",
    explanation="{{ jobset }} failed ({{ detail }}) but no known signature explains why; the evidence below is what failed, not a cause.",
    fixes=(
        Fix("Read the last lines of the first container that failed (add --previous if it has restarted since): it "
            "ended on \"{{ detail }}\"; the lines before that say what it was doing.",
            "kubectl logs {{ pod }} -n {{ namespace }} -c {{ container }} --tail=300", "read-only"),
        Fix("Once its pod is gone, read the same lines from Cloud Logging.",
            "gcloud logging read 'resource.type=\"k8s_container\" resource.labels.cluster_name=\"{{ cluster }}\" resource.labels.pod_name=\"{{ pod }}\" resource.labels.container_name=\"{{ container }}\"' --project={{ project }} --freshness=1d --limit=300 --format='value(timestamp,textPayload)'", "read-only"),
        Fix("See the JobSet's conditions and the first failed Job.", "kubectl get jobset {{ jobset }} -n {{ namespace }} -o jsonpath='{.status.conditions}'", "read-only"),
    ),
    names_jobset=True, leans_on=("serial_console",),
)

FAMILY = (SLICES_NOT_READY, WORKLOAD_STALLED, ELASTIC_RECOVERY_EXHAUSTED, HOT_SWAP_FAILURE, SUSPEND_RESUME_FAILURE,
          NO_FAILURE_DETECTED, UNKNOWN_FAILURE)
