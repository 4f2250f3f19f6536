"""Storage and identity: the GCS scratch location, bucket permissions, checkpoints and the compilation cache."""

from __future__ import annotations

import re

from .types import FactRule, FailureClass, Fix, Pattern, RuleContext

_B = ("Pod", "Container", "Bucket")
_HTTP_429 = re.compile(r"\b429\b")


def _throttled(c: RuleContext) -> bool:
    """The write failed because GCS answered HTTP 429 (too many mutations of one object)."""
    return _HTTP_429.search(c.text) is not None


def _not_throttled(c: RuleContext) -> bool:
    return not _throttled(c)


GCS_SCRATCH_MISCONFIGURED = FailureClass(
    id="gcs_scratch_misconfigured", fixed_in_workload=True, title="The Pathways GCS scratch location is unusable", phase="start",
    component="pathways-rm / pathways-worker --gcs_scratch_location",
    patterns=(
        Pattern(r"The specified bucket does not exist", 0.9, ("container",), entities=_B, needs="the_scratch_bucket",
                origin="https://docs.cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/troubleshooting-pathways",
                example="Permanent error, with a last message of The specified bucket does not exist.; Error while initializing "
                        "persistent cache storage gcs"),
        Pattern(r"Lifecycle matches_prefix cannot specify more than \d+ prefixes", 0.97, ("container",), entities=_B,
                id="lifecycle_full", origin="https://docs.cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/troubleshooting-pathways",
                example="INVALID_ARGUMENT : Permanent error, with a last message of Lifecycle matches_prefix cannot specify more "
                        "than 50 prefixes per config.; Error while initializing persistent cache storage Cloud Storage"),
        Pattern(r"Error while initializing persistent cache storage", 0.7, ("container",), entities=_B, origin="https://docs.cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/troubleshooting-pathways",
                example="Permanent error, with a last message of The specified bucket does not exist.; Error while initializing "
                        "persistent cache storage gcs"),
    ),
    explanation="The Pathways scratch location {{ bucket }} cannot be used ({{ detail }}), so the resource manager or workers stop at start-up.",
    explains=("slices_not_ready", "workload_stalled", "user_code_error"),
    lookalikes=("gcs_permission_denied",),
    fixes=(
        Fix("Check the bucket exists and see its lifecycle rules.", "gcloud storage buckets describe {{ bucket }} --format='yaml(name,location,lifecycle_config)'", "read-only"),
        Fix("The bucket's lifecycle config already holds 50 matches_prefix entries (one per past workload prefix): remove the stale rules, or give this workload a bucket of its own and pass it with xpk --pathways-gcs-location=gs://<bucket>/<path>.",
            "gcloud storage buckets describe {{ bucket }} --format='json(lifecycle_config)'", "read-only", when=("lifecycle_full",)),
        Fix("Point the workload at a bucket that exists (check the name in --gcs_scratch_location for typos) with xpk --pathways-gcs-location=gs://<bucket>/<path>, or create the named bucket in the cluster's region.",
            "gcloud storage buckets list --project={{ project }} --format='value(name,location)'", "read-only", unless=("lifecycle_full",)),
        Fix("Write the rules worth keeping to lifecycle.json ({\"rule\": [...]}) and apply it, replacing the full config.",
            "gcloud storage buckets update {{ bucket }} --lifecycle-file=lifecycle.json", "high", when=("lifecycle_full",)),
        Fix("Create the bucket the workload names (only if that name is the intended one), in the cluster's region.",
            "gcloud storage buckets create {{ bucket }} --project={{ project }} --location={{ region }} --uniform-bucket-level-access", "high", unless=("lifecycle_full",)),
    ),
    bucket_from_scratch=True,
)

GCS_PERMISSION_DENIED = FailureClass(
    id="gcs_permission_denied", fixed_in_workload=True, title="An identity lacks access to a bucket", phase="start/run",
    component="IAM on Cloud Storage (node service account or Workload Identity)",
    patterns=(
        Pattern(r"does not have storage\.[a-zA-Z]+\.[a-zA-Z]+ access", 0.95, ("container",), entities=_B + ("ServiceAccount",),
                origin="https://github.com/spaceml-org/STARCOP/issues/6",
                example="does not have storage.objects.get access to the Google Cloud Storage object. Permission "
                        "'storage.objects.get' denied on resource (or it may not exist)."),
        Pattern(r"Permission '?storage\.[a-zA-Z]+\.[a-zA-Z]+'? denied", 0.9, ("container",), entities=_B + ("ServiceAccount",),
                origin="https://github.com/spaceml-org/STARCOP/issues/6",
                example="Permission 'storage.objects.get' denied on resource (or it may not exist)."),
        Pattern(r"iam\.serviceAccounts\.getAccessToken'? denied", 0.95, ("container",), entities=_B + ("ServiceAccount",),
                origin="https://github.com/camunda/camunda/issues/31106",
                example="Unable to generate access token; IAM returned 403 Forbidden: Permission "
                        "'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist)."),
        Pattern(r"Unable to generate access token; IAM returned (?:403|404)", 0.9, ("container",), entities=_B,
                origin="https://github.com/camunda/camunda/issues/31106",
                example="Unable to generate access token; IAM returned 403 Forbidden: Permission "
                        "'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist)."),
        # The node's OAuth access scopes (not IAM) refuse the call: e.g. the default devstorage.read_only scope on a write.
        Pattern(r"Provided scope\(s\) are not authorized|ACCESS_TOKEN_SCOPE_INSUFFICIENT|[Rr]equest had insufficient authentication scopes",
                0.95, ("container",), entities=_B, note="the VM's access scopes do not allow this Cloud Storage call",
                id="access_scopes", origin="https://github.com/googleapis/google-cloud-cpp/issues/7334",
                example='"message": "Provided scope(s) are not authorized",'),
        Pattern(r"(?:PERMISSION_DENIED|AccessDenied|403 Forbidden).{0,200}(?:storage\.googleapis\.com|gs://|bucket)", 0.7,
                ("container",), entities=_B, origin="https://github.com/zetaalphavector/InPars/issues/13",
                example="AccessDeniedException: 403 xxx does not have storage.objects.list access to the Google Cloud Storage "
                        "bucket."),
        # A bucket encrypted with a customer-managed key (CMEK): the refusal is the KMS key's, not the bucket's IAM.
        Pattern(r"(?i)Permission denied on Cloud KMS key|cloudkms\.cryptoKeyVersions\.useTo(?:En|De)crypt|"
                r"\bKMS key\b.{0,120}\b(?:denied|not authorized)", 0.95, ("container",), entities=_B, id="kms_key",
                note="the Cloud Storage service agent may not use the bucket's CMEK key",
                origin="https://github.com/googleapis/nodejs-storage/issues/1254",
                example="Error: Permission denied on Cloud KMS key. Please ensure that your Cloud Storage service account has "
                        "been authorized to use this key."),
    ),
    explanation="{{ principal }} may not use {{ bucket }} ({{ detail }}); Pathways head and worker pods use hostNetwork, so they act as the node's service account unless Workload Identity applies.",
    explains=("checkpoint_failure", "compilation_cache_failure", "user_code_error", "slices_not_ready", "gcs_scratch_misconfigured"),
    lookalikes=("gcs_scratch_misconfigured", "checkpoint_failure"),
    fixes=(
        Fix("See who has access to the bucket.", "gcloud storage buckets get-iam-policy {{ bucket }} --format=json", "read-only"),
        Fix("IAM is not the problem: the node pool's OAuth access scopes do not allow the call (a pool created with the default storage scope, devstorage.read_only, can read but not write). See the pool's scopes.",
            "gcloud container node-pools list --cluster={{ cluster }} --location={{ location }} --project={{ project }} --format='table(name,config.oauthScopes)'", "read-only",
            when=("access_scopes",)),
        Fix("The bucket is encrypted with a customer-managed key (CMEK) that the project's Cloud Storage service agent may not use: see which key it is.",
            "gcloud storage buckets describe {{ bucket }} --format='value(default_kms_key)' && gcloud storage service-agent --project={{ project }}", "read-only",
            when=("kms_key",)),
        Fix("Grant the project's Cloud Storage service agent roles/cloudkms.cryptoKeyEncrypterDecrypter on that key (IAM on the bucket is not the problem), then rerun; or point the checkpoints at a bucket without CMEK.",
            "gcloud kms keys add-iam-policy-binding <key> --keyring=<keyring> --location=<key-location> --member=serviceAccount:$(gcloud storage service-agent --project={{ project }}) --role=roles/cloudkms.cryptoKeyEncrypterDecrypter", "high",
            when=("kms_key",)),
        Fix("If the error names access scopes rather than a permission, the node pool's OAuth scopes are too narrow: see them.",
            "gcloud container node-pools list --cluster={{ cluster }} --location={{ location }} --project={{ project }} --format='table(name,config.oauthScopes)'", "read-only",
            unless=("access_scopes", "kms_key")),
        Fix("Recreate the TPU node pool with the cloud-platform access scope (gcloud container node-pools create ... --scopes=cloud-platform, or at least storage-rw) and control access with IAM, or use Workload Identity Federation for GKE, which does not depend on the VM's scopes; access scopes cannot be changed on an existing pool.",
            None, "high", when=("access_scopes",)),
        Fix("Where the node pool's access scopes are too narrow (devstorage.read_only), recreate it with --scopes=cloud-platform and control access with IAM.",
            None, "high", unless=("access_scopes", "kms_key")),
        Fix("Grant the identity object access on the bucket (the node service account for hostNetwork Pathways pods, or the Workload Identity principal).{% if permission %} The error names the missing permission, {{ permission }}: the role you grant must include it (`gcloud iam roles describe ROLE` lists a role's permissions).{% endif %}",
            "gcloud storage buckets add-iam-policy-binding {{ bucket }} --member=serviceAccount:{{ service_account }} --role=roles/storage.objectAdmin", "high",
            unless=("kms_key",)),
    ),
    facts=(
        FactRule(0.9, role=("*",), http=(403,), entities=("Pod", "Container", "Bucket", "ServiceAccount"),
                 note="Cloud Storage answered 403 Forbidden on an object the workload uses"),
        FactRule(0.85, role=("*",), code=("PERMISSION_DENIED",), entities=("Pod", "Container", "Bucket", "ServiceAccount"),
                 note="PERMISSION_DENIED on a Cloud Storage object"),
    ),
)

CHECKPOINT_FAILURE = FailureClass(
    id="checkpoint_failure", fixed_in_workload=True, title="Orbax checkpoint save or restore failed", phase="run",
    component="Orbax / TensorStore in the client",
    patterns=(
        Pattern(r"(?i)(?:orbax|tensorstore).{0,200}(?:NOT_FOUND|not found|No such file|FileNotFoundError|does not exist)", 0.85,
                ("container",), entities=("Pod", "Container"), id="step_missing", origin="https://github.com/google/orbax/issues/924",
                example='ValueError: NOT_FOUND: Error opening "zarr" driver: Metadata at local file '
                        '"/home/black/monopi/orbax-test/a/.zarray" does not exist'),
        # TensorStore, as Orbax surfaces it: an array's metadata or data is missing under the checkpoint path.
        Pattern(r"NOT_FOUND: Error opening \"(?:zarr3?|n5|ocdbt|json)\" driver: .{0,400}does not exist", 0.9,
                ("container",), entities=("Pod", "Container", "Bucket"), id="step_missing", origin="https://github.com/google/orbax/issues/924",
                example='ValueError: NOT_FOUND: Error opening "zarr" driver: Metadata at local file '
                        '"/home/black/monopi/orbax-test/a/.zarray" does not exist'),
        # A local (non-shared) directory on multi-host / Pathways persistence: each host writes its shards to its own disk.
        # (TensorStore names the kvstore it failed on: "... at local file \"<dir>/<step>.orbax-checkpoint-tmp...\"")
        Pattern(r"at local file \"[^\"]*\.orbax-checkpoint-tmp", 0.95, ("container",), entities=("Pod", "Container"),
                note="the checkpoint directory is a local path; with Pathways persistence or multi-host, use gs://", id="local_path",
                origin='https://github.com/google/orbax/issues/2837',
                example='ValueError: NOT_FOUND: Error writing "params.params.decoder.decoder_norm.scale/c/0" in OCDBT database at local file "/home/user/maxtext-checkpoints/r1-distill-llama-8b/0.orbax-checkpoint-tmp/items.orbax-checkpoint-tmp/ocdbt.process_0/"'),
        Pattern(r"(?:OCDBT|Casting during save) not supported for Pathways", 0.9, ("container",), entities=("Pod", "Container"),
                origin="https://github.com/AI-Hypercomputer/pathways-utils/blob/89c4651e3d611a8e53eb11170d12f4f6135e699d/pathwaysutils/persistence/orbax_handler.py",
                example='raise ValueError("OCDBT not supported for Pathways.")'),
        # An exception raised by Orbax itself (its own error types), e.g. StepAlreadyExistsError on a save.
        Pattern(r"^orbax\.checkpoint\.(?:[a-z_]+\.)*[A-Z]\w*(?:Error|Exception):", 0.9, ("container",), entities=("Pod", "Container"),
                origin='https://github.com/google/orbax/issues/2657',
                example='orbax.checkpoint.checkpoint_manager.StepAlreadyExistsError: Checkpoint for step 2000 already exists.'),
        Pattern(r"Checkpoint for step \d+ already exists", 0.9, ("container",), entities=("Pod", "Container"),
                note="the checkpoint directory already holds this step (a reused directory with restore off)", id="step_exists",
                origin='https://github.com/google/orbax/issues/2657',
                example='orbax.checkpoint.checkpoint_manager.StepAlreadyExistsError: Checkpoint for step 2000 already exists.'),
        # The step asked for is not there (pruned by max_to_keep, never finished, or a wrong path): Orbax's own wording.
        Pattern(r"(?:FileNotFoundError|ValueError|NotFoundError): (?:No )?[Cc]heckpoint (?:at|for step \d+ at|found at) \S+(?: not found| does not exist)?",
                0.85, ("container",), entities=("Pod", "Container", "Bucket"),
                note="the checkpoint step the run restores from does not exist", id="step_missing",
                origin="recording:orbax-missing-step", example="FileNotFoundError: Checkpoint at /tmp/rec-ckpt-missing-step/500 not found."),
        # TensorStore's own wording of a failed write, whatever the cause it appends: one signature (scored once, by its
        # regex) read two ways, as GCS throttling the write (HTTP 429) or any other cause.
        Pattern(r"Error writing \"[^\"]+\" in (?:OCDBT database|zarr3? array|n5 array|\"gs://)", 0.85, ("container",),
                entities=("Pod", "Container", "Bucket"), check=_throttled, id="throttled",
                origin='https://github.com/google/orbax/issues/2837',
                example='ValueError: NOT_FOUND: Error writing "params.params.decoder.decoder_norm.scale/c/0" in OCDBT database at local file "/home/user/maxtext-checkpoints/r1-distill-llama-8b/0.orbax-checkpoint-tmp/items.orbax-checkpoint-tmp/ocdbt.process_0/"'),
        Pattern(r"Error writing \"[^\"]+\" in (?:OCDBT database|zarr3? array|n5 array|\"gs://)", 0.85, ("container",),
                entities=("Pod", "Container", "Bucket"), check=_not_throttled,
                origin='https://github.com/google/orbax/issues/2837',
                example='ValueError: NOT_FOUND: Error writing "params.params.decoder.decoder_norm.scale/c/0" in OCDBT database at local file "/home/user/maxtext-checkpoints/r1-distill-llama-8b/0.orbax-checkpoint-tmp/items.orbax-checkpoint-tmp/ocdbt.process_0/"'),
        # Orbax frames in a traceback only support the exception line that ends it.
        Pattern(r"File \"[^\"]*/orbax/checkpoint/[^\"]*\", line \d+", 0.3, ("container",), entities=("Pod", "Container"),
                origin="recording:orbax-missing-step",
                example='  File "/tmp/ox/orbax/checkpoint/checkpoint_manager.py", line 1759, in restore'),
    ),
    explanation="An Orbax checkpoint save/restore in {{ pod }} failed ({{ detail }}) for a reason other than permissions.",
    explains=("user_code_error",),
    lookalikes=("gcs_permission_denied",),
    fixes=(
        Fix("Read the full Orbax error in the client log.", "kubectl logs {{ pod }} -n {{ namespace }} -c {{ container }} --tail=300", "read-only"),
        Fix("GCS refused the checkpoint's writes with HTTP 429: Cloud Storage allows about one write per second to the same object name, and a save where every host rewrites the same small objects (zarr .zarray metadata without OCDBT) hits it. Save with OCDBT (orbax PyTreeCheckpointHandler(use_ocdbt=True), the default in current Orbax) so each host writes its own files, or let only the primary host write metadata; retrying with backoff does not help while all hosts write at once.",
            None, "low", when=("throttled",)),
        Fix("Orbax will not overwrite a step that is already in the checkpoint directory: this run writes into a directory that holds an earlier run's steps (same run name or path) while it trains from scratch (restore turned off). Either resume from the directory (turn restore back on so the manager starts from latest_step()), or give the run a new checkpoint directory / run name; delete the old steps only if they are not needed.",
            None, "low", when=("step_exists",), unless=("throttled",)),
        Fix("The checkpoint directory is a local path: with Pathways persistence (or any multi-host run) every worker writes its shards to its own disk, so the client cannot see them. Checkpoint to a gs:// path every host can reach (or a GCSFuse mount backed by one).",
            None, "low", when=("local_path",), unless=("throttled", "step_exists")),
        Fix("The run restores from a checkpoint step that is not there ({{ detail.rstrip('.') }}): it was pruned by max_to_keep, never finished, or the path is wrong. List the steps that exist under the checkpoint directory and point the restore at one of them (MaxText: load_parameters_path=<dir>/<step>/items or load_full_state_path; Orbax: CheckpointManager.latest_step()), or keep the steps a later run needs (max_to_keep / keep_period).",
            None, "low", when=("step_missing",), unless=("throttled", "step_exists", "local_path")),
        Fix("Checkpoint to a gs:// path every host can reach (not a local path on multi-host), make sure the restored step exists and finished, and with Pathways set ENABLE_PATHWAYS_PERSISTENCE=1 so workers write checkpoint data directly.",
            None, "low", unless=("throttled", "step_exists", "local_path", "step_missing")),
        Fix("List the checkpoint steps Orbax can see and whether each step finished (a committed step has its _CHECKPOINT_METADATA; *.orbax-checkpoint-tmp-* are unfinished saves).",
            "gcloud storage ls '<checkpoint_dir>/*/_CHECKPOINT_METADATA'", "read-only"),
        Fix("Restore from the latest complete step (CheckpointManager.latest_step() / all_steps()), not a step recorded elsewhere; delete or move aside an incomplete step directory so it is not picked up again.", None, "low"),
    ),
    facts=(
        FactRule(0.85, raised_in=("checkpoint",), exception=".", note="an error raised from Orbax / TensorStore frames"),
        FactRule(0.85, role=("checkpoint",), http=(404, 408, 409, 412, 429, 500, 502, 503, 504),
                 entities=("Pod", "Container", "Bucket"), note="Cloud Storage refused a request on the checkpoint directory"),
        FactRule(0.8, role=("checkpoint",), exception=".", entities=("Pod", "Container", "Bucket"),
                 note="an error on an object under the checkpoint directory"),
    ),
    names_jobset=True,  # the location or address it fails on is set in the JobSet's spec
)

COMPILATION_CACHE_FAILURE = FailureClass(
    id="compilation_cache_failure", fixed_in_workload=True, title="The persistent compilation cache failed", phase="run",
    component="JAX/XLA persistent compilation cache",
    patterns=(
        # GCS refusing the cache's writes at its per-object rate limit: the error of jax-ml/jax#12583 ("HTTP response code
        # 429 ... exceeds the rate limit", a Cloud TPU user's persistent cache on GCS) in the warning JAX prints for a
        # failed cache write (its format as recorded on the TPU, recording cache-unwritable).
        Pattern(r"(?i)(?:compilation[_ ]cache|persistent cache|jax_compilation_cache).{0,300}(?:\b429\b|rate ?limit|TooManyRequests|rateLimitExceeded)", 0.9,
                ("container",), entities=("Pod", "Node", "Container", "Bucket"), id="rate_limited",
                origin="https://github.com/jax-ml/jax/issues/12583",
                example="UserWarning: Error writing persistent compilation cache entry for 'jit_train_step': AbortedError: All "
                        "10 retry attempts failed. The last failure: Error executing an HTTP request: HTTP response code 429 "
                        "with body '{\"error\": {\"code\": 429, \"message\": \"The rate of change requests to the object "
                        "[...] exceeds the rate limit.\"}}'"),
        Pattern(r"(?i)failed to deserialize (?:the )?(?:cached )?executable", 0.85, ("container",), entities=("Pod", "Container", "Bucket"),
                origin='https://github.com/pytorch/xla/pull/7771',
                example='Failed to deserialize executable: '),
        # An executable taken from the persistent cache that does not fit the program's inputs fails its first
        # execution with XLA's E0102 (RuntimeProgramInputMismatch): a stale or swapped cache entry (recording
        # b21-cache-swap: two entries traded executables, the restart's cache hit ran the wrong one). E0102 has other
        # causes (x64 mode mixing, the program's own shapes), so it counts only right after a cache hit.
        Pattern(r"RuntimeProgramInputMismatch", 0.85, ("container",), entities=("Pod", "Container"),
                needs="after_cache_hit", origin='recording:b21-cache-swap',
                example='jax.errors.JaxRuntimeError: INVALID_ARGUMENT: E0102: RuntimeProgramInputMismatch:'),
        Pattern(r"(?:Error|error) (?:reading|writing|loading) (?:persistent )?compilation cache", 0.85, ("container",),
                entities=("Pod", "Container"), origin="recording:cache-garbled",
                example="UserWarning: Error reading persistent compilation cache entry for 'jit_convert_element_type': error: "
                        "Error -3 while decompressing data: incorrect data check"),
    ),
    explanation="The persistent compilation cache used by {{ pod }} failed ({{ detail }}).",
    explains=("user_code_error", "megascale_hang", "unknown_failure"),
    lookalikes=("gcs_permission_denied",),
    fixes=(
        Fix("Point the cache at a fresh path or turn it off for this run (jax.config.update('jax_compilation_cache_dir', ...) or jax_enable_compilation_cache=False); with Pathways, pathwaysutils already disables JAX's own cache because Pathways caches server-side.", None, "low"),
        Fix("See which cache objects the hosts fight over or cannot read (Pathways keeps its compilation cache under the --gcs_scratch_location prefix).",
            "gcloud storage ls -l '{{ bucket }}/**/compilation_cache/**' | tail -20", "read-only"),
        Fix("A 429 on a cache object is GCS's per-object mutation limit (about one write per second to the same object name): stagger restarts, and give each workload its own scratch prefix (xpk --pathways-gcs-location=gs://<bucket>/<workload>) so concurrent runs do not rewrite the same entries.",
            None, "low", when=("rate_limited",)),
        Fix("An entry that cannot be decompressed (zlib.error 'incorrect header check') was written with zstandard by a JAX that had it installed; this client image lacks the package and falls back to zlib: install zstandard in the client image (pip install zstandard, or the jax[...] extra that brings it), or point jax_compilation_cache_dir at a fresh directory.",
            None, "low", when=("decompress",)),
        Fix("Entries written by another server build cannot be loaded: after changing the server image (--server-image / jax-<version> tag), use a fresh scratch prefix (xpk --pathways-gcs-location=gs://<bucket>/<new-prefix>) or delete the old compilation_cache prefix.",
            None, "low", unless=("rate_limited",)),
    ),
    bucket_from_scratch=True,
    facts=(
        # An entry that cannot be decompressed: JAX compresses entries with zstandard when the writer has it installed and
        # falls back to zlib otherwise, so a reader without zstandard fails on entries a writer with it left behind.
        FactRule(0.9, raised_in=("compilation_cache",), exception=r"zlib\.error|zstd|Zstd|[Dd]ecompress", id="decompress",
                 note="a compilation cache entry could not be decompressed"),
        FactRule(0.85, raised_in=("compilation_cache",), exception=".",
                 note="an error raised from the JAX compilation cache's frames"),
        FactRule(0.85, role=("compilation_cache",), http=(404, 408, 409, 412, 429, 500, 502, 503, 504),
                 entities=("Pod", "Container", "Bucket"), note="Cloud Storage refused a request on the compilation cache"),
        FactRule(0.8, role=("compilation_cache",), exception=".", entities=("Pod", "Container", "Bucket"),
                 note="an error on an entry under the compilation cache directory"),
    ),
    names_jobset=True,  # the location or address it fails on is set in the JobSet's spec
)

FAMILY = (GCS_SCRATCH_MISCONFIGURED, GCS_PERMISSION_DENIED, CHECKPOINT_FAILURE, COMPILATION_CACHE_FAILURE)
