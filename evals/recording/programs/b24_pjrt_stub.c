/* A stand-in for a libtpu built against another PJRT C API: GetPjrtApi() returns a PJRT_Api table whose version is
 * set at build time (-DPJRT_MAJOR=.. -DPJRT_MINOR=..) and which has no functions; with -DNULL_API it returns NULL,
 * as a plugin whose initialisation failed does. Built by b24_libtpu.py. */
#include <stddef.h>

#ifndef PJRT_MAJOR
#define PJRT_MAJOR 1
#endif
#ifndef PJRT_MINOR
#define PJRT_MINOR 2
#endif

typedef struct { size_t struct_size; void *extension_start; int major_version; int minor_version; } PJRT_Api_Version;
typedef struct { size_t struct_size; void *extension_start; PJRT_Api_Version pjrt_api_version; void *fns[512]; } PJRT_Api;

static PJRT_Api api = {
    sizeof(PJRT_Api) - 400 * sizeof(void *), 0, {sizeof(PJRT_Api_Version), 0, PJRT_MAJOR, PJRT_MINOR}, {0}};

#ifdef NULL_API
const PJRT_Api *GetPjrtApi(void) { return NULL; }
#else
const PJRT_Api *GetPjrtApi(void) { return &api; }
#endif
