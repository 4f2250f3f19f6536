/* A stand-in for an old libtpu: a shared library whose GetPjrtApi() returns a PJRT_Api table that reports PJRT C
 * API version 0.14 (an early-2023 plugin) and has no functions. JAX loads it as its TPU plugin and checks the
 * version before calling anything. Built by b22_libtpu_old.py (or beside it, as b22_pjrt_stub.so). */
#include <stddef.h>

typedef struct { size_t struct_size; void *extension_start; int major_version; int minor_version; } PJRT_Api_Version;
typedef struct { size_t struct_size; void *extension_start; PJRT_Api_Version pjrt_api_version; void *fns[512]; } PJRT_Api;

static PJRT_Api api = {
    sizeof(PJRT_Api) - 400 * sizeof(void *), 0, {sizeof(PJRT_Api_Version), 0, 0, 14}, {0}};

const PJRT_Api *GetPjrtApi(void) { return &api; }
