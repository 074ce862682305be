/* A stand-in for libcuda.so.1 that records what it is called with, so
 * that a test can check, through the real C calling convention, that the
 * purego binding passes every argument with the width and order of the
 * driver API's C prototypes (eleven arguments for cuLaunchKernel, five of
 * them on the stack on x86-64), and that the packed kernel arguments reach
 * the driver as the "extra" array describes them. Built by ffi_test.go. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long u64;

/* rec holds the last recorded call: rec[0] is a call id, then its
 * arguments widened to 64 bits. */
static u64 rec[16];
static unsigned char argcopy[4096];
static u64 argsize;

void fake_get(u64 *out, unsigned char *args, u64 *nargs) {
    memcpy(out, rec, sizeof rec);
    memcpy(args, argcopy, sizeof argcopy);
    *nargs = argsize;
}

CUresult cuInit(unsigned flags) { return flags == 0 ? 0 : 1; }
CUresult cuDriverGetVersion(int *v) { *v = 12040; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *dev, int ordinal) { *dev = ordinal + 7; return ordinal == 0 ? 0 : 101; }
CUresult cuDeviceGetName(char *name, int len, int dev) {
    if (dev != 7 || len < 32) return 1;
    strcpy(name, "Fake H200");
    return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
    if (dev != 7) return 101;
    *v = attr == 41 ? 1 : attr == 75 ? 9 : attr == 16 ? 132 : 0;
    return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *b, int dev) { *b = (141ull << 30) + 3; return dev == 7 ? 0 : 101; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = (void *)0xC0DE0000ull; return dev == 7 ? 0 : 101; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { return dev == 7 ? 0 : 101; }
CUresult cuCtxSetCurrent(void *ctx) { return ctx == (void *)0xC0DE0000ull ? 0 : 201; }
CUresult cuCtxSynchronize(void) { return 0; }
static u64 nextptr = 0x700000000000ull;
CUresult cuMemAlloc_v2(u64 *p, size_t n) {
    rec[0] = 1; rec[1] = n;
    if (n > (141ull << 30)) return 2;
    *p = nextptr;
    nextptr += (n + 511) & ~511ull;
    return 0;
}
CUresult cuMemFree_v2(u64 p) { rec[0] = 2; rec[1] = p; return 0; }
CUresult cuMemGetInfo_v2(size_t *f, size_t *t) { *f = 100ull << 30; *t = (141ull << 30) + 3; return 0; }
CUresult cuMemsetD8_v2(u64 p, unsigned char v, size_t n) { rec[0] = 3; rec[1] = p; rec[2] = v; rec[3] = n; return 0; }
CUresult cuMemsetD8Async(u64 p, unsigned char v, size_t n, void *s) { rec[0] = 4; rec[1] = p; rec[2] = v; rec[3] = n; rec[4] = (u64)s; return 0; }
CUresult cuMemcpyHtoD_v2(u64 dst, const void *src, size_t n) {
    rec[0] = 5; rec[1] = dst; rec[2] = n;
    memcpy(argcopy, src, n < sizeof argcopy ? n : sizeof argcopy);
    argsize = n;
    return 0;
}
CUresult cuMemcpyDtoH_v2(void *dst, u64 src, size_t n) { rec[0] = 6; rec[1] = src; rec[2] = n; memset(dst, 0, n); return 0; }
CUresult cuMemcpyDtoD_v2(u64 dst, u64 src, size_t n) { rec[0] = 7; rec[1] = dst; rec[2] = src; rec[3] = n; return 0; }
CUresult cuMemcpyHtoDAsync_v2(u64 dst, const void *src, size_t n, void *s) { rec[0] = 8; rec[1] = dst; rec[2] = n; rec[3] = (u64)s; return 0; }
CUresult cuMemcpyDtoHAsync_v2(void *dst, u64 src, size_t n, void *s) { rec[0] = 9; rec[1] = src; rec[2] = n; rec[3] = (u64)s; memset(dst, 0, n); return 0; }
CUresult cuMemcpyDtoDAsync_v2(u64 dst, u64 src, size_t n, void *s) { rec[0] = 10; return 0; }
CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) {
    rec[0] = 11; rec[1] = n; rec[2] = flags;
    /* Page-aligned and zeroed, as the driver's pinned memory is. */
    if (posix_memalign(p, 4096, n ? n : 1) != 0) return 2;
    memset(*p, 0, n);
    return 0;
}
CUresult cuMemFreeHost(void *p) { free(p); return 0; }
/* cuModuleLoadDataEx records its option numbers and sizes and writes a
 * line into the info log (success) or the error log (failure), reporting
 * the bytes written in the size slots as the driver does. */
static void fake_log(char *buf, void **size, const char *msg) {
    u64 cap = (u64)*size, n = strlen(msg) + 1;
    if (buf == NULL || cap == 0) return;
    if (n > cap) n = cap;
    memcpy(buf, msg, n - 1);
    buf[n - 1] = 0;
    *size = (void *)n;
}
CUresult cuModuleLoadDataEx(void **m, const void *img, unsigned n, int *opts, void **vals) {
    char *info = NULL, *err = NULL;
    void **infosize = NULL, **errsize = NULL;
    memset(rec, 0, sizeof rec);
    rec[0] = 13; rec[1] = n;
    for (unsigned i = 0; i < n && i < 6; i++) {
        rec[2 + i] = opts[i];
        rec[8 + i] = (opts[i] == 4 || opts[i] == 6 || opts[i] == 12) ? (u64)vals[i] : 0;
        if (opts[i] == 3) info = vals[i];
        if (opts[i] == 4) infosize = &vals[i];
        if (opts[i] == 5) err = vals[i];
        if (opts[i] == 6) errsize = &vals[i];
    }
    /* The image must be a NUL-terminated PTX text. */
    if (strncmp((const char *)img, "//", 2) != 0 || strstr((const char *)img, ".entry") == NULL) {
        if (errsize) fake_log(err, errsize, "ptxas fatal: fake JIT found no .entry in the image");
        if (infosize) fake_log(info, infosize, "fake JIT: compiling failed");
        return 218;
    }
    if (infosize) fake_log(info, infosize, "fake JIT: 0 registers");
    if (errsize) *errsize = 0;
    *m = (void *)0xAB000000ull;
    return 0;
}
CUresult cuModuleUnload(void *m) { return m == (void *)0xAB000000ull ? 0 : 1; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
    if (m != (void *)0xAB000000ull || strncmp(name, "k_", 2) != 0) return 500;
    *f = (void *)(0xF0000000ull + strlen(name));
    return 0;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem, void *s, void **params, void **extra) {
    rec[0] = 12; rec[1] = (u64)f; rec[2] = gx; rec[3] = gy; rec[4] = gz; rec[5] = bx; rec[6] = by;
    rec[7] = bz; rec[8] = shmem; rec[9] = (u64)s; rec[10] = (u64)params; rec[11] = (u64)extra;
    if (params != NULL || extra == NULL) return 1;
    if (extra[0] != (void *)1 || extra[2] != (void *)2 || extra[4] != (void *)0) return 1;
    argsize = *(size_t *)extra[3];
    if (argsize > sizeof argcopy) return 1;
    memcpy(argcopy, extra[1], argsize);
    return 0;
}
CUresult cuStreamCreate(void **s, unsigned flags) { *s = (void *)0x5700ull; return flags == 0 ? 0 : 1; }
/* FAKECUDA_HANG=1 makes stream synchronisation hang (a stuck kernel), so
 * that the device check's time limits can be tried against the stand-in. */
CUresult cuStreamSynchronize(void *s) {
    if (getenv("FAKECUDA_HANG") != NULL) for (;;) sleep(1);
    return 0;
}
CUresult cuStreamDestroy_v2(void *s) { return s == (void *)0x5700ull ? 0 : 400; }
CUresult cuEventCreate(void **e, unsigned flags) { *e = (void *)0xE7; return 0; }
CUresult cuEventRecord(void *e, void *s) { return 0; }
CUresult cuEventSynchronize(void *e) { return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { *ms = 1.5f; return 0; }
CUresult cuEventDestroy_v2(void *e) { return 0; }
CUresult cuGetErrorName(CUresult r, const char **s) {
    static char buf[64];
    strcpy(buf, "FAKE_ERROR_");
    buf[11] = '0' + (r / 100) % 10; buf[12] = '0' + (r / 10) % 10; buf[13] = '0' + r % 10; buf[14] = 0;
    *s = buf;
    return 0;
}
CUresult cuGetErrorString(CUresult r, const char **s) { *s = "fake description"; return 0; }
