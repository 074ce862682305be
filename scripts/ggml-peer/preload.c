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
 *   GGML_PEER_SUPPORTS_OP  "1": ggml_backend_supports_op, for an RPC
 *                          backend (named "RPC<device>[<endpoint>]"), asks
 *                          the server with gogml's protocol extension
 *                          GOGML_SUPPORTS_OP (rpcwire.CmdGogmlSupportsOp;
 *                          gogml rpc-server -supports-op-query) instead of
 *                          the RPC client's answer, which is yes for every
 *                          op: test-backend-ops then reports the cases
 *                          gogml declines as "not supported", as it does
 *                          for ggml's local backends. "test": the same,
 *                          but an op ggml's CPU device declines too is
 *                          answered yes, so that test-backend-ops test
 *                          (which asks the backend under test first and
 *                          stops at the first no) names its reference,
 *                          the CPU, as the one that cannot run the case,
 *                          as it did before the query existed. Unset or
 *                          "0": the real ggml_backend_supports_op.
 *
 * Any failure prints why and exits with status 86: a program that ran
 * without the server it was asked to test would test nothing and could
 * report success.
 */
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <unistd.h>

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
	// A program killed at a time limit or by a crash loses what its
	// stdout, a pipe and so fully buffered, still held: with
	// GGML_PEER_STDOUT_UNBUFFERED=1 every case line, even one whose
	// outcome never came, reaches the log.
	const char *unbuf = getenv("GGML_PEER_STDOUT_UNBUFFERED");
	if (unbuf != NULL && strcmp(unbuf, "1") == 0) {
		setvbuf(stdout, NULL, _IONBF, 0);
	}
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

/*
 * GGML_PEER_SUPPORTS_OP: ggml_backend_supports_op, preloaded before
 * libggml-base's (test-backend-ops calls it through the PLT).
 */
enum {
	CMD_HELLO = 14,          /* RPC_CMD_HELLO of protocol 8.0.0 */
	CMD_SUPPORTS_OP = 0xF0,  /* gogml's extension, outside ggml's numbers */
	CONN_CAPS_SIZE = 24,     /* HELLO's transport capability block */
	RPC_TENSOR_SIZE = 296,   /* sizeof(rpc_tensor) */
	MAX_QUERY_TENSORS = 256, /* an op, its sources and view sources */
	MAX_QUERY_CONNS = 8,
};

_Static_assert(GGML_MAX_SRC == 10 && GGML_MAX_OP_PARAMS == 64 && GGML_MAX_NAME == 64,
	"rpc_tensor of protocol 8.0.0 assumes ggml 0.27.0's tensor limits");

typedef bool (*supports_op_fn)(ggml_backend_t, const struct ggml_tensor *);

struct query_conn {
	char endpoint[256];
	int fd;
};

static struct query_conn query_conns[MAX_QUERY_CONNS];
static int n_query_conns;

static void write_all(int fd, const void *p, size_t n) {
	const char *b = p;
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w <= 0) {
			fail("GGML_PEER_SUPPORTS_OP: writing to the RPC server failed", NULL);
		}
		b += w;
		n -= (size_t)w;
	}
}

static void read_all(int fd, void *p, size_t n) {
	char *b = p;
	while (n > 0) {
		ssize_t r = read(fd, b, n);
		if (r <= 0) {
			fail("GGML_PEER_SUPPORTS_OP: the RPC server closed the connection (is it gogml rpc-server -supports-op-query?)", NULL);
		}
		b += r;
		n -= (size_t)r;
	}
}

static void put_u32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

/* send_cmd writes | cmd | size (u64) | payload | (x86-64: little-endian). */
static void send_cmd(int fd, unsigned char cmd, const void *payload, uint64_t size) {
	unsigned char h[9];
	h[0] = cmd;
	put_u64(h + 1, size);
	write_all(fd, h, sizeof h);
	write_all(fd, payload, size);
}

/* query_fd returns a connection to endpoint HOST:PORT, dialed and greeted
 * with HELLO on first use. */
static int query_fd(const char *endpoint) {
	for (int i = 0; i < n_query_conns; i++) {
		if (strcmp(query_conns[i].endpoint, endpoint) == 0) {
			return query_conns[i].fd;
		}
	}
	if (n_query_conns == MAX_QUERY_CONNS || strlen(endpoint) >= sizeof query_conns[0].endpoint) {
		fail("GGML_PEER_SUPPORTS_OP: too many or too long endpoints", endpoint);
	}
	char host[256];
	strcpy(host, endpoint);
	char *colon = strrchr(host, ':');
	if (colon == NULL) {
		fail("GGML_PEER_SUPPORTS_OP: endpoint is not HOST:PORT", endpoint);
	}
	*colon = '\0';
	struct addrinfo hints = {0}, *res = NULL;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, colon + 1, &hints, &res) != 0 || res == NULL) {
		fail("GGML_PEER_SUPPORTS_OP: cannot resolve", endpoint);
	}
	int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
	if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
		fail("GGML_PEER_SUPPORTS_OP: cannot connect to", endpoint);
	}
	/* A query is a header and a payload written apart, then a wait for
	 * the answer: without TCP_NODELAY, Nagle's algorithm holds the payload
	 * for the server's delayed ACK (tens of ms a query). */
	int one = 1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
		fail("GGML_PEER_SUPPORTS_OP: cannot set TCP_NODELAY for", endpoint);
	}
	freeaddrinfo(res);
	unsigned char caps[CONN_CAPS_SIZE] = {0};
	send_cmd(fd, CMD_HELLO, caps, sizeof caps);
	unsigned char rsp[8 + 4 + CONN_CAPS_SIZE];
	read_all(fd, rsp, sizeof rsp);
	strcpy(query_conns[n_query_conns].endpoint, endpoint);
	query_conns[n_query_conns].fd = fd;
	n_query_conns++;
	return fd;
}

/* collect appends t, its sources and its view source to ts (once each). */
static void collect(const struct ggml_tensor *t, const struct ggml_tensor **ts, int *n) {
	if (t == NULL) {
		return;
	}
	for (int i = 0; i < *n; i++) {
		if (ts[i] == t) {
			return;
		}
	}
	if (*n == MAX_QUERY_TENSORS) {
		fail("GGML_PEER_SUPPORTS_OP: an op with too many tensors under it", t->name);
	}
	ts[(*n)++] = t;
	for (int i = 0; i < GGML_MAX_SRC; i++) {
		collect(t->src[i], ts, n);
	}
	collect(t->view_src, ts, n);
}

/* put_tensor writes t as an rpc_tensor without memory (buffer and data 0:
 * the server's buffers are not this process's). */
static void put_tensor(unsigned char *p, const struct ggml_tensor *t) {
	memset(p, 0, RPC_TENSOR_SIZE);
	put_u64(p + 0, (uint64_t)(uintptr_t)t);
	put_u32(p + 8, (uint32_t)t->type);
	for (int i = 0; i < 4; i++) {
		put_u32(p + 20 + 4 * i, (uint32_t)t->ne[i]);
		put_u32(p + 36 + 4 * i, (uint32_t)t->nb[i]);
	}
	put_u32(p + 52, (uint32_t)t->op);
	memcpy(p + 56, t->op_params, GGML_MAX_OP_PARAMS);
	put_u32(p + 120, (uint32_t)t->flags);
	for (int i = 0; i < GGML_MAX_SRC; i++) {
		put_u64(p + 124 + 8 * i, (uint64_t)(uintptr_t)t->src[i]);
	}
	put_u64(p + 204, (uint64_t)(uintptr_t)t->view_src);
	put_u64(p + 212, (uint64_t)t->view_offs);
	memcpy(p + 228, t->name, GGML_MAX_NAME);
}

/* ask_server sends GOGML_SUPPORTS_OP for op to device dev of endpoint. */
static bool ask_server(const char *endpoint, uint32_t dev, const struct ggml_tensor *op) {
	const struct ggml_tensor *ts[MAX_QUERY_TENSORS];
	int n = 0;
	collect(op, ts, &n);
	size_t size = 4 + 8 + 4 + 8 + 4 + (size_t)n * RPC_TENSOR_SIZE;
	unsigned char *msg = calloc(1, size);
	if (msg == NULL) {
		fail("GGML_PEER_SUPPORTS_OP: out of memory", NULL);
	}
	put_u32(msg, dev);
	put_u64(msg + 4, 0);  /* uid: not stored */
	put_u32(msg + 12, 1); /* one node: the op */
	put_u64(msg + 16, (uint64_t)(uintptr_t)op);
	put_u32(msg + 24, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		put_tensor(msg + 28 + (size_t)i * RPC_TENSOR_SIZE, ts[i]);
	}
	int fd = query_fd(endpoint);
	send_cmd(fd, CMD_SUPPORTS_OP, msg, size);
	free(msg);
	unsigned char rsp[9];
	read_all(fd, rsp, sizeof rsp);
	uint64_t rsize;
	memcpy(&rsize, rsp, 8);
	if (rsize != 1 || rsp[8] > 1) {
		fail("GGML_PEER_SUPPORTS_OP: unexpected answer from", endpoint);
	}
	return rsp[8] == 1;
}

bool ggml_backend_supports_op(ggml_backend_t backend, const struct ggml_tensor *op) {
	static supports_op_fn real;
	if (real == NULL) {
		real = (supports_op_fn)dlsym(RTLD_NEXT, "ggml_backend_supports_op");
		if (real == NULL) {
			fail("no ggml_backend_supports_op after the preload", dlerror());
		}
	}
	const char *on = getenv("GGML_PEER_SUPPORTS_OP");
	bool test_mode = on != NULL && strcmp(on, "test") == 0;
	if (on == NULL || (strcmp(on, "1") != 0 && !test_mode)) {
		return real(backend, op);
	}
	/* "RPC<device>[<endpoint>]", the name ggml's RPC backend gives. */
	const char *name = ggml_backend_name(backend);
	if (name == NULL || strncmp(name, "RPC", 3) != 0) {
		return real(backend, op);
	}
	char *end = NULL;
	unsigned long dev = strtoul(name + 3, &end, 10);
	size_t len = end != NULL ? strlen(end) : 0;
	if (end == name + 3 || len < 3 || end[0] != '[' || end[len - 1] != ']' || dev > UINT32_MAX) {
		fail("GGML_PEER_SUPPORTS_OP: an RPC backend name not of the form RPC<device>[<endpoint>]", name);
	}
	char endpoint[256];
	if (len - 2 >= sizeof endpoint) {
		fail("GGML_PEER_SUPPORTS_OP: endpoint too long", name);
	}
	memcpy(endpoint, end + 1, len - 2);
	endpoint[len - 2] = '\0';
	if (ask_server(endpoint, (uint32_t)dev, op)) {
		return true;
	}
	if (test_mode) {
		ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
		if (cpu == NULL) {
			fail("GGML_PEER_SUPPORTS_OP=test: no CPU device to be the reference", NULL);
		}
		return !ggml_backend_dev_supports_op(cpu, op);
	}
	return false;
}
