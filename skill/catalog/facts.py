"""What the facts layer knows, as data: which component a frame belongs to, which status words mean what, what a
path is used for, and which lines it must read beyond the catalog's signatures (pushed down with them)."""

from __future__ import annotations

# A traceback frame's file path -> the component it belongs to; the first match wins, so specific before general.
# "stdlib" and "transport" frames are skipped when deciding which component raised an error.
COMPONENTS: tuple[tuple[str, str], ...] = (
    ("compilation_cache", r"jax/_src/compilation_cache|jax/experimental/compilation_cache|/compilation_cache(?:_interface)?\.py"
                          r"|/lru_cache\.py|persistent_compilation_cache"),
    ("checkpoint", r"/orbax/|/orbax_checkpoint/|/tensorstore/"),
    ("elastic", r"pathwaysutils/elastic/"),
    ("colocated_python", r"colocated_python"),
    ("pathwaysutils", r"/pathwaysutils/"),
    ("data", r"/grain/|/tensorflow_datasets/|/array_record/"),
    ("tpu_runtime", r"/libtpu/|/jax/_src/lib/|/jaxlib/|xla_extension|/pjrt"),
    ("jax", r"/jax/|/flax/|/optax/"),
    ("transport", r"/google/cloud/storage/|/google/api_core/|/google/resumable_media/|/gcsfs/|/fsspec/|/requests/"
                  r"|/urllib3/|/grpc/|/google/auth/|/aiohttp/|/etils/epath/"),
    ("stdlib", r"/lib/python3\.\d+/(?:[a-z_]+/)*[a-z_]+\.py|<frozen |^<string>$"),
)

# A C++ source file a line names (its glog header's file, or a "(path/file.cc:123)" in the message) -> the component
# that raised the error; the first match wins.
SOURCE_COMPONENTS: tuple[tuple[str, str], ...] = (
    ("xla_compiler", r"xla/service/|xla/hlo/|/spmd/|spmd_partitioner|hlo_\w+\.cc|/mlir/|tpu_compiler|xla_compiler|"
                     r"\bcompiler\.cc\b|mosaic"),
    ("megascale", r"megascale|/dcn/"),
    ("ifrt_proxy", r"ifrt_proxy|ifrt/proxy|grpc_server\.cc"),
)

# The paths a workload names in its container args and env, by what the name of the setting says they are for.
# key regex (the flag or variable name, case-insensitive) -> role; the first match wins.
PATH_ROLES: tuple[tuple[str, str], ...] = (
    (r"compilation_cache|compile_cache|jax_cache|xla_cache", "compilation_cache"),
    (r"gcs_scratch|scratch_location|pathways.*gcs", "scratch"),
    (r"checkpoint|ckpt|load_parameters_path|load_full_state_path", "checkpoint"),
    (r"dataset|data_dir|data_path|train_data|eval_data", "data"),
    (r"output_dir|base_output_directory|log_dir|tensorboard", "output"),
)
# Within an output or unknown location, a path segment says what an object is for.
SEGMENT_ROLES: tuple[tuple[str, str], ...] = (
    (r"(?i)(?:^|/)(?:jax[_-]?cache|compilation[_-]?cache|xla[_-]?cache|jit[_-]?cache)(?:/|$)", "compilation_cache"),
    (r"(?i)(?:^|/)checkpoints?(?:/|$)|\.orbax-checkpoint|(?:^|/)ckpts?(?:/|$)", "checkpoint"),
)

# absl / gRPC status codes, as they appear in messages (RESOURCE_EXHAUSTED: ..., status = StatusCode.UNAVAILABLE).
STATUS_CODES = ("RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED", "UNAVAILABLE", "NOT_FOUND", "PERMISSION_DENIED", "INTERNAL",
                "DATA_LOSS", "FAILED_PRECONDITION", "ABORTED", "CANCELLED", "INVALID_ARGUMENT", "UNAUTHENTICATED",
                "ALREADY_EXISTS", "OUT_OF_RANGE", "UNIMPLEMENTED")
# HTTP errors as google-api-core and friends name them.
HTTP_NAMES = {"TooManyRequests": 429, "Forbidden": 403, "NotFound": 404, "ServiceUnavailable": 503,
              "InternalServerError": 500, "BadGateway": 502, "GatewayTimeout": 504, "Unauthorized": 401,
              "Too Many Requests": 429, "rateLimitExceeded": 429, "SlowDown": 503}

# Lines the facts layer reads that no signature asks for: traceback frames, and HTTP errors on Cloud Storage objects.
# They are pushed down with the container signatures, so live and replay read them alike.
FACT_LINES: tuple[str, ...] = (
    r'^\s*File "[^"]+", line \d+',
    r"(?:gs://|storage\.googleapis\.com/)\S{0,300}.{0,200}\b(?:4\d\d|5\d\d)\b|\b(?:4\d\d|5\d\d)\b.{0,200}(?:gs://|storage\.googleapis\.com/)",
)
