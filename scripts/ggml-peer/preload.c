/*
 * preload.c: registers ggml backends (and, optionally, ggml RPC servers)
 * before main() of a ggml program that has no --rpc flag of its own
 * (test-backend-ops, test-llama-archs, ...). gogml's own code; built at
 * test time by scripts/ggml-peer.sh against the peer sysroot's headers and
 * passed with the sysroot loader's --preload.
 *
 * Environment:
 *   GGML_PEER_BACKEND_DIR  load ggml's backends (CPU, RPC) from this
 *                          directory instead of ggml's compiled-in one, so
 *                          no system directory has to be linked
 *   GGML_PEER_RPC          comma-separated HOST:PORT list; each server's
 *                          devices are registered (named RPC0, RPC1, ...)
 *   GGML_PEER_HW_CONCURRENCY
 *                          what std::thread::hardware_concurrency() returns
 *                          (a positive integer; unset: the online CPUs, as
 *                          libstdc++ counts them). test-backend-ops 0.7.0
 *                          gives the CPU backend hardware_concurrency()/2
 *                          threads (at least 1) and has no option for it,
 *                          so on a 2-CPU machine its perf mode runs one
 *                          thread whatever OMP_THREAD_LIMIT says; twice the
 *                          wanted count here gives it that many
 *                          (benchvsggml sets it per round).
 *
 * Any failure prints why and exits with status 86: a program that ran
 * without the server it was asked to test would test nothing and could
 * report success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "ggml-backend.h"

#define PEER_FAIL 86

typedef ggml_backend_reg_t (*add_server_fn)(const char *endpoint);

static void fail(const char *what, const char *detail) {
	fprintf(stderr, "ggml-peer preload: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	fflush(stderr);
	exit(PEER_FAIL);
}

/*
 * std::thread::hardware_concurrency(), a static member function: this
 * definition, preloaded, comes before libstdc++'s. See
 * GGML_PEER_HW_CONCURRENCY above; a value that is not a positive integer
 * below 2^16 exits with status 86.
 */
unsigned int _ZNSt6thread20hardware_concurrencyEv(void);

unsigned int _ZNSt6thread20hardware_concurrencyEv(void) {
	const char *v = getenv("GGML_PEER_HW_CONCURRENCY");
	if (v == NULL || v[0] == '\0') {
		int n = get_nprocs();
		return n > 0 ? (unsigned int)n : 0;
	}
	char *end = NULL;
	long n = strtol(v, &end, 10);
	if (*end != '\0' || n < 1 || n >= 65536) {
		fail("GGML_PEER_HW_CONCURRENCY is not a positive integer below 65536", v);
	}
	return (unsigned int)n;
}

__attribute__((constructor)) static void ggml_peer_preload(void) {
	const char *dir = getenv("GGML_PEER_BACKEND_DIR");
	if (dir != NULL && dir[0] != '\0') {
		ggml_backend_load_all_from_path(dir);
	} else {
		ggml_backend_load_all();
	}
	const char *eps = getenv("GGML_PEER_RPC");
	if (eps == NULL || eps[0] == '\0') {
		return;
	}
	ggml_backend_reg_t rpc = ggml_backend_reg_by_name("RPC");
	if (rpc == NULL) {
		fail("ggml's RPC backend (libggml-rpc.so) was not loaded", dir);
	}
	add_server_fn add = (add_server_fn)ggml_backend_reg_get_proc_address(rpc, "ggml_backend_rpc_add_server");
	if (add == NULL) {
		fail("the RPC backend has no ggml_backend_rpc_add_server", NULL);
	}
	char buf[1024];
	if (strlen(eps) >= sizeof buf) {
		fail("GGML_PEER_RPC is too long", NULL);
	}
	strcpy(buf, eps);
	char *save = NULL;
	for (char *ep = strtok_r(buf, ",", &save); ep != NULL; ep = strtok_r(NULL, ",", &save)) {
		ggml_backend_reg_t reg = add(ep);
		if (reg == NULL) {
			fail("cannot add RPC server", ep);
		}
		ggml_backend_register(reg);
		fprintf(stderr, "ggml-peer preload: registered RPC server %s (%zu devices)\n", ep,
			ggml_backend_reg_dev_count(reg));
	}
}
