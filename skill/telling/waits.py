"""What a thread blocked in a call waits for: one table, read by the stall's story (silence.py). Each row is a module
(by its file) and the functions of it a program calls and waits in, what the sentence says it waits for, where that
code is read (CPython's or JAX's source), and what to do about it. Pure data."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Wait:
    """What a thread blocked in a call of a module waits for."""

    path: re.Pattern[str]  # the frame's file
    funcs: frozenset[str]  # the functions (empty: any)
    waits_for: str  # the sentence's words
    device: bool = False  # the call waits for the TPU (a result the step has not produced)
    callback: bool = False  # the frame runs a host callback a device program waits on
    source: str = ""  # where the module's code is read
    advice: str = ""  # what to do about it, for the fix


_CPY = "https://github.com/python/cpython/blob/3.11/Lib/"
_JAX = "https://github.com/jax-ml/jax/blob/main/jax/_src/"
WAITS: tuple[Wait, ...] = (
    Wait(re.compile(r"/jax/_src/(?:callback|interpreters/mlir)\.py$"),
         frozenset({"_callback", "io_callback_impl", "pure_callback_impl", "python_callback", "_wrapped_callback",
                    "wrapped_callback", "_io_callback_impl", "callback_impl"}),
         "a host callback that a program on the TPU waits on", callback=True,
         advice="a host callback must never wait for something the main thread holds while the step runs (a lock taken around the step, a queue only the main thread fills): release it before launching the step, or give the callback's wait a timeout that raises", source=_JAX + "callback.py"),
    Wait(re.compile(r"/jax/_src/(?:array|profiler|api|dispatch|core)\.py$"),
         frozenset({"block_until_ready", "_value", "__array__", "__float__", "__int__", "__bool__", "__index__", "item",
                    "tolist", "_single_device_array_to_np_array", "_single_device_array_to_np_array_did_copy",
                    "device_get", "copy_to_host_async", "_copy_single_device_array_to_host_async"}),
         "a result from the TPU: the program it launched has not finished", device=True,
         advice="the step itself never finished: see what it waits on (a host callback in another thread of the dump, or the workers' own lines for a collective waiting on a peer)", source=_JAX + "array.py"),
    Wait(re.compile(r"(?:^|/)queue\.py$"), frozenset({"get"}),
         "an item from a queue that nothing fills any more (in a training loop usually the input pipeline's "
         "prefetch queue)", source=_CPY + "queue.py",
         advice="find why the threads that fill the queue stopped (an exception in a producer thread ends it silently "
         "unless it is logged), and call get() with a timeout that raises so a dead input pipeline fails the pod "
         "instead of hanging it"),
    Wait(re.compile(r"(?:^|/)queue\.py$"), frozenset({"put"}), "room in a full queue that nothing drains",
         source=_CPY + "queue.py", advice="find why the consumer stopped taking items, and call put() with a timeout"),
    Wait(re.compile(r"/multiprocessing/(?:queues|connection|pool|managers|synchronize|popen_\w+)\.py$"), frozenset(),
         "a worker process (a multiprocessing pool or data-loader worker) that does not answer",
         source=_CPY + "multiprocessing/connection.py",
         advice="read the worker process's own output (and the node's kernel log for an OOM kill of it), and give the "
         "wait a timeout that raises"),
    Wait(re.compile(r"/concurrent/futures/(?:_base|thread|process)\.py$"), frozenset(),
         "a task submitted to an executor that does not complete", source=_CPY + "concurrent/futures/_base.py",
         advice="find where the task's thread is in the dump, and call result() with a timeout"),
    Wait(re.compile(r"(?:^|/)subprocess\.py$"), frozenset({"wait", "_wait", "_try_wait", "communicate", "run",
                                                           "_communicate"}),
         "a child process to exit", source=_CPY + "subprocess.py",
         advice="read the child's own output, and give wait() or communicate() a timeout"),
    Wait(re.compile(r"(?:^|/)(?:socket|ssl|selectors)\.py$|/http/client\.py$|/urllib3/|/requests/|/grpc/"),
         frozenset(), "a network peer that does not answer (a read or connect with no timeout)",
         source=_CPY + "socket.py",
         advice="check the peer it reads from, and set a timeout or deadline on the client (socket, HTTP or gRPC) so a "
         "silent peer raises instead of hanging the run"),
    Wait(re.compile(r"(?:^|/)threading\.py$"), frozenset({"join", "_wait_for_tstate_lock"}),
         "another thread to finish", source=_CPY + "threading.py",
         advice="find why the joined thread does not finish (its frame in the dump), and join() with a timeout"),
    Wait(re.compile(r"(?:^|/)threading\.py$"), frozenset({"wait", "acquire", "__enter__"}),
         "a lock, condition or event that another thread holds or never sets", source=_CPY + "threading.py",
         advice="find the thread that holds the lock or should set the event (the other frames of the dump); take "
         "locks in one order and never hold one across a blocking call"),
)
