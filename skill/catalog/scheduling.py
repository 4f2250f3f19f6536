"""Submit, admission and scheduling: the JobSet, Kueue, TPU capacity, quota and placement."""

from __future__ import annotations

import re

from .types import FailureClass, Fix, Pattern, RuleContext, Text

_COUNTS = re.compile(r"0/(\d+) nodes are available: .*?(\d+) node\(s\) didn't match Pod's node affinity/selector")


def _all_nodes_mismatch(c: RuleContext) -> bool:
    """Every node failed the selector: a mismatch, not a lack of capacity."""
    m = _COUNTS.search(c.text)
    return m is not None and m.group(1) == m.group(2)


def _placement_not_selector_only(c: RuleContext) -> bool:
    """Selectors exclude some nodes and taints/affinity the rest (the all-selector case has its own rule)."""
    return _placement_only(c) and not _all_nodes_mismatch(c)


def _not_all_nodes_mismatch(c: RuleContext) -> bool:
    return not _all_nodes_mismatch(c) and not _placement_only(c)


_SUMMARY = re.compile(r"0/(\d+) nodes are available: ([^.]*)")
_REASON = re.compile(r"(\d+) ([^,]+)")
_PLACEMENT = ("didn't match Pod's node affinity/selector", "had untolerated taint", "didn't match pod anti-affinity",
              "didn't match pod affinity", "didn't satisfy existing pods anti-affinity", "node(s) were unschedulable")


def _placement_only(c: RuleContext) -> bool:
    """Every node is excluded by selectors, taints or (anti-)affinity, none by resources: more capacity would not help."""
    m = _SUMMARY.search(c.text)
    if not m or "didn't match Pod's node affinity/selector" not in m.group(2):
        return False
    reasons = _REASON.findall(m.group(2))
    excluded = sum(int(n) for n, why in reasons if any(p in why for p in _PLACEMENT))
    return not any("Insufficient" in why for _, why in reasons) and excluded >= int(m.group(1)) > 0



_EVENT = ("event", "object")
# The API server's validation error names the field and why: `<Kind> "<name>" is invalid: <field path>: <reason>`
INVALID_FIELD = re.compile(r"is invalid: ([\w.\[\]/-]+): ([^,;\n]{1,120})")


def _names_invalid_field(c: RuleContext) -> bool:
    return INVALID_FIELD.search(c.text) is not None


def _names_no_invalid_field(c: RuleContext) -> bool:
    return not _names_invalid_field(c)


JOBSET_REJECTED = FailureClass(
    id="jobset_rejected", fixed_in_workload=True, title="JobSet or child Jobs refused at creation", phase="submit",
    component="JobSet controller / webhook",
    patterns=(
        Pattern(r"no endpoints available for service \"jobset-webhook-service\"", 0.95, ("event", "object", "container"),
                entities=("JobSet",), id="jobset_webhook_down",
                origin='https://github.com/kubernetes-sigs/jobset/blob/08dfbdfd682714a9ab929633eca8dc95315187e7/site/content/en/docs/troubleshooting/_index.md', example='failed calling webhook "mjobset.kb.io": failed to call webhook: Post "https://jobset-webhook-service.jobset-system.svc:443/mutate-jobset-x-k8s-io-v1alpha1-jobset?timeout=10s": no endpoints available for service "jobset-webhook-service"'),
        Pattern(r"failed calling webhook \"[mv]jobset\.kb\.io\"", 0.9, ("event", "object", "container"), entities=("JobSet",),
                id="jobset_webhook_down",
                origin='https://github.com/kubernetes-sigs/jobset/blob/08dfbdfd682714a9ab929633eca8dc95315187e7/site/content/en/docs/troubleshooting/_index.md', example='failed calling webhook "mjobset.kb.io": failed to call webhook: Post "https://jobset-webhook-service.jobset-system.svc:443/mutate-jobset-x-k8s-io-v1alpha1-jobset?timeout=10s": no endpoints available for service "jobset-webhook-service"'),
        Pattern(r"(?:for coordinator label|JobSet name is too long|must be no more than 63 characters)", 0.95,
                ("event", "object", "container"), entities=("JobSet",), id="name_too_long",
                origin='https://github.com/kubernetes-sigs/jobset/blob/08dfbdfd682714a9ab929633eca8dc95315187e7/pkg/webhooks/jobset_webhook.go', example='JobSet name is too long, job names generated for this JobSet will exceed 63 characters'),
        # The creation errors below are one signature each (scored once, by regex), read two ways: the API server naming
        # the invalid field (`is invalid: <field>: <reason>`), or any other refusal.
        # rendered: JobCreationFailed (the JobSet controller's event; "the event uses the error(s) as the message") + the
        # API server's validation error (pkg/apis/batch/validation/validation.go, wrapped by NewInvalid's
        # `%s %q is invalid: %v`) from constants.go
        Pattern(r"(?:FailedCreate|JobCreationFailed)\b.*(?:Error creating|is invalid|forbidden|denied)", 0.8, _EVENT,
                entities=("JobSet",), check=_names_invalid_field, id="field_invalid",
                origin='https://github.com/kubernetes-sigs/jobset/blob/01a6277bf6231ac9cc72d967c15ba480c1ae0320/pkg/constants/constants.go',
                example='JobCreationFailed: Job.batch "llama-worker-0" is invalid: spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified'),
        # rendered: FailedCreate + "Error creating: %v" from controller_utils.go; filled from the format string in
        # controller_utils.go (the error: apimachinery's NewForbidden `%s %q is forbidden: %v`, errors.go)
        Pattern(r"(?:FailedCreate|JobCreationFailed)\b.*(?:Error creating|is invalid|forbidden|denied)", 0.8, _EVENT,
                entities=("JobSet",), check=_names_no_invalid_field,
                origin='https://github.com/kubernetes/kubernetes/blob/1f8996f8cec98af38ab4cba237421b28c1cef9a3/pkg/controller/controller_utils.go',
                example='FailedCreate: Error creating: pods "llama-worker-0-0-7xq2d" is forbidden: error looking up service account llama/pathways-sa: serviceaccount "pathways-sa" not found'),
        # rendered: JobCreationFailed + the API server's validation error from constants.go (as above)
        Pattern(r"(?:JobCreationFailed|HeadlessServiceCreationFailed): ", 0.7, _EVENT, entities=("JobSet",),
                check=_names_invalid_field, id="field_invalid",
                origin='https://github.com/kubernetes-sigs/jobset/blob/01a6277bf6231ac9cc72d967c15ba480c1ae0320/pkg/constants/constants.go',
                example='JobCreationFailed: Job.batch "llama-worker-0" is invalid: spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified'),
        # rendered: HeadlessServiceCreationFailed + the API server's error from constants.go; filled from the format
        # string in errors.go (NewForbidden: `%s %q is forbidden: %v`)
        Pattern(r"(?:JobCreationFailed|HeadlessServiceCreationFailed): ", 0.7, _EVENT, entities=("JobSet",),
                check=_names_no_invalid_field,
                origin='https://github.com/kubernetes-sigs/jobset/blob/01a6277bf6231ac9cc72d967c15ba480c1ae0320/pkg/constants/constants.go',
                example='HeadlessServiceCreationFailed: services "llama" is forbidden: exceeded quota: svc-quota, requested: services=1, used: services=10, limited: services=10'),
        # Any admission webhook whose backend is gone refuses the objects it intercepts (JobSet's, Kueue's, a mesh injector's).
        Pattern(r"failed calling webhook \"[^\"]+\": .{0,300}(?:no endpoints available|context deadline exceeded|connection refused|x509)",
                0.9, _EVENT, entities=("JobSet",), id="webhook_down",
                origin='https://github.com/kubernetes-sigs/jobset/blob/08dfbdfd682714a9ab929633eca8dc95315187e7/site/content/en/docs/troubleshooting/_index.md', example='failed calling webhook "mjobset.kb.io": failed to call webhook: Post "https://jobset-webhook-service.jobset-system.svc:443/mutate-jobset-x-k8s-io-v1alpha1-jobset?timeout=10s": no endpoints available for service "jobset-webhook-service"'),
        # rendered: JobCreationFailed + the Job validation error `only %q is supported when podFailurePolicy is specified`
        # (field.Invalid on spec.template.spec.restartPolicy) from validation.go; the pinned copy in the index predates
        # the rule, so this cites the file on master
        Pattern(r"only \"Never\" is supported when podFailurePolicy is specified", 0.95, _EVENT, entities=("JobSet",),
                id="pod_failure_policy",
                origin='https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/batch/validation/validation.go',
                example='JobCreationFailed: Job.batch "llama-worker-0" is invalid: spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified'),
    ),
    explanation=(
        Text("An admission webhook with no live backend refuses objects of {{ jobset }}, so the refused pods (or Jobs) never exist and the JobSet waits without an error of its own.",
             when=("webhook_down", "jobset_webhook_down")),
        Text("The API server rejects a child Job of {{ jobset }} as invalid, so that replicated job never gets pods and the rest of the JobSet waits for it.",
             when=("field_invalid", "pod_failure_policy"), unless=("webhook_down", "jobset_webhook_down")),
        Text("The JobSet {{ jobset }} (or one of its child Jobs) was refused when it was created, so some pods never existed.",
             unless=("webhook_down", "jobset_webhook_down", "field_invalid", "pod_failure_policy")),
    ),
    explains=("slices_not_ready", "workload_stalled", "proxy_unreachable"),
    lookalikes=("kueue_admission_blocked",),
    fixes=(
        Fix("Check that the JobSet controller and its webhook are running.", "kubectl get pods -n jobset-system", "read-only"),
        Fix("Read the creation error on the JobSet and its Jobs.",
            "kubectl describe jobset {{ jobset }} -n {{ namespace }} && kubectl get events -n {{ namespace }} | grep -E '{{ jobset }}.*(JobCreationFailed|FailedCreate)'", "read-only"),
        Fix("The webhook has no live backend: see why jobset-controller-manager is not Ready (Pending, ImagePullBackOff, OOMKilled), fix that, then restart it; the Jobs create their pods once the webhook answers.",
            "kubectl describe pods -n jobset-system -l control-plane=controller-manager && kubectl rollout restart deployment/jobset-controller-manager -n jobset-system", "high", when=("jobset_webhook_down",)),
        Fix("The named admission webhook has no live backend, so every pod it intercepts is refused: bring its service back (see the Service named in the error), or, if this namespace should not be intercepted at all, remove the label that opts it in (e.g. istio-injection=enabled); the Jobs retry pod creation on their own.",
            "kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations && kubectl get endpoints -A | grep -E 'istiod|webhook' && kubectl get namespace {{ namespace }} --show-labels", "high", when=("webhook_down",), unless=("jobset_webhook_down",)),
        Fix("After fixing the spec, recreate the JobSet (a JobSet's replicated Job templates are immutable).",
            "kubectl delete jobset {{ jobset }} -n {{ namespace }} && kubectl apply -f <fixed-manifest>.yaml", "high", unless=("jobset_webhook_down", "webhook_down")),
        Fix("Fix the worker template: podFailurePolicy needs restartPolicy: Never in the pod template; or drop podFailurePolicy and keep restartPolicy: OnFailure (what xpk and pathwaysutils generate).",
            None, "low", when=("pod_failure_policy",)),
        Fix("Keep the workload name at 22 characters or fewer: the coordinator label <name>-pathways-head-0-0.<name> must fit in 63.",
            None, "low", when=("name_too_long",), unless=("pod_failure_policy",)),
        Fix("Pin the controller image to a released tag (registry.k8s.io/jobset/jobset:<version>) and give it a CPU node it always fits on, so the webhook does not disappear with a node or a garbage-collected staging tag.",
            None, "low", when=("jobset_webhook_down",), unless=("pod_failure_policy", "name_too_long")),
        Fix("Fix `{{ invalid_field }}` in the JobSet's template (the API server says: {{ invalid_reason }}), check the change with `kubectl apply --dry-run=server -f <fixed-manifest>.yaml`, then recreate the JobSet.",
            None, "low", when=("field_invalid",), unless=("pod_failure_policy", "name_too_long", "jobset_webhook_down")),
        Fix("Fix the field the API server names in the error, then recreate the JobSet.",
            None, "low", unless=("pod_failure_policy", "name_too_long", "jobset_webhook_down", "field_invalid")),
    ),
    sources=("event", "object"),
    scope="spread", names_jobset=True, status_when_root="stalled",
)

KUEUE_ADMISSION_BLOCKED = FailureClass(
    id="kueue_admission_blocked", title="Kueue never admits the workload", phase="admission",
    component="Kueue ClusterQueue",
    patterns=(
        Pattern(r"couldn't assign flavors to pod set", 0.9, _EVENT, entities=("Workload", "JobSet"),
                origin='https://github.com/kubernetes-sigs/kueue/blob/ff69552e79ad21652c36caa97038382e55625cf7/keps/10852-inadmissible-workloads-observability/README.md', example="couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 2 more needed"),
        # rendered: Pending (Kueue's event) + its inadmissible message; filled from the format string in flavorassigner.go
        # ("insufficient unused quota for %s in flavor %s, %s more needed")
        Pattern(r"insufficient unused quota for google\.com/tpu in flavor", 0.95, _EVENT, entities=("Workload", "JobSet"),
                origin='https://github.com/kubernetes-sigs/kueue/blob/2ca1f53a674bd13ec0b21e3fb238f68005f45df4/pkg/scheduler/flavorassigner/flavorassigner.go',
                example="Pending: couldn't assign flavors to pod set worker: insufficient unused quota for google.com/tpu in flavor tpu-v5e, 16 more needed"),
        Pattern(r"(?:PriorityClass|priority class)\S* .{0,40}not found", 0.8, _EVENT, entities=("Workload", "JobSet"),
                id="priority_class_missing",
                origin='https://github.com/kubernetes-sigs/kueue/blob/ff69552e79ad21652c36caa97038382e55625cf7/pkg/controller/jobframework/workload_priority_test.go', example='WorkloadPriorityClass "missing" not found'),
        Pattern(r"insufficient quota for \S+ in flavor \S+.{0,200}> maximum capacity", 0.95, _EVENT, entities=("Workload", "JobSet"),
                id="over_capacity",
                origin='https://github.com/kubernetes-sigs/kueue/blob/ff69552e79ad21652c36caa97038382e55625cf7/CHANGELOG/CHANGELOG-0.13.md', example='insufficient quota for resource-type in flavor example-flavor, previously considered podsets requests (16) + current podset request (8) > maximum capacity (16)'),
        # rendered: ErrWorkloadCompose + the API server's NotFound error; filled from the format string in errors.go
        # (NewNotFound: `%s %q not found`)
        Pattern(r"(?i)priorityclass(?:es)?(?:\.scheduling\.k8s\.io)? \"[^\"]+\" not found", 0.85, _EVENT, entities=("Workload", "JobSet"),
                id="priority_class_missing",
                origin='https://github.com/kubernetes/kubernetes/blob/030880a5dc5449403c6d1f0aa146a7dc21d6c6dc/staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go',
                example='ErrWorkloadCompose: priorityclasses.scheduling.k8s.io "medium" not found'),
        # Kueue could not even build the Workload for the JobSet (a missing PriorityClass, an invalid pod set): it stays
        # suspended with no Workload to admit.
        # rendered: ErrWorkloadCompose + the message Kueue's troubleshooting guide shows for it, from troubleshooting_pods.md
        Pattern(r"^ErrWorkloadCompose: ", 0.85, _EVENT, entities=("JobSet",), id="compose_failed",
                origin='https://github.com/kubernetes-sigs/kueue/blob/57850e26936335ba36700153481079613379139c/site/content/en/docs/tasks/troubleshooting/troubleshooting_pods.md',
                example="ErrWorkloadCompose: 'my-pod-group' group has fewer runnable pods than expected"),
        Pattern(r"LocalQueue \S+ doesn't exist|ClusterQueue \S+ doesn't exist", 0.85, _EVENT, entities=("Workload", "JobSet"),
                origin='https://github.com/kubernetes-sigs/kueue/blob/ff69552e79ad21652c36caa97038382e55625cf7/keps/10852-inadmissible-workloads-observability/README.md', example="LocalQueue local-queue doesn't exist"),
        Pattern(r"ClusterQueue \S+ is inactive", 0.85, _EVENT, entities=("Workload", "JobSet"), id="queue_inactive",
                origin='https://github.com/kubernetes-sigs/kueue/blob/ff69552e79ad21652c36caa97038382e55625cf7/pkg/controller/core/workload_controller_inadmissible_test.go', example='ClusterQueue cq is inactive'),
        # Why a ClusterQueue is inactive, in its status condition: a flavor (or admission check) it names is missing.
        Pattern(r"references missing (?:ResourceFlavor|AdmissionCheck)|reason=(?:FlavorNotFound|AdmissionCheckNotFound)", 0.9,
                _EVENT, entities=("Workload", "JobSet"), id="queue_inactive",
                origin='https://github.com/kubernetes-sigs/kueue/blob/ff69552e79ad21652c36caa97038382e55625cf7/pkg/cache/scheduler/cache_test.go', example="Can't admit new workloads: references missing ResourceFlavor(s): flavor1."),
        # The ClusterQueue does not take workloads from this namespace (its spec.namespaceSelector).
        Pattern(r"(?i)namespace (?:doesn't|does not) match (?:the )?ClusterQueue(?:'s)? (?:namespace)?selector", 0.9, _EVENT,
                entities=("Workload", "JobSet"), id="namespace_not_selected",
                origin='https://github.com/kubernetes-sigs/kueue/blob/ff69552e79ad21652c36caa97038382e55625cf7/pkg/workload/resources.go', example="workload namespace doesn't match ClusterQueue selector"),
        # A Kueue-managed JobSet that stays suspended, with no reason of Kueue's in the data: Kueue has not admitted it.
        # rendered: SuspendedJobs + "jobset is suspended" (JobSetSuspendedReason / JobSetSuspendedMessage) from constants.go
        Pattern(r"^JobSet condition Suspended=True|^SuspendedJobs: jobset is suspended", 0.55, _EVENT, entities=("JobSet",),
                transient=True, needs="kueue_managed", id="suspended_only",
                origin='https://github.com/kubernetes-sigs/jobset/blob/01a6277bf6231ac9cc72d967c15ba480c1ae0320/pkg/constants/constants.go',
                example='SuspendedJobs: jobset is suspended'),
        # Any other reason Kueue gives for keeping a Workload pending: a candidate, dropped if the pods ran after it.
        # rendered: Pending (the reason Kueue gives a Workload it could not admit) + the condition message shown in
        # troubleshooting_jobs.md
        Pattern(r"^Pending: \S", 0.6, ("event",), entities=("Workload", "JobSet"), transient=True,
                origin='https://github.com/kubernetes-sigs/kueue/blob/00caa3119fc1a03a94ead6465e16cafbb7b831db/site/content/en/docs/tasks/troubleshooting/troubleshooting_jobs.md',
                example="Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 9 more needed"),
    ),
    explanation=(
        Text("Kueue will not admit the workload for {{ jobset }}: the ClusterQueue its LocalQueue points to does not select namespace {{ namespace }}, so the JobSet stays suspended and no pods are created.",
             when=("namespace_not_selected",)),
        Text("Kueue cannot admit the workload for {{ jobset }}: its ClusterQueue is inactive (typically it references a ResourceFlavor or AdmissionCheck that does not exist), so it admits nothing, the JobSet stays suspended and no pods are created.",
             when=("queue_inactive",), unless=("namespace_not_selected",)),
        Text("{{ jobset }} is submitted to Kueue and stays suspended: Kueue has not admitted it and no pod exists. The data does not say why (its Workload's conditions do): see the next checks.",
             when=("suspended_only",), unless=("namespace_not_selected", "queue_inactive", "compose_failed",
                                               "priority_class_missing", "over_capacity")),
        Text("Kueue cannot admit {{ jobset }}: it could not build the JobSet's Workload ({{ detail }}), so the JobSet stays suspended and no pods are created.",
             when=("compose_failed", "priority_class_missing"), unless=("namespace_not_selected", "queue_inactive")),
        Text("Kueue can never admit the workload for {{ jobset }}: it asks for more google.com/tpu than its ClusterQueue can grant even when idle, so the JobSet stays suspended with no pods.",
             when=("over_capacity",), unless=("namespace_not_selected", "queue_inactive", "compose_failed", "priority_class_missing")),
        Text("Kueue did not admit the workload for {{ jobset }}: its ClusterQueue has no free quota (or flavor) for the TPUs it asks for, so the JobSet stays suspended and no pods are created.",
             unless=("namespace_not_selected", "queue_inactive", "over_capacity", "compose_failed", "priority_class_missing")),
    ),
    explains=("slices_not_ready", "workload_stalled"),
    lookalikes=("tpu_capacity_unavailable",),
    fixes=(
        Fix("See why the Workload is not admitted.", "kubectl get workloads -n {{ namespace }} && kubectl describe workloads -n {{ namespace }}", "read-only"),
        Fix("The PriorityClass the JobSet names does not exist, so Kueue cannot build its Workload: list the PriorityClasses (and Kueue's WorkloadPriorityClasses), then create the missing one or point the JobSet's priorityClassName / kueue.x-k8s.io/priority-class label at one that exists, and resubmit.",
            "kubectl get priorityclasses && kubectl get workloadpriorityclasses", "read-only", when=("priority_class_missing", "compose_failed")),
        Fix("The ClusterQueue's spec.namespaceSelector does not select namespace {{ namespace }}: label the namespace as the selector asks, or widen the selector (an empty namespaceSelector {} admits every namespace).",
            "kubectl get clusterqueues -o custom-columns=NAME:.metadata.name,NAMESPACE_SELECTOR:.spec.namespaceSelector && kubectl get namespace {{ namespace }} --show-labels", "read-only", when=("namespace_not_selected",)),
        Fix("An inactive ClusterQueue admits nothing whatever its quota: see its Active condition (FlavorNotFound names the missing ResourceFlavor) and the ResourceFlavors that exist.",
            "kubectl describe clusterqueues && kubectl get resourceflavors", "read-only", when=("queue_inactive",), unless=("namespace_not_selected",)),
        Fix("Free quota by deleting finished JobSets, or raise the ClusterQueue nominalQuota for google.com/tpu.",
            "kubectl get clusterqueues -o wide", "read-only", unless=("namespace_not_selected", "queue_inactive")),
        Fix("See what holds the flavor's quota and what the ClusterQueue can lend or borrow.",
            "kubectl get workloads -A -o wide && kubectl describe clusterqueue $(kubectl get localqueue -n {{ namespace }} -o jsonpath='{.items[0].spec.clusterQueue}')", "read-only"),
        Fix("Submit to a LocalQueue whose ClusterQueue admits this namespace, or add this namespace to the ClusterQueue's spec.namespaceSelector (matchLabels / matchExpressions on kubernetes.io/metadata.name); the suspended JobSet is admitted once the selector matches.",
            None, "low", when=("namespace_not_selected",)),
        Fix("Make the ClusterQueue active again: create the ResourceFlavor it references (with the node labels of the TPU pool, e.g. cloud.google.com/gke-tpu-accelerator and topology), or edit spec.resourceGroups[].flavors[].name to the ResourceFlavor that exists now; the suspended JobSet is admitted once the queue is active.",
            None, "low", when=("queue_inactive",), unless=("namespace_not_selected",)),
        Fix("The request is above the most the queue can ever grant, so waiting will not help: raise spec.resourceGroups[].flavors[].resources[google.com/tpu].nominalQuota (or borrowingLimit within the cohort) to at least the JobSet's chips, or submit fewer slices.",
            None, "low", when=("over_capacity",), unless=("namespace_not_selected", "queue_inactive")),
        Fix("The quota is held by other admitted workloads: wait for them, delete finished JobSets that still hold it, or raise the ClusterQueue's nominalQuota / let it borrow from its cohort.",
            None, "low", unless=("namespace_not_selected", "queue_inactive", "over_capacity")),
    ),
    sources=("event",),
    scope="spread", names_jobset=True, status_when_root="stalled",
)

TPU_CAPACITY_UNAVAILABLE = FailureClass(
    id="tpu_capacity_unavailable", title="No TPU capacity of this type and topology", phase="scheduling",
    component="GKE node pool / cluster autoscaler",
    patterns=(
        Pattern(r"scale\.up\.error\.out\.of\.resources", 0.95, ("event",), entities=("Pod", "NodePool"),
                origin='https://github.com/GoogleCloudPlatform/gcpdiag/blob/main/website/content/en/runbook/steps/gke/ca-out-of-resources.md', example='Check for "scale.up.error.out.of.resources" log entries'),
        Pattern(r"(?:ZONE_RESOURCE_POOL_EXHAUSTED|GCE_STOCKOUT|[Rr]esource pool exhausted|does not have enough resources available to fulfill the request)",
                0.95, ("event", "node", "object"), entities=("Pod", "NodePool"),
                origin='https://github.com/kubernetes/autoscaler/blob/55c37cd5eb550756c5ccc5a89e9068d77797e575/cluster-autoscaler/cloudprovider/gce/autoscaling_gce_client.go', example='return errorCode == "RESOURCE_POOL_EXHAUSTED" || errorCode == "ZONE_RESOURCE_POOL_EXHAUSTED" || errorCode == "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"'),
        # rendered: FailedScaleUp + the autoscaler's message quoted in the issue. The autoscaler retries a failed
        # scale-up (its backoff): when the pod the event names ran afterwards, the failure passed.
        Pattern(r"FailedScaleUp: ", 0.7, ("event",), entities=("Pod",), transient=True,
                origin='https://github.com/huggingface/Google-Cloud-Containers/issues/126',
                example='FailedScaleUp: Node scale up in zones us-central1-c associated with this pod failed: GCE quota exceeded. Pod is at risk of not being scheduled.'),
        # the autoscaler's NotTriggerScaleUp message, matched on its own wording
        Pattern(r"pod didn't trigger scale-up.*(?:in backoff after failed scale-up|max node group size reached)", 0.7, ("event",),
                entities=("Pod",), transient=True, origin="https://gist.github.com/Jaykul/0fd178825a5d0bcbdb46175ad2dc73ed",
                example="Message: pod didn't trigger scale-up: 1 node(s) had untolerated taint {CriticalAddonsOnly: true}, 1 in backoff after failed scale-up"),
        # rendered: FailedScheduling + the scheduler's summary; filled from the format string in fit.go
        # ("Insufficient %v" with the TPU resource name)
        Pattern(r"Insufficient (?:google\.com/)?tpu", 0.6, _EVENT, entities=("Pod",), transient=True,
                check=_not_all_nodes_mismatch,
                origin='https://github.com/kubernetes/kubernetes/blob/903b1f7e2884a152477f870ece3460be3d5025d1/pkg/scheduler/framework/plugins/noderesources/fit.go',
                example='FailedScheduling: 0/4 nodes are available: 4 Insufficient google.com/tpu.'),
        Pattern(r"(?:does not have available resources for the request|reservation .{0,120}(?:exhausted|is fully used|no available capacity))",
                0.9, ("event", "node", "object"), entities=("Pod", "NodePool"), id="reservation_full",
                origin='https://github.com/kubernetes/autoscaler/blob/55c37cd5eb550756c5ccc5a89e9068d77797e575/cluster-autoscaler/cloudprovider/gce/autoscaling_gce_client_test.go', example="Specified reservation 'rsv-name' does not have available resources for the request."),
        # Compute Engine refusing an instance on a specific reservation (audit log or operation error).
        Pattern(r"(?i)reservation .{0,160}does not have (?:sufficient|enough|available) (?:capacity|resources)|All reserved instances are (?:currently )?in use|RESERVATION_CAPACITY_EXCEEDED",
                0.9, ("event", "node", "object"), entities=("Pod", "NodePool"),
                note="the reservation the pool consumes has no free capacity", id="reservation_full",
                origin='https://github.com/kubernetes/autoscaler/blob/55c37cd5eb550756c5ccc5a89e9068d77797e575/cluster-autoscaler/cloudprovider/gce/autoscaling_gce_client.go', example='ErrorReservationCapacityExceeded = "RESERVATION_CAPACITY_EXCEEDED"'),
    ),
    explanation="The worker pods of {{ jobset }} cannot be scheduled: there is no free TPU capacity of the requested type and topology, and the scale-up failed for lack of resources.",
    explains=("slices_not_ready", "workload_stalled", "node_selector_mismatch", "hot_swap_failure"),
    lookalikes=("tpu_quota_exceeded", "node_selector_mismatch", "kueue_admission_blocked"),
    fixes=(
        Fix("See which pods are pending and why.", "kubectl get pods -n {{ namespace }} -l jobset.sigs.k8s.io/jobset-name={{ jobset }} --field-selector=status.phase=Pending -o wide", "read-only"),
        Fix("Check the autoscaler's scale-up results for the TPU node pools.",
            "gcloud logging read 'log_id(\"container.googleapis.com/cluster-autoscaler-visibility\") AND resource.labels.cluster_name=\"{{ cluster }}\"' --project={{ project }} --freshness=2h --limit=20", "read-only"),
        Fix("The pool is pinned to a reservation whose capacity is all in use: see how much of it is used and which node pools or VMs consume it.",
            "gcloud compute reservations list --project={{ project }} --format='table(name,zone,specificReservation.count,specificReservation.inUseCount)'", "read-only", when=("reservation_full",)),
        Fix("If the pool consumes a specific reservation, see how much of it is in use.",
            "gcloud compute reservations list --project={{ project }} --format='table(name,zone,specificReservation.count,specificReservation.inUseCount)'", "read-only", unless=("reservation_full",)),
        Fix("Free the reservation (delete idle node pools or VMs that hold its blocks, including pools left in ERROR), ask its owner for blocks, or point the node pool at a reservation with free capacity (--reservation-affinity=specific --reservation=...); otherwise use DWS flex-start or another zone.",
            None, "low", when=("reservation_full",)),
        Fix("Run on a reservation (xpk --reservation=...), use DWS flex-start or queued provisioning, or another zone; delete node pools left in ERROR that still hold the reservation.",
            None, "low", unless=("reservation_full",)),
    ),
    sources=("event",),
    # The scheduler's "didn't match Pod's node affinity/selector" describes the nodes that exist, before any scale-up;
    # a scale-up tried (and refused for capacity) for the same pods proves a pool matches, whichever was logged first.
    explains_earlier=("node_selector_mismatch",),
    scope="spread", names_jobset=True, status_when_root="stalled", leans_on=("autoscaler",),
)

TPU_QUOTA_EXCEEDED = FailureClass(
    id="tpu_quota_exceeded", title="Scale-up blocked by Compute Engine quota", phase="scheduling",
    component="Compute Engine quota",
    patterns=(
        Pattern(r"scale\.up\.error\.quota\.exceeded", 0.95, ("event",), entities=("Pod", "NodePool"),
                origin='https://github.com/GoogleCloudPlatform/gcpdiag/blob/main/website/content/en/runbook/steps/gke/ca-quota-exceeded.md', example='Check for "scale.up.error.quota.exceeded" log entries'),
        Pattern(r"(?:GCE_QUOTA_EXCEEDED|QUOTA_EXCEEDED|Insufficient quota to satisfy the request|Quota '[A-Z0-9_]+' exceeded)",
                0.95, ("event", "node", "object"), entities=("Pod", "NodePool"),
                origin='https://github.com/kubernetes/autoscaler/blob/55c37cd5eb550756c5ccc5a89e9068d77797e575/cluster-autoscaler/cloudprovider/gce/autoscaling_gce_client.go', example='ErrorCodeQuotaExceeded = "QUOTA_EXCEEDED"'),
        # rendered: FailedScaleUp + the autoscaler's message quoted in the issue
        Pattern(r"FailedScaleUp: .{0,200}GCE quota exceeded", 0.9, ("event",), entities=("Pod",),
                origin='https://github.com/huggingface/Google-Cloud-Containers/issues/126',
                example='FailedScaleUp: Node scale up in zones us-central1-c associated with this pod failed: GCE quota exceeded. Pod is at risk of not being scheduled.'),
    ),
    explanation="Scale-up for {{ jobset }} failed on Compute Engine quota: the project's regional TPU quota is lower than the slices need.",
    explains=("slices_not_ready", "workload_stalled", "tpu_capacity_unavailable", "node_selector_mismatch"),
    lookalikes=("tpu_capacity_unavailable", "kueue_admission_blocked"),
    fixes=(
        Fix("See the TPU quotas of the region.", "gcloud compute regions describe {{ region }} --project={{ project }} --format='table(quotas.metric,quotas.limit,quotas.usage)'", "read-only"),
        Fix("See the TPU quota the scale-up hit (TPUS_PER_TPU_FAMILY and the per-generation chip quotas) and its usage.",
            "gcloud compute regions describe {{ region }} --project={{ project }} --flatten=quotas --filter='quotas.metric~TPU' --format='table(quotas.metric,quotas.limit,quotas.usage)'", "read-only"),
        Fix("Request a quota increase for the TPU family in the Cloud console (IAM & Admin > Quotas), or run on reserved capacity, which needs no on-demand quota.", None, "low"),
    ),
    sources=("event",),
    explains_earlier=("node_selector_mismatch",),  # as for capacity: a refused scale-up proves a pool matches
    scope="spread", names_jobset=True, status_when_root="stalled", leans_on=("autoscaler",),
)

NODE_SELECTOR_MISMATCH = FailureClass(
    id="node_selector_mismatch", fixed_in_workload=True, title="Selectors or placement match no node", phase="scheduling",
    component="pod spec (nodeSelector / affinity / exclusive placement)",
    patterns=(
        Pattern(r"didn't match Pod's node affinity/selector", 0.95, _EVENT, entities=("Pod",), transient=True,
                check=_all_nodes_mismatch,
                origin='https://github.com/kubernetes-sigs/kueue/blob/ff69552e79ad21652c36caa97038382e55625cf7/site/content/en/docs/tasks/troubleshooting/troubleshooting_jobs.md', example="0/9 nodes are available: 9 node(s) didn't match Pod's node affinity/selector."),
        Pattern(r"0/\d+ nodes are available: .*didn't match Pod's node affinity/selector", 0.9, _EVENT, entities=("Pod",),
                transient=True, check=_placement_not_selector_only,
                origin='https://github.com/kubernetes-sigs/kueue/blob/ff69552e79ad21652c36caa97038382e55625cf7/site/content/en/docs/tasks/troubleshooting/troubleshooting_jobs.md', example="0/9 nodes are available: 9 node(s) didn't match Pod's node affinity/selector."),
        Pattern(r"didn't match Pod's node affinity/selector", 0.35, _EVENT, entities=("Pod",), transient=True,
                origin='https://github.com/kubernetes-sigs/kueue/blob/ff69552e79ad21652c36caa97038382e55625cf7/site/content/en/docs/tasks/troubleshooting/troubleshooting_jobs.md', example="0/9 nodes are available: 9 node(s) didn't match Pod's node affinity/selector."),
        Pattern(r"(?:Invalid topology!!!|invalid TPU topology for worker type|Unsupported TPU type|Invalid topology format)",
                0.9, ("event", "object", "container"), entities=("Pod", "JobSet"),
                origin='https://github.com/google/pathways-job/blob/872d4e35fd3b9cb7aa1bba75f9e7e193d5e2d6bd/internal/controller/pathwaysjob_controller.go',
                example='return "", fmt.Errorf("invalid TPU topology for worker type")'),
        # rendered: FailedScheduling + the scheduler's summary with ErrReasonAntiAffinityRulesNotMatch from filtering.go
        Pattern(r"didn't match pod anti-affinity rules", 0.6, _EVENT, entities=("Pod",), transient=True,
                origin='https://github.com/kubernetes/kubernetes/blob/53f1b9d6f8de259644c05a25aa7ac8c6a67258e2/pkg/scheduler/framework/plugins/interpodaffinity/filtering.go',
                example="FailedScheduling: 0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules."),
        Pattern(r"follower pod node selector not set", 0.4, _EVENT, entities=("Pod",), origin='https://github.com/kubernetes-sigs/jobset/blob/08dfbdfd682714a9ab929633eca8dc95315187e7/site/content/en/docs/troubleshooting/_index.md', example='admission webhook "vpod.kb.io" denied the request: follower pod node selector not set'),
    ),
    explanation="No node matches the placement rules of {{ pod }}: its accelerator/topology/node-pool selectors (or exclusive placement) exclude every node, so capacity is not the problem.",
    explains=("slices_not_ready", "workload_stalled"),
    lookalikes=("tpu_capacity_unavailable",),
    fixes=(
        Fix("Compare the pod's selectors with the labels of the TPU node pools.",
            "kubectl get pod {{ pod }} -n {{ namespace }} -o jsonpath='{.spec.nodeSelector}' && kubectl get nodes -L cloud.google.com/gke-tpu-accelerator -L cloud.google.com/gke-tpu-topology -L cloud.google.com/gke-nodepool", "read-only"),
        Fix("If the head pod is the one pending, the cluster has no CPU pool for it: the head selects cloud.google.com/gke-nodepool=cpu-np and needs ~24 CPUs and 132G+ memory; create the pool (or recreate the cluster with xpk cluster create-pathways).",
            "gcloud container node-pools create cpu-np --cluster={{ cluster }} --location={{ location }} --project={{ project }} --machine-type=n2-standard-64 --num-nodes=1", "high"),
        Fix("Regenerate the manifest (xpk or pathwaysutils PathwaysJobSet) so cloud.google.com/gke-tpu-accelerator, cloud.google.com/gke-tpu-topology, the RM --instance_type and the worker completions match the node pool; delete stale JobSets that still hold nodes under exclusive placement.", None, "low"),
    ),
    sources=("event",),
    scope="spread", names_jobset=True, status_when_root="stalled", leans_on=("autoscaler",),
)

FAMILY = (JOBSET_REJECTED, KUEUE_ADMISSION_BLOCKED, TPU_CAPACITY_UNAVAILABLE, TPU_QUOTA_EXCEEDED, NODE_SELECTOR_MISMATCH)
