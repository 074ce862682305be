// gallocr_bench: ggml's graph allocator (ggml_gallocr, Debian ggml 0.27.0)
// on graphs that benchplanner writes in a plain text form, driven over
// stdin so that gogml and ggml can be timed in interleaved batches.
//
// Commands (one per line), answers on stdout:
//   load PATH      -> "ok ID NNODES" | "error MESSAGE"
//   plan ID        -> "sizes S0 S1 ..." (ggml_gallocr_get_buffer_size per
//                     buffer-list entry) then "places" and, per tensor,
//                     "TYPEIDX CHUNK OFFSET" (-1 -1 -1: no place from us)
//   fresh ID REPS  -> "times W1/C1 ... WREPS/CREPS": wall and CPU ns per
//                     new_n + reserve_n + alloc_graph + free, each
//                     repetition timed alone, after one untimed
//   warm ID REPS   -> "times ...": ns per alloc_graph on a reserved
//                     allocator, every tensor placed again (also
//                     after one untimed)
//   empty REPS     -> "times ...": an empty interval, the clock reads
//                     alone, timed as a repetition is
//   quit
//
// The buffer types hold no memory: each buffer gets a distinct fake base
// (a multiple of 2^40) and nothing is ever read or written through it,
// exactly like gogml's VirtualBufferType.
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

// --- ggml 0.27.0's private backend structs (ggml-backend-impl.h is not
// shipped; the layouts were read from libggml-base.so's accessors:
// get_alignment at 0x18, get_max_size 0x20, get_alloc_size 0x28, is_host
// 0x38, device 0x40; buffers have 11 interface functions, reset last).
struct buft_iface {
    const char * (*get_name)(ggml_backend_buffer_type_t);
    ggml_backend_buffer_t (*alloc_buffer)(ggml_backend_buffer_type_t, size_t);
    void * alloc_buffer_n;
    size_t (*get_alignment)(ggml_backend_buffer_type_t);
    size_t (*get_max_size)(ggml_backend_buffer_type_t);
    size_t (*get_alloc_size)(ggml_backend_buffer_type_t, const struct ggml_tensor *);
    void * get_alloc_size_n;
    bool (*is_host)(ggml_backend_buffer_type_t);
};
struct buft_s {
    struct buft_iface iface;
    void * device;
    void * context;
};
struct buf_iface {
    void (*free_buffer)(ggml_backend_buffer_t);
    void * (*get_base)(ggml_backend_buffer_t);
    void * init_tensor, * memset_tensor, * set_tensor, * get_tensor;
    void * set_tensor_2d, * get_tensor_2d, * cpy_tensor, * clear, * reset;
};
bool ggml_op_alloc_size_may_expand(enum ggml_op op); // exported, not in ggml.h
ggml_backend_buffer_t ggml_backend_buffer_init(ggml_backend_buffer_type_t buft, struct buf_iface iface, void * context, size_t size);

// The public prefix of struct ggml_cgraph (checked at start-up).
struct cgraph_prefix {
    int size, n_nodes, n_leafs;
    struct ggml_tensor ** nodes, ** grads, ** grad_accs, ** leafs;
};

struct vbt {          // a virtual buffer type
    struct buft_s b;
    int index;        // position in the file's buffer_types
    size_t align, max, pad;
    int chunks;       // buffers allocated since the last plan command
};
struct vbuf {         // a virtual buffer's context
    struct vbt * t;
    int chunk;
    uintptr_t base;
};
static uintptr_t next_base = (uintptr_t)1 << 40;

static const char * vbt_name(ggml_backend_buffer_type_t b) { (void)b; return "virtual"; }
static size_t vbt_align(ggml_backend_buffer_type_t b) { return ((struct vbt *)b)->align; }
static size_t vbt_max(ggml_backend_buffer_type_t b) { return ((struct vbt *)b)->max; }
static size_t vbt_alloc_size(ggml_backend_buffer_type_t b, const struct ggml_tensor * t) {
    size_t n = ggml_nbytes(t), p = ((struct vbt *)b)->pad;
    return p > 1 ? (n + p - 1) / p * p : n;
}
static bool vbt_is_host(ggml_backend_buffer_type_t b) { (void)b; return false; }
static void vbuf_free(ggml_backend_buffer_t b) { free(*(void **)((char *)b + sizeof(struct buf_iface) + sizeof(void *))); }
static void * vbuf_base(ggml_backend_buffer_t b) {
    struct vbuf * v = *(struct vbuf **)((char *)b + sizeof(struct buf_iface) + sizeof(void *));
    return (void *)v->base;
}
static ggml_backend_buffer_t vbt_alloc(ggml_backend_buffer_type_t bt, size_t size) {
    struct vbt * t = (struct vbt *)bt;
    struct vbuf * v = malloc(sizeof *v);
    v->t = t;
    v->chunk = t->chunks++;
    v->base = next_base;
    next_base += (uintptr_t)1 << 40;
    if (next_base == 0 || next_base > ((uintptr_t)1 << 62)) next_base = (uintptr_t)1 << 40;
    struct buf_iface i = {0};
    i.free_buffer = vbuf_free;
    i.get_base = vbuf_base;
    return ggml_backend_buffer_init(bt, i, v, size);
}
static struct vbuf * buf_ctx(ggml_backend_buffer_t b) {
    return *(struct vbuf **)((char *)b + sizeof(struct buf_iface) + sizeof(void *));
}

struct graph {
    struct ggml_context * ctx;
    struct ggml_cgraph * g;
    int nt, nbt, nbuf, nl, nn;
    struct ggml_tensor ** t;
    bool * pre;       // preallocated (a base that is, or a view of one)
    struct vbt * bts;
    ggml_backend_buffer_type_t * list;
    int * leaf_ids, * node_ids; // NULL: all 0
};
static struct graph ** graphs;
static int ngraphs;

// A repetition's time: wall clock and the process's CPU time (which a
// busy machine's other processes do not inflate).
struct stamp { double wall, cpu; };
static struct stamp now(void) {
    struct timespec w, c;
    clock_gettime(CLOCK_MONOTONIC, &w);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    struct stamp s = { w.tv_sec * 1e9 + w.tv_nsec, c.tv_sec * 1e9 + c.tv_nsec };
    return s;
}
static struct stamp since(struct stamp t0) {
    struct stamp t = now();
    t.wall -= t0.wall;
    t.cpu -= t0.cpu;
    return t;
}

static int lookup_type(const char * s) {
    for (int i = 0; i < GGML_TYPE_COUNT; i++) {
        const char * n = ggml_type_name((enum ggml_type)i);
        if (n && strcasecmp(n, s) == 0) return i;
    }
    return -1;
}
static int lookup_op(const char * s) {
    for (int i = 0; i < GGML_OP_COUNT; i++) {
        const char * n = ggml_op_name((enum ggml_op)i);
        if (n && strcasecmp(n, s) == 0) return i;
    }
    return -1;
}

#define FAIL(...) do { printf("error "); printf(__VA_ARGS__); printf("\n"); fflush(stdout); if (f) fclose(f); return; } while (0)
#define RD(n, ...) do { if (fscanf(f, __VA_ARGS__) != (n)) FAIL("%s: bad input near %s", path, #__VA_ARGS__); } while (0)

static void load(const char * path) {
    FILE * f = fopen(path, "r");
    if (!f) FAIL("%s: cannot open", path);
    int ver;
    RD(1, " gogml-planner-graph %d", &ver);
    struct graph * G = calloc(1, sizeof *G);
    RD(1, " buffer_types %d", &G->nbt);
    G->bts = calloc(G->nbt, sizeof *G->bts);
    for (int i = 0; i < G->nbt; i++) {
        unsigned long long a, m, p;
        RD(3, " %llu %llu %llu", &a, &m, &p);
        struct vbt * t = &G->bts[i];
        t->index = i;
        t->align = a;
        t->max = m ? m : SIZE_MAX;
        t->pad = p;
        t->b.iface.get_name = vbt_name;
        t->b.iface.alloc_buffer = vbt_alloc;
        t->b.iface.get_alignment = vbt_align;
        t->b.iface.get_max_size = vbt_max;
        t->b.iface.get_alloc_size = vbt_alloc_size;
        t->b.iface.is_host = vbt_is_host;
    }
    RD(1, " buffers %d", &G->nbuf);
    G->list = calloc(G->nbuf, sizeof *G->list);
    for (int i = 0; i < G->nbuf; i++) {
        int k;
        RD(1, " %d", &k);
        if (k < 0 || k >= G->nbt) FAIL("%s: buffer %d names type %d", path, i, k);
        G->list[i] = (ggml_backend_buffer_type_t)&G->bts[k];
    }
    RD(1, " tensors %d", &G->nt);
    struct ggml_init_params ip = {
        .mem_size = ggml_tensor_overhead() * (size_t)(G->nt + 8) + ggml_graph_overhead_custom(G->nt + 8, false) + 4096,
        .mem_buffer = NULL, .no_alloc = true,
    };
    G->ctx = ggml_init(ip);
    G->t = calloc(G->nt, sizeof *G->t);
    G->pre = calloc(G->nt, sizeof *G->pre);
    int (*srcs)[GGML_MAX_SRC] = calloc(G->nt, sizeof *srcs);
    int * vsrc = calloc(G->nt, sizeof *vsrc);
    for (int i = 0; i < G->nt; i++) {
        char type[32], op[64];
        int flags, pre, vs, ns;
        unsigned long long voff, nb[4];
        long long ne[4];
        RD(5, " %31s %63s %d %d %d", type, op, &flags, &pre, &vs);
        RD(9, " %llu %lld %lld %lld %lld %llu %llu %llu %llu", &voff, &ne[0], &ne[1], &ne[2], &ne[3], &nb[0], &nb[1], &nb[2], &nb[3]);
        RD(1, " %d", &ns);
        int ty = lookup_type(type), o = lookup_op(op);
        if (ty < 0) FAIL("%s: tensor %d: ggml has no type %s", path, i, type);
        if (o < 0) FAIL("%s: tensor %d: ggml 0.27.0 has no op %s", path, i, op);
        if (ns < 0 || ns > GGML_MAX_SRC) FAIL("%s: tensor %d: %d sources", path, i, ns);
        for (int j = 0; j < GGML_MAX_SRC; j++) srcs[i][j] = -1;
        for (int j = 0; j < ns; j++) RD(1, " %d", &srcs[i][j]);
        int64_t ne64[4] = {ne[0], ne[1], ne[2], ne[3]};
        struct ggml_tensor * t = ggml_new_tensor(G->ctx, (enum ggml_type)ty, 4, ne64);
        for (int d = 0; d < 4; d++) t->nb[d] = nb[d];
        t->op = (enum ggml_op)o;
        t->flags = flags;
        t->view_offs = voff;
        snprintf(t->name, sizeof t->name, "t%d", i);
        G->t[i] = t;
        G->pre[i] = pre;
        vsrc[i] = vs;
    }
    for (int i = 0; i < G->nt; i++) {
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            int s = srcs[i][j];
            if (s >= G->nt) FAIL("%s: tensor %d: source %d out of range", path, i, s);
            G->t[i]->src[j] = s >= 0 ? G->t[s] : NULL;
        }
        if (vsrc[i] >= G->nt) FAIL("%s: tensor %d: view source out of range", path, i);
        G->t[i]->view_src = vsrc[i] >= 0 ? G->t[vsrc[i]] : NULL;
    }
    free(srcs);
    free(vsrc);
    // ggml 0.27.0 asserts that a buffer type's alloc size is at most
    // nbytes but for empty ops, quantized types and ops that may expand:
    // a graph whose alloc_pad pads any other tensor cannot be planned.
    for (int i = 0; i < G->nt; i++) {
        struct ggml_tensor * t = G->t[i];
        if (t->view_src || G->pre[i] || ggml_is_quantized(t->type) || ggml_op_alloc_size_may_expand(t->op)) continue;
        if (t->op == GGML_OP_NONE || t->op == GGML_OP_RESHAPE || t->op == GGML_OP_VIEW || t->op == GGML_OP_PERMUTE || t->op == GGML_OP_TRANSPOSE) continue;
        for (int b = 0; b < G->nbt; b++) {
            size_t n = ggml_nbytes(t), a = vbt_alloc_size((ggml_backend_buffer_type_t)&G->bts[b], t);
            if (a > n) FAIL("unsupported: tensor %d (%s): alloc size %zu (alloc_pad %zu) above its %zu bytes, which ggml 0.27.0 asserts against", i, ggml_op_name(t->op), a, G->bts[b].pad, n);
        }
    }
    RD(1, " leafs %d", &G->nl);
    int * leafs = calloc(G->nl + 1, sizeof(int));
    for (int i = 0; i < G->nl; i++) RD(1, " %d", &leafs[i]);
    RD(1, " nodes %d", &G->nn);
    int * nodes = calloc(G->nn + 1, sizeof(int));
    for (int i = 0; i < G->nn; i++) RD(1, " %d", &nodes[i]);
    int k;
    RD(1, " leaf_buffer_ids %d", &k);
    if (k) {
        G->leaf_ids = calloc(k, sizeof(int));
        for (int i = 0; i < k; i++) RD(1, " %d", &G->leaf_ids[i]);
    }
    RD(1, " node_buffer_ids %d", &k);
    if (k) {
        G->node_ids = calloc(k, sizeof(int));
        for (int i = 0; i < k; i++) RD(1, " %d", &G->node_ids[i]);
    }
    int size = (G->nl > G->nn ? G->nl : G->nn) + 1;
    G->g = ggml_new_graph_custom(G->ctx, size, false);
    struct cgraph_prefix * cg = (struct cgraph_prefix *)G->g;
    for (int i = 0; i < G->nn; i++) cg->nodes[i] = G->t[nodes[i]];
    cg->n_nodes = G->nn;
    for (int i = 0; i < G->nl; i++) cg->leafs[i] = G->t[leafs[i]];
    cg->n_leafs = G->nl;
    free(leafs);
    free(nodes);
    fclose(f);
    graphs = realloc(graphs, (ngraphs + 1) * sizeof *graphs);
    graphs[ngraphs] = G;
    printf("ok %d %d\n", ngraphs++, G->nn);
    fflush(stdout);
}
#undef FAIL
#undef RD

// reset_places clears what the allocator wrote (data, buffer) and gives
// preallocated tensors (and views of them) a fake address outside every
// buffer, as weights have.
static void reset_places(struct graph * G) {
    for (int i = 0; i < G->nt; i++) {
        struct ggml_tensor * t = G->t[i];
        t->buffer = NULL;
        t->data = NULL;
        if (G->pre[i]) {
            t->data = (void *)(((uintptr_t)1 << 20) + 4096 * (uintptr_t)i);
        }
    }
}

static ggml_gallocr_t reserve_alloc(struct graph * G) {
    ggml_gallocr_t a = ggml_gallocr_new_n(G->list, G->nbuf);
    if (!a || !ggml_gallocr_reserve_n(a, G->g, G->node_ids, G->leaf_ids) || !ggml_gallocr_alloc_graph(a, G->g)) {
        printf("error reserve or alloc failed\n");
        fflush(stdout);
        if (a) ggml_gallocr_free(a);
        return NULL;
    }
    return a;
}

static struct graph * get(int id) {
    if (id < 0 || id >= ngraphs) {
        printf("error no graph %d\n", id);
        fflush(stdout);
        return NULL;
    }
    return graphs[id];
}

static void plan(int id) {
    struct graph * G = get(id);
    if (!G) return;
    reset_places(G);
    for (int i = 0; i < G->nbt; i++) G->bts[i].chunks = 0;
    ggml_gallocr_t a = reserve_alloc(G);
    if (!a) return;
    printf("sizes");
    for (int i = 0; i < G->nbuf; i++) printf(" %zu", ggml_gallocr_get_buffer_size(a, i));
    printf("\nplaces");
    for (int i = 0; i < G->nt; i++) {
        struct ggml_tensor * t = G->t[i];
        if (t->buffer && t->data && ggml_backend_buffer_get_size(t->buffer) > 0) {
            struct vbuf * v = buf_ctx(t->buffer);
            printf(" %d %d %llu", v->t->index, v->chunk, (unsigned long long)((uintptr_t)t->data - v->base));
        } else {
            printf(" -1 -1 -1");
        }
    }
    printf("\n");
    fflush(stdout);
    ggml_gallocr_free(a);
    reset_places(G);
}

static void times(const struct stamp * ns, int reps) {
    printf("times");
    for (int i = 0; i < reps; i++) printf(" %.0f/%.0f", ns[i].wall, ns[i].cpu);
    printf("\n");
    fflush(stdout);
}

static void fresh(int id, int reps) {
    struct graph * G = get(id);
    if (!G) return;
    struct stamp * ns = calloc(reps, sizeof *ns);
    reset_places(G);
    // One untimed repetition first (r = -1), as the Go side does: each
    // batch times the steady state, not the caches the other side left.
    for (int r = -1; r < reps; r++) {
        struct stamp t0 = now();
        ggml_gallocr_t a = ggml_gallocr_new_n(G->list, G->nbuf);
        bool ok = ggml_gallocr_reserve_n(a, G->g, G->node_ids, G->leaf_ids) && ggml_gallocr_alloc_graph(a, G->g);
        ggml_gallocr_free(a);
        struct stamp d = since(t0);
        if (r >= 0) ns[r] = d;
        reset_places(G);
        if (!ok) {
            printf("error reserve or alloc failed\n");
            fflush(stdout);
            free(ns);
            return;
        }
    }
    times(ns, reps);
    free(ns);
}

// empty times nothing between the clock reads: what the instrument adds
// to every repetition's time.
static void empty(int reps) {
    struct stamp * ns = calloc(reps, sizeof *ns);
    for (int r = 0; r < reps; r++) {
        struct stamp t0 = now();
        ns[r] = since(t0);
    }
    times(ns, reps);
    free(ns);
}

static void warm(int id, int reps) {
    struct graph * G = get(id);
    if (!G) return;
    struct stamp * ns = calloc(reps, sizeof *ns);
    reset_places(G);
    ggml_gallocr_t a = reserve_alloc(G);
    if (!a) {
        free(ns);
        return;
    }
    for (int r = -1; r < reps; r++) { // r = -1: untimed, as in fresh
        reset_places(G);
        struct stamp t0 = now();
        bool ok = ggml_gallocr_alloc_graph(a, G->g);
        struct stamp d = since(t0);
        if (r >= 0) ns[r] = d;
        if (!ok) {
            printf("error alloc failed\n");
            fflush(stdout);
            ggml_gallocr_free(a);
            free(ns);
            return;
        }
    }
    ggml_gallocr_free(a);
    reset_places(G);
    times(ns, reps);
    free(ns);
}

// check_layout builds a + b with ggml itself and checks that the graph's
// leafs and nodes are where cgraph_prefix expects them.
static int check_layout(void) {
    struct ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * c = ggml_add(ctx, a, b);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, c);
    struct cgraph_prefix * p = (struct cgraph_prefix *)g;
    int ok = p->n_nodes == 1 && p->n_leafs == 2 && p->nodes[0] == c && p->leafs[0] == a && p->leafs[1] == b &&
             ggml_graph_n_nodes(g) == 1 && ggml_graph_node(g, 0) == c;
    ggml_free(ctx);
    return ok;
}

int main(void) {
    if (!check_layout()) {
        printf("error struct ggml_cgraph layout differs from this program's (not ggml 0.27.0?)\n");
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        char cmd[16], arg[4000];
        int id, reps;
        if (sscanf(line, "load %3999s", arg) == 1) {
            load(arg);
        } else if (sscanf(line, "plan %d", &id) == 1) {
            plan(id);
        } else if (sscanf(line, "fresh %d %d", &id, &reps) == 2 && reps > 0) {
            fresh(id, reps);
        } else if (sscanf(line, "warm %d %d", &id, &reps) == 2 && reps > 0) {
            warm(id, reps);
        } else if (sscanf(line, "empty %d", &reps) == 1 && reps > 0) {
            empty(reps);
        } else if (sscanf(line, "%15s", cmd) == 1 && strcmp(cmd, "quit") == 0) {
            break;
        } else {
            printf("error unknown command\n");
            fflush(stdout);
        }
    }
    return 0;
}
