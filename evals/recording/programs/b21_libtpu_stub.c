/* A stand-in for an old libtpu.so: it exports GetPjrtApi, but the PJRT C API it reports is version 0.20 (2023).
   Built by b21_libtpu_old.py on the recording machine (cc -shared -fPIC). */
#include <stddef.h>

typedef struct { size_t struct_size; void *extension_start; int major_version; int minor_version; } Version;
typedef struct { size_t struct_size; void *extension_start; Version pjrt_api_version; void *functions[256]; } Api;

static Api api;

const Api *GetPjrtApi(void) {
  api.struct_size = offsetof(Api, functions) + 100 * sizeof(void *);
  api.pjrt_api_version.struct_size = sizeof(Version);
  api.pjrt_api_version.major_version = 0;
  api.pjrt_api_version.minor_version = 20;
  return &api;
}
