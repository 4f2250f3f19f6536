"""Runtime on the TPU hosts: memory, compilation, user code, multi-slice hangs and device start-up."""

from __future__ import annotations

from .types import FactRule, FailureClass, Fix, Pattern, RuleContext, Text

_PC = ("Pod", "Container")
_PJ = ("Pod", "JobSet")  # the hang detector reports on worker 0; the hang is the whole program's


def _plain_exception(c: RuleContext) -> bool:
    """A user exception, not JAX/XLA forwarding an infrastructure status."""
    return not any(s in c.text for s in ("JaxRuntimeError", "XlaRuntimeError", "RESOURCE_EXHAUSTED", "ifrt_proxy",
                                       "ElasticRuntimeError", "DATA_LOSS"))


def _not_bad_chips(c: RuleContext) -> bool:
    """The hang detector's generic line, unless the same digest blames bad TPU chips (that is tpu_hardware_failure)."""
    return "bad TPU chips" not in c.text and "Bad TPU chips" not in c.text


HBM_OOM = FailureClass(
    id="hbm_oom", fixed_in_workload=True, title="TPU HBM (or VMEM) exhausted", phase="compile/run", component="XLA:TPU / TPU runtime memory",
    patterns=(
        Pattern(r"Ran out of memory in memory space (?P<space>hbm|vmem)", 0.97, entities=_PC,
                origin="recording:hbm-oom-compile",
                example="XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 32.73G of 15.75G hbm."),
        Pattern(r"RESOURCE_EXHAUSTED.{0,120}(?:TensorCore )?Hbm usage", 0.95, entities=_PC,
                origin="https://github.com/openxla/xla/blob/21ecdc4725b453858e08296eefbe485e4d7feeac/docs/errors/error_1000.md",
                example="RESOURCE_EXHAUSTED: TPU TensorCore Hbm usage: 34.82G, SparseCore Hbm usage 174.10G, exceeding available bytes: 95.74G"),
        Pattern(r"Error allocating device buffer: Attempting to allocate", 0.95, entities=_PC,
                origin="recording:hbm-oom-alloc",
                example="Error allocating device buffer: Attempting to allocate 1.00G. That was not possible. There are 765.90M free."),
        # The TPU runtime's reservation of a program's scratch space: the free HBM exists but is not contiguous enough.
        Pattern(r"Attempting to reserve [\d.]+\s?[KMGT]i?B? at the bottom of memory", 0.95, entities=_PC,
                note="the program's scratch reservation did not fit in device memory (fragmented free HBM)",
                id="scratch_reserve", origin="https://github.com/openxla/xla/blob/11903d433e7f9b8265c3c2ec0d29608b536d92d4/docs/errors/error_0101.md",
                example="RESOURCE_EXHAUSTED: Error loading program 'jit_embedding_pipeline_step_fn': Attempting to reserve 29.49G "
                        "at the bottom of memory. That was not possible. There are 147.64M free, 0B reserved, and 147.64M reservable."),
        Pattern(r"RESOURCE_EXHAUSTED: Allocation \(size=\d+\) would exceed memory", 0.9, entities=_PC,
                origin="https://github.com/openxla/xla/blob/7c84728467d6d18955e7788da970e2ecadc1c498/docs/errors/error_1001.md",
                example="XlaRuntimeError: RESOURCE_EXHAUSTED: Allocation (size=134217728) would exceed memory (size=67108864)"),
        Pattern(r"Exceeded (?:hbm|vmem) capacity by", 0.9, entities=_PC, origin="recording:hbm-oom-compile",
                example="Used 32.73G of 15.75G hbm. Exceeded hbm capacity by 16.98G."),
        # XLA:TPU's compile-time estimate: the program will not fit, so it stops before allocating anything.
        Pattern(r"(?i)Aborting compilation early because it'?s unlikely to have enough (?:device )?memory|"
                r"\bRequires [\d.]+\s?[KMGT]i?B?, has [\d.]+\s?[KMGT]i?B? available", 0.95, entities=_PC,
                origin="https://github.com/openxla/xla/blob/49aac430548043077ed445ad31214ed3ff958803/docs/errors/error_1000.md",
                example="RESOURCE_EXHAUSTED: Compilation failure: Aborting compilation early because it's unlikely to have enough "
                        "memory. Requires 3.84T, has 90.96G available."),
        Pattern(r"(?i)RESOURCE_EXHAUSTED.{0,200}(?:out of memory|\bhbm\b)", 0.75, entities=_PC,
                origin="recording:hbm-oom-compile",
                example="jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total memory required for "
                        "HLO temporaries (32.73G) exceeds available HBM (15.75G)."),
    ),
    explanation="The program of {{ jobset }} does not fit in TPU memory ({{ detail }}); this is accelerator HBM/VMEM, not host RAM (no exit 137).",
    explains=("user_code_error", "xla_compile_error"),
    lookalikes=("host_oom", "xla_compile_error"),
    fixes=(
        Fix("Read the memory breakdown XLA printed next to the error.", "kubectl logs {{ pod }} -n {{ namespace }} -c {{ container }} --tail=200", "read-only"),
        Fix("Reduce per-device memory: smaller per-device batch or sequence length, shard parameters and optimizer state (check for accidental replication), donate buffers (donate_argnums), rematerialise with jax.checkpoint, use bf16, or move to a larger topology; XLA flag --xla_tpu_rematerialization_algo=PEAK_PRIORITY can help at compile time.", None, "low"),
        Fix("The runtime could not reserve the program's scratch space in one piece at the bottom of HBM: there is enough free memory in total but it is fragmented by buffers that are still alive (the error says how much compaction would free). Free or donate the previous phase's buffers before the new program runs (e.g. after switching sequence length, drop old train states and jitted executables, jax.clear_caches()), lower the new phase's per-device batch or sequence length, or rematerialise; rerun with LIBTPU_INIT_ARGS=--tpu_log_allocations_on_oom=true to see what holds HBM.",
            None, "low", when=("scratch_reserve",)),
        Fix("For an allocation failure at run time (E0100, 'Error allocating device buffer'), drop references to arrays you no longer need (old train states, EMA or eval copies: check len(jax.live_arrays())) and rerun with LIBTPU_INIT_ARGS=--tpu_log_allocations_on_oom=true in the Pathways worker env so the allocator dumps what holds HBM.",
            None, "low", unless=("scratch_reserve",)),
    ),
    names_jobset=True,
    facts=(
        FactRule(0.85, code=("RESOURCE_EXHAUSTED",), message=r"(?i)\bhbm\b|\bvmem\b|device memory|out of memory|allocat",
                 note="RESOURCE_EXHAUSTED naming device memory"),
    ),
)

HOST_OOM = FailureClass(
    id="host_oom", fixed_in_workload=True, title="A container or process was killed for host RAM", phase="run",
    component="host memory (container limit or node)",
    patterns=(
        # The container status's reason (rendered from the Pod object as "terminated: reason=OOMKilled exitCode=137").
        Pattern(r"\breason[=:] ?OOMKilled\b", 0.97, ("object",), entities=("Pod", "Container", "Node"),
                origin="https://docs.redhat.com/zh-cn/documentation/openshift_container_platform/3.11/html/developer_guide/diagnosing-an-oom-kill",
                example="reason: OOMKilled"),
        # The kernel's kills on a node count when one of the JobSet's containers there failed with them (classify.NEEDS):
        # a log agent or other node daemon killed on the head's node is not the workload's memory.
        # Events are read as "<reason>: <message>"; node-problem-detector's kernel monitor reports the kill as OOMKilling.
        Pattern(r"^OOMKilling\b", 0.9, ("event",), entities=("Node",), needs="killed_the_workload",
                origin="https://github.com/kubernetes/kubernetes/issues/60492",
                example="OOMKilling\tMemory cgroup out of memory: Kill process 1371 (node) score 2081 or sacrifice child"),
        Pattern(r"Memory cgroup out of memory: Kill(?:ed)? process \d+ \((?P<comm>[^)]+)\)", 0.9, ("node", "serial", "event"),
                entities=("Node",), needs="killed_the_workload", origin="https://github.com/docker/for-linux/issues/1001",
                example="Memory cgroup out of memory: Killed process 15617 (python3) total-vm:11892kB, anon-rss:4292kB"),
        Pattern(r"Out of memory: Kill(?:ed)? process \d+ \((?P<comm>[^)]+)\)", 0.9, ("node", "serial", "event"), entities=("Node",),
                needs="killed_the_workload", origin="https://github.com/docker/for-linux/issues/1001",
                example="Out of memory: Killed process 15784 (python3) total-vm:11964kB, anon-rss:4288kB"),
        # The kernel's one-line summary of the kill names the killed process's memory cgroup, so its pod (the model
        # reads the pod UID from it: understanding/model.py); support only: the kill lines above carry the weight.
        Pattern(r"oom-kill:constraint=\w+,.*task_memcg=", 0.5, ("node", "serial"), entities=("Node",), support=True,
                needs="killed_the_workload",
                origin="https://github.com/torvalds/linux/blob/master/mm/oom_kill.c",
                example="oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/kubepods/"
                        "burstable/pod4f1c.../,task_memcg=/kubepods/burstable/pod4f1c.../a1b2...,task=python3,pid=15617,uid=0"),
        Pattern(r"^SystemOOM\b", 0.85, ("event",), entities=("Node",), needs="killed_the_workload",
                origin="https://github.com/kubernetes/kubernetes/issues/88868",
                example="SystemOOM event was not reported even when the memory limit hit was the root cgroup memory limit."),
        Pattern(r"TaskOOM", 0.7, ("node",), entities=("Node",), needs="killed_the_workload",
                origin="https://github.com/containerd/containerd/issues/8893",
                example='level=info msg="TaskOOM event container_id:\\"4bcba7fc4369fee4d7d2e6263b58fce52cfc928c6a31cfac4d43c838708991ce\\""'),
        # rendered: Last State Terminated, Reason Error, Exit Code 137, Restart Count 1 from kubernetes/kubernetes#122256
        # The program's own allocation refused (NumPy's MemoryError subclass, or a bare MemoryError): host RAM ran out
        # inside the process (a container limit, ulimit -v, or the node) before the kernel killed anything.
        Pattern(r"^(?:numpy\.(?:_core|core)\._exceptions\._ArrayMemoryError|MemoryError)(?::|$)", 0.85, user_only=True,
                entities=("Pod", "Container", "Node"), id="alloc_refused",
                origin="https://github.com/numpy/numpy/blob/main/numpy/_core/_exceptions.py",
                example="numpy._core._exceptions._ArrayMemoryError: Unable to allocate 3.00 GiB for an array with shape "
                        "(786432, 1024) and data type float32"),
        Pattern(r"terminated: reason=Error exitCode=137", 0.45, ("object",), entities=("Pod", "Container", "Node"),
                origin='https://github.com/kubernetes/kubernetes/issues/122256',
                example='container wk64c terminated: reason=Error exitCode=137 restartCount=1'),
    ),
    explanation=(
        Text("The program in {{ container_or_process }} on {{ node }} ran out of host memory: an allocation it asked for "
             "was refused ({{ detail }}) — host RAM (the container's limit, an address-space cap, or the node), not TPU "
             "HBM.", when=("alloc_refused",)),
        Text("{{ container_or_process }} on {{ node }} was killed for host memory ({% if oom_exit %}OOMKilled, exit 137{% else %}by the kernel's OOM killer{% endif %}) — host RAM, not TPU HBM. (The kernel names processes by binary: server is pathways-rm or pathways-worker, proxy_server is pathways-proxy, python is the client or sidecar.)"),
    ),
    explains=("proxy_connection_lost", "user_code_error", "slices_not_ready", "workload_stalled", "megascale_hang",
              "tpu_device_busy", "colocated_python_failure", "elastic_recovery_exhausted"),
    lookalikes=("hbm_oom", "spot_preemption", "host_maintenance"),
    fixes=(
        Fix("See the last termination of each container.", "kubectl get pod {{ pod }} -n {{ namespace }} -o jsonpath='{range .status.initContainerStatuses[*]}{.name} {.lastState.terminated.reason} {.lastState.terminated.exitCode}{\"\\n\"}{end}{range .status.containerStatuses[*]}{.name} {.lastState.terminated.reason} {.lastState.terminated.exitCode}{\"\\n\"}{end}'", "read-only"),
        Fix("The program's own allocation was refused: find what grows in host RAM (a buffer, a cache, a dataset or "
            "copies of device arrays pulled to the host), bound it or move it off the host, or raise the container's "
            "memory limit (resources.limits.memory) and any ulimit -v in its command.", None, "low", when=("alloc_refused",)),
        Fix("Give the killed container more memory (pathways-proxy is limited to 100G and pathways-rm to 32G by default: raise resources.limits.memory in a custom manifest and use a larger cpu-np machine such as n2-standard-64 or bigger), or cut host-side data loading in the client; size the colocated sidecar's shm_size_limit.", None, "low", unless=("alloc_refused",)),
        Fix("See what the node reported about the kill.", "kubectl get events -A --field-selector involvedObject.kind=Node,involvedObject.name={{ node }},reason=OOMKilling", "read-only", unless=("alloc_refused",)),
    ),
    sources=("object", "event"),
)

XLA_COMPILE_ERROR = FailureClass(
    id="xla_compile_error", fixed_in_workload=True, title="XLA or Mosaic compilation failed (not memory)", phase="compile",
    component="XLA / Mosaic (Pallas) compiler",
    patterns=(
        Pattern(r"Mosaic failed to compile TPU kernel", 0.95, entities=_PC, origin="https://github.com/openxla/xla/blob/27585e2606e334c5233784e6f105d2d3892f208f/docs/errors/error_2xxx.md",
                example="INTERNAL: Mosaic failed to compile TPU kernel: failed to legalize operation 'arith.mulf'"),
        # the Pallas TPU lowering refusing a kernel before Mosaic runs (a block shape, a memory space): a compile error
        Pattern(r"The Pallas TPU lowering (?:currently )?(?:requires|does not support)", 0.9, entities=_PC,
                origin="recording:pallas-block-shape",
                example="ValueError: The Pallas TPU lowering currently requires that the last two dimensions of your "
                        "block shape are divisible by 8 and 128 respectively, or be equal to the respective dimensions "
                        "of the overall array."),
        # the Pallas TPU lowering has no rule for an op used inside the kernel (jax/_src/pallas/mosaic/lowering.py raises
        # NotImplementedError("Unimplemented primitive in Pallas TPU lowering for {kernel_type}: {primitive}. ..."))
        # A custom call the program emits (a CUDA-only kernel, an FFI target registered for another platform) that this
        # backend has no implementation for: XLA:TPU's "Custom emitter ... not found" (recorded), XLA's GPU/CPU wording.
        Pattern(r"Custom emitter for \S+ not found|No registered implementation for custom call to \S+", 0.9,
                entities=_PC, id="custom_call", origin="recording:b21-compile-ffi",
                example="jax.errors.JaxRuntimeError: INVALID_ARGUMENT: Custom emitter for fused_rmsnorm_fwd not found"),
        # XLA:TPU warning on each worker that it does not understand a custom call's backend config, just before the
        # compile fails on that custom call (it names the target): supports the refusal, proves nothing alone.
        Pattern(r"Invalid backend config found for instruction \S+ = .{0,300}custom_call_target=", 0.3, support=True,
                containers=("pathways-worker",), entities=_PC, id="custom_call", origin="recording:b21-compile-ffi",
                example='W1205 20:03:48.969986    4942 backend_config_util.cc:153] Invalid backend config found for '
                        'instruction %ffi_call.1 = f32[256,256]{1,0} custom-call(%dot_general.1), '
                        'custom_call_target="fused_rmsnorm_fwd", operand_layout_constraints={f32[256,256]{1,0}}'),
        Pattern(r"Unimplemented primitive in Pallas TPU lowering", 0.9, entities=_PC, id="pallas_unimplemented",
                origin="https://github.com/jax-ml/jax/blob/main/jax/_src/pallas/mosaic/lowering.py",
                example="NotImplementedError: Unimplemented primitive in Pallas TPU lowering for tc: cumsum. Please "
                        "file an issue at https://github.com/jax-ml/jax/issues/new/choose."),
        # (E3000's two lines, one signature: the pass pipeline failing on the SparseCore allocation it names)
        Pattern(r"Failed to run pass pipeline|'memref\.alloca' op current allocation offset upper bound .{0,80}exceeds the legitimate user allocatable", 0.9,
                entities=_PC, note="SparseCore compile-time allocation failure (E3000), not an HBM OOM", origin="https://github.com/openxla/xla/blob/dd1b279c725153a76a0b2ca7c54fa6182950815a/docs/errors/error_3000.md",
                example="error: 'memref.alloca' op current allocation offset upper bound (140704 words) exceeds the legitimate "
                        "user allocatable offset upper bound (131071 words) in memory space 201"),
        Pattern(r"cannot statically prove that index in dimension \d+ is a multiple of", 0.9, entities=_PC, origin="https://github.com/openxla/xla/blob/27585e2606e334c5233784e6f105d2d3892f208f/docs/errors/error_2xxx.md",
                example="INTERNAL: Mosaic failed to compile TPU kernel: cannot statically prove that index in dimension 0 is a "
                        "multiple of 1024"),
    ),
    explanation="Compilation of the program of {{ jobset }} failed for a reason other than memory ({{ detail }}). Usual causes: a Pallas/Mosaic kernel using an op or dtype this TPU generation lacks, a SparseCore program that does not fit its scratch memory, or a server libtpu older than the client's JAX.",
    explains=("user_code_error",),
    lookalikes=("hbm_oom", "libtpu_mismatch"),
    fixes=(
        Fix("The kernel uses an op that the Pallas TPU lowering has no rule for ({{ detail }}): compute that op outside "
            "the pallas_call, in plain JAX before or after the kernel, or build it inside the kernel from ops Pallas "
            "lowers (comparisons, jnp.where, reductions, iota).", None, "low", when=("pallas_unimplemented",)),
        Fix("The program calls a custom kernel (a custom call / FFI target) that has no TPU implementation, typically "
            "a CUDA-only kernel from code ported from GPU: on TPU use the library's TPU or pure-JAX path for that op "
            "(or a Pallas kernel), or register the target for the TPU platform, and resubmit.", None, "low",
            when=("custom_call",)),
        Fix("Dump the HLO of the failing program to see the op: run the client with XLA_FLAGS=--xla_dump_to=/tmp/xla_dump.", None, "low"),
        Fix("Align the Pathways server image tag with the client's JAX (server:jax-{{ jax_version }}, xpk --server-image and --proxy-server-image) so kernels are compiled by the libtpu they were lowered for, and fix the kernel's block shapes.", None, "low"),
        Fix("For a Pallas/Mosaic kernel, dump what Mosaic emitted with LIBTPU_INIT_ARGS=--xla_mosaic_dump_to=/tmp/mosaic and cast operands to a type this TPU generation's MXU supports (bf16/f32; fp8 and int4 are not native on older chips); keep --xla_mosaic_compat_mode on.", None, "low"),
        Fix("For a SparseCore allocation failure (E3000, 'memref.alloca' ... exceeds the legitimate user allocatable offset), dump the SparseCore MLIR with --xla_sc_dump_mlir_to=/tmp/sc, lower max_ids_per_partition / max_unique_ids_per_partition of the embedding tables, or disable SparseCore collective offload (--xla_tpu_enable_sparse_core_collective_offload_all_reduce=false).", None, "low"),
    ),
    names_jobset=True,
    facts=(
        FactRule(0.85, source=("xla_compiler",), code=("INTERNAL", "INVALID_ARGUMENT", "UNIMPLEMENTED", "FAILED_PRECONDITION"),
                 note="the XLA compiler (a source of its own named on the line) refused the program"),
    ),
)

USER_CODE_ERROR = FailureClass(
    id="user_code_error", fixed_in_workload=True, title="The user's program raised", phase="run", component="user JAX program (client container)",
    patterns=(
        Pattern(r"^(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception)(?::|$)", 0.7, user_only=True, entities=_PC,
                check=_plain_exception, origin="recording:dot-general-shape",
                example="TypeError: dot_general requires contracting dimensions to have the same shape, got (784,) and (512,)."),
        Pattern(r"Traceback \(most recent call last\)", 0.3, user_only=True, entities=_PC, origin="recording:dot-general-shape",
                example="Traceback (most recent call last):"),
        # Listed in the Pathways troubleshooting guide (outdated Flask/Werkzeug next to pathwaysutils); exact text from a report:
        Pattern(r"LocalProxy\.__init__\(\) got an unexpected keyword argument 'unbound_message'", 0.95, user_only=True,
                entities=_PC, origin="https://github.com/malwaredllc/byob/issues/641",
                example="TypeError: LocalProxy.__init__() got an unexpected keyword argument 'unbound_message'"),
        Pattern(r"^(?:ModuleNotFoundError|ImportError): ", 0.85, user_only=True, entities=_PC,
                origin="https://github.com/jax-ml/jax/issues/16666",
                example="ModuleNotFoundError: No module named 'jax.experimental'; 'jax' is not a package"),
        # Multi-controller code in a single-controller workload: the client (the only JAX process under Pathways, whose
        # jax.process_index() is always 0) still calls jax.distributed.initialize, and the coordination service it
        # starts cannot find the other "processes" and kills it (SIGABRT after the initialization timeout).
        Pattern(r"Terminating process because the JAX distributed service detected fatal errors", 0.85, user_only=True,
                entities=_PC, id="multi_controller", origin="recording:b20-coordinator-dns",
                example="F1205 13:12:28.560447    2705 client.h:80] Terminating process because the JAX distributed "
                        "service detected fatal errors. This most likely indicates that another task died"),
    ),
    explanation="The user's program in {{ pod }} raised {{ detail }} and no infrastructure event explains it.",
    lookalikes=("hbm_oom", "proxy_unreachable", "checkpoint_failure"),
    fixes=(
        Fix("Read the whole traceback.", "kubectl logs {{ pod }} -n {{ namespace }} -c {{ container }} --tail=300", "read-only"),
        Fix("Under Pathways the client is the only JAX process (one controller; it reaches every TPU through the IFRT "
            "proxy, and jax.process_index() is always 0): remove the jax.distributed.initialize(...) call and its "
            "coordinator_address / num_processes / process_id settings from the client, or run it only when the program "
            "is launched multi-controller, and resubmit.", None, "low", when=("multi_controller",)),
        Fix("Fix the code or dependency named at the bottom of the traceback ({{ detail }}) and resubmit; for the Werkzeug/flask 'unbound_message' conflict upgrade flask and Werkzeug.", None, "low", unless=("multi_controller",)),
        Fix("If the traceback ends inside site-packages, a dependency in the client image does not fit jax {{ jax_version }}: upgrade or pin it to a release built for this JAX (pip install -U <package>), run pip check in the image, and rebuild.", None, "low", unless=("multi_controller",)),
    ),
    names_jobset=True, explained_by_any=True,
)

MEGASCALE_HANG = FailureClass(
    id="megascale_hang", fixed_in_workload=True, title="Multi-slice (DCN/MegaScale) hang or barrier timeout", phase="run",
    component="MegaScale / DCN collectives",
    patterns=(
        Pattern(r"Megascale detects a hang that is likely caused by inconsistent TPU programs", 0.95, entities=_PJ,
                origin="https://github.com/AI-Hypercomputer/maxtext/blob/4c5a710f76c680dee758c03dc98ea8c35cbd9791/docs/guides/megascale_hang_playbook.md",
                example="Megascale detects a hang that is likely caused by inconsistent TPU programs. This can be caused by some "
                        "workers running with different JIT functions or a bug in the XLA compiler."),
        Pattern(r"Megascale detects a hang but cannot determine the root cause", 0.9, entities=_PJ, origin="https://github.com/AI-Hypercomputer/maxtext/blob/4c5a710f76c680dee758c03dc98ea8c35cbd9791/docs/guides/megascale_hang_playbook.md",
                example="Megascale detects a hang but cannot determine the root cause. Please inspect the full digest below."),
        Pattern(r"Megascale detects a hang", 0.85, check=_not_bad_chips, entities=_PJ, origin="https://github.com/AI-Hypercomputer/maxtext/blob/4c5a710f76c680dee758c03dc98ea8c35cbd9791/docs/guides/megascale_hang_playbook.md",
                example="Megascale detects a hang but cannot determine the root cause. Please inspect the full digest below."),
        Pattern(r"HANG_DETECTED", 0.8, check=_not_bad_chips, entities=_PJ, origin="https://github.com/AI-Hypercomputer/maxtext/blob/4c5a710f76c680dee758c03dc98ea8c35cbd9791/docs/guides/megascale_hang_playbook.md",
                example="you will see a Megascale `HANG_DETECTED` message in your Cloud TPU logs."),
        Pattern(r"Potential cause: (?P<cause>INCONSISTENT_TPU_PROGRAM|UNKNOWN|[A-Z_]*HANG[A-Z_]*)", 0.8, entities=_PJ,
                origin="https://github.com/AI-Hypercomputer/maxtext/blob/4c5a710f76c680dee758c03dc98ea8c35cbd9791/docs/guides/megascale_hang_playbook.md", example="  Potential cause: INCONSISTENT_TPU_PROGRAM"),
        # The JAX coordination service's barrier (jax distributed, multihost_utils) timing out.
        Pattern(r"(?i)(?:megascale|coordinat\w+|barrier).{0,80}(?:barrier|wait).{0,60}(?:timed out|timeout|DEADLINE_EXCEEDED)", 0.6,
                origin="https://github.com/marin-community/levanter/issues/432",
                example="jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: "
                        "multihost_broadcast_sync0. Timed out task names:"),
    ),
    explanation="The multi-slice program of {{ jobset }} hung in MegaScale/DCN collectives ({{ detail }}).",
    explains=("workload_stalled", "user_code_error"),
    lookalikes=("tpu_hardware_failure", "workload_stalled"),
    fixes=(
        Fix("Read the hang detector's digest on worker 0 of slice 0.", "kubectl logs {{ pod }} -n {{ namespace }} -c pathways-worker --tail=400", "read-only"),
        Fix("For INCONSISTENT_TPU_PROGRAM, pin one server build for every worker instead of a moving tag: xpk --server-image={{ server_image_pin }} and --proxy-server-image={{ proxy_image_pin }} (imagePullPolicy is Always, so a rolling jax-X or latest tag can pull another build on a restart).", None, "low"),
        Fix("Make images, XLA_FLAGS and LIBTPU_INIT_ARGS identical on all workers; move I/O barriers out of collectives; consider --megascale_abort_on_hangs=true so a hang becomes a restart; collect stacks with xpk --deploy-stacktrace-sidecar.", None, "low"),
        Fix("Capture what Google needs to debug the hang: rerun with XLA_FLAGS=--xla_dump_to=/tmp/xla_dump (copy the dump to GCS with gcloud storage cp -r /tmp/xla_dump gs://<bucket>/) and --vmodule=real_program_continuator=1 on the workers (xpk --custom-pathways-worker-args).", None, "low"),
    ),
    leans_on=("gce_audit",),  # a hang the detector cannot attribute may be a host event only the audit log shows
)

TPU_DEVICE_BUSY = FailureClass(
    id="tpu_device_busy", fixed_in_workload=True, title="The TPU device is held by another process", phase="start",
    component="TPU device on the host (/dev/vfio, /dev/accel)",
    patterns=(
        Pattern(r"/dev/vfio/\d+\S*:? (?:Device or resource busy|.{0,40}busy)", 0.95,
                origin="https://github.com/google/gvisor/issues/11545",
                example="RuntimeError: Unable to initialize backend 'tpu': UNKNOWN: TPU initialization failed: open(/dev/vfio/1): "
                        "Device or resource busy: Device or resource busy; Couldn't open iommu group /dev/vfio/1"),
        Pattern(r"open\(/dev/vfio/\d+\): Device or resource busy", 0.97, origin="https://github.com/google/gvisor/issues/11545",
                example="UNKNOWN: TPU initialization failed: open(/dev/vfio/1): Device or resource busy: Device or resource busy"),
        Pattern(r"/dev/accel\d+.{0,40}(?:not permitted|busy)", 0.9, origin="https://github.com/marin-community/levanter/pull/1127",
                example="jaxlib._jax.XlaRuntimeError: UNKNOWN: TPU initialization failed: open(/dev/accel3): Operation not "
                        "permitted: Operation not permitted; Couldn't open device: /dev/accel3; [/dev/accel3]"),
        Pattern(r"libtpu multi-process lockfile|TPU is already in use by process", 0.95, entities=("Pod", "Container", "Node"), origin="recording:tpu-busy",
                example='jax.errors.JaxRuntimeError: ABORTED: Internal error when accessing libtpu multi-process lockfile. '
                        'Run "$ sudo rm /tmp/libtpu_lockfile".'),
    ),
    explanation="The TPU on {{ node }} is held by another process (a previous attempt, the sidecar or another framework), so {{ pod }} cannot open it.",
    # a sidecar (or any second process in the pod) that opens the TPU the worker holds dies of it
    explains=("tpu_init_failure", "libtpu_mismatch", "slices_not_ready", "user_code_error", "colocated_python_failure"),
    lookalikes=("libtpu_mismatch", "tpu_init_failure"),
    fixes=(
        Fix("See what else runs on the node.", "kubectl get pods -A -o wide --field-selector spec.nodeName={{ node }}", "read-only"),
        Fix("Stop the other process: delete leftover pods of an earlier JobSet (or a node-debugger pod) on the node, and make sure only one framework in the pod opens the TPU.", "kubectl delete pod <leftover-pod> -n <its-namespace>", "high"),
        Fix("Only pathways-worker may open the TPU on a Pathways host: a sidecar or helper container that imports JAX (colocated Python, a data loader, a warm-up script) must run on the CPU, with JAX_PLATFORMS=cpu in its env.", None, "low"),
        Fix("If no pod owns the process (an orphan left by a crashed container runtime), take the node out of service so the worker lands elsewhere, and let GKE repair or replace the VM.", "kubectl cordon {{ node }}", "high"),
    ),
)

TPU_INIT_FAILURE = FailureClass(
    id="tpu_init_failure", fixed_in_workload=True, title="TPU runtime initialisation failed", phase="start", component="libtpu start-up on a host",
    patterns=(
        Pattern(r"TPU initialization failed", 0.85, origin="https://github.com/google/gvisor/issues/11545",
                example="RuntimeError: Unable to initialize backend 'tpu': UNKNOWN: TPU initialization failed: open(/dev/vfio/1): "
                        "Device or resource busy"),
        # The host's own metadata read failing first (the tpu-env attribute names the worker id and hostnames).
        Pattern(r"(?i)Failed to get TPU metadata|metadata attribute 'tpu-env'", 0.4, support=True,
                note="the host could not read its TPU metadata (tpu-env)", origin="https://github.com/google/gvisor/issues/10795",
                example="Failed to get TPU metadata (tpu-env) from instance metadata for variable CHIPS_PER_HOST_BOUNDS: "
                        "INTERNAL: Couldn't connect to server"),
        # The runtime's start-up refusing an incomplete host list (the VM's tpu-env metadata gave no worker hostnames).
        Pattern(r"(?i)TPU runtime initiali[sz]ation (?:aborted|failed)|Could not determine TPU worker hostnames", 0.85,
                origin="https://github.com/ARahim3/kaggle-tpu-lab/issues/6",
                example="INVALID_ARGUMENT: Error: unexpected worker hostname 'WARNING: could not determine TPU worker hostnames or "
                        "IP addresses' from env var TPU_WORKER_HOSTNAMES."),
        Pattern(r"Failed to initialize TPU system", 0.85, origin="https://github.com/marin-community/marin/issues/2618",
                example="Failed to initialize TPU system with error: FAILED_PRECONDITION: open(/dev/vfio/0): Device or resource busy"),
        # libtpu parses LIBTPU_INIT_ARGS (and a worker's own flags) with absl at start-up and exits 1 on a flag it does not
        # know or a value it cannot parse (absl/flags/parse.cc, absl/flags/internal/flag.cc); in a TPU process only.
        Pattern(r"^ERROR: (?:Unknown command line flag '|Illegal value '[^']*' specified for flag ')", 0.9,
                containers=("pathways-worker",), entities=("Pod", "Node", "Container"), id="bad_flag",
                origin="recording:b20-tpu-init-args", example="ERROR: Unknown command line flag 'tpu_b20_prefetch_depth'"),
        Pattern(r"TPU_RET_CHECK failure", 0.85, origin="https://github.com/jax-ml/jax/issues/37230",
                example="TPU_RET_CHECK failure (learning/45eac/tpu/runtime/hal/tpu_hal.cc:229)"),
        Pattern(r"Couldn't open iommu group /dev/vfio/\d+", 0.8, origin="https://github.com/google/gvisor/issues/11545",
                example="Device or resource busy: Device or resource busy; Couldn't open iommu group /dev/vfio/1 "
                        "(set JAX_PLATFORMS='' to automatically choose an available backend)"),
        Pattern(r"Invalid --\w*worker_addresses specified\. Expected (?P<want>\d+) worker addresses, got (?P<got>\d+)", 0.95,
                entities=("Pod", "JobSet"), note="the worker address list (TPU_WORKER_HOSTNAMES) does not match the slice",
                origin="https://github.com/Lightning-AI/pytorch-lightning/issues/20244",
                example="RuntimeError: Bad StatusOr access: UNKNOWN: TPU initialization failed: Invalid "
                        "--2a886c8_slice_builder_worker_addresses specified. Expected 4 worker addresses, got 1."),
        Pattern(r"(?i)(?:instance/attributes/)?(?:tpu-env|worker-network-endpoints|agent-worker-number|accelerator-type)\b.{0,160}"
                r"(?:unavailable|timed out|timeout was reached|deadline|connection refused|connect failed|failed)", 0.8,
                note="TPU runtime could not read its topology from the GCE metadata server",
                origin="https://github.com/jax-ml/jax/issues/14300",
                example="Failed to get agent-worker-number with error: Timeout was reached"),
    ),
    explanation="The TPU runtime on {{ node }} failed to initialise ({{ detail }})"
                "{% set busy = 'tpu_device_busy' in also_seen.split() %}{% set skew = 'libtpu_mismatch' in also_seen.split() %}"
                "{% if busy and skew %}; lines also reported the device as held by another process and a libtpu/PJRT version mismatch (other hypotheses)"
                "{% elif busy %}; a line also reported the device as held by another process (other hypotheses), and nothing a libtpu/PJRT version mismatch"
                "{% elif skew %}; a line also reported a libtpu/PJRT version mismatch (other hypotheses), and nothing the device as held by another process"
                "{% else %}; nothing reported the device as held by another process or a libtpu/PJRT version mismatch{% endif %}.",
    explains=("slices_not_ready", "user_code_error"),
    lookalikes=("tpu_device_busy", "libtpu_mismatch", "tpu_hardware_failure"),
    fixes=(
        Fix("Read the worker's start-up log on that host.", "kubectl logs {{ pod }} -n {{ namespace }} -c pathways-worker --previous --tail=200", "read-only"),
        Fix("libtpu refused one of its flags at start-up (absl exits the process on an unknown flag or a value it cannot "
            "parse): correct or remove it in LIBTPU_INIT_ARGS (or the worker's args) in the JobSet's {{ worker_job }} "
            "container, checking the flag's name and type for this libtpu build, then resubmit.", None, "low",
            when=("bad_flag",)),
        Fix("If it persists on one host, take the host out of service and let GKE replace it.", "kubectl cordon {{ node }}", "high",
            unless=("bad_flag",)),
        Fix("If every worker of a slice reports the wrong number of worker addresses, the manifest overrides what GKE injects: remove TPU_WORKER_HOSTNAMES / TPU_WORKER_ID / TPU_PROCESS_ADDRESSES from the {{ worker_job }} container env (or regenerate it with xpk or PathwaysJobSet) and keep spec.network.enableDNSHostnames: true so the hostnames resolve.", None, "low"),
        Fix("If the runtime could not read tpu-env / worker-network-endpoints from the metadata server, check the node can reach it (curl -s -H 'Metadata-Flavor: Google' http://169.254.169.254/computeMetadata/v1/instance/attributes/tpu-env from a hostNetwork debug pod) and look for metadata-server or network errors in the node's kubelet log.", "kubectl get events -A --field-selector involvedObject.name={{ node }}", "read-only"),
    ),
)

FAMILY = (HBM_OOM, HOST_OOM, XLA_COMPILE_ERROR, USER_CODE_ERROR, MEGASCALE_HANG, TPU_DEVICE_BUSY, TPU_INIT_FAILURE)
