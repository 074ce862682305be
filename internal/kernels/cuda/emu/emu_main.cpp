// The kernel emulator process. Usage: emu ARENA_FILE ARENA_ADDR_HEX ARENA_SIZE
//
// It maps ARENA_FILE (shared with the Go test that started it) at exactly
// ARENA_ADDR, so device addresses the Go side hands out are valid here,
// then serves launch requests from stdin, one per line:
//
//     L name gx gy gz bx by bz shmem hex-encoded-argument-buffer
//
// unpacking the argument buffer with each kernel's C parameter types
// (natural alignment, in order, as the PTX lays them out) and answering
// "ok" or "err <message>" on stdout.
#include <sys/mman.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>

#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#define GOGML_EMU 1
#include "../common.cuh"

emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
alignas(16) unsigned char emu_dyn_shared[64 * 1024];

// Kernels, defined in the .cu files compiled alongside.
#define KERNELS(X)                                                             \
    X(k_binary_f32, (char *, shape4, const char *, shape4, const char *, shape4, int)) \
    X(k_binary, (char *, shape4, int, const char *, shape4, int, const char *, shape4, int, int)) \
    X(k_concat, (char *, shape4, const char *, shape4, const char *, shape4, int, int)) \
    X(k_unary, (char *, shape4, int, const char *, shape4, int, int, float, float)) \
    X(k_glu, (char *, shape4, const char *, shape4, const char *, shape4, int, int, int, float, float)) \
    X(k_set_rows, (char *, shape4, int, const char *, shape4, int, const char *, shape4, int, int *)) \
    X(k_cpy_quant, (char *, int, const char *, shape4, int))                  \
    X(k_set_rows_quant, (char *, shape4, int, const char *, shape4, int, const char *, shape4, int, int *)) \
    X(k_pad, (char *, shape4, const char *, shape4, int, int, int, int, int)) \
    X(k_im2col, (char *, shape4, int, const char *, shape4, int, int, int, int, int, int, int, int, int, int)) \
    X(k_add_id_f32, (char *, shape4, const char *, shape4, const char *, shape4, const char *, shape4, int *)) \
    X(k_argsort_f32, (char *, shape4, const char *, shape4, int, int)) \
    X(k_flash_attn_ext_f32, (char *, shape4, const char *, shape4, const char *, shape4, int, const char *, shape4, int, const char *, shape4, const char *, float, float, float)) \
    X(k_silu_back_f32, (char *, shape4, const char *, shape4, const char *, shape4)) \
    X(k_repeat, (char *, shape4, const char *, shape4, int))                  \
    X(k_ssm_conv_f32, (char *, shape4, const char *, shape4, const char *, shape4)) \
    X(k_ssm_scan_f32, (char *, const char *, shape4, const char *, shape4, const char *, shape4, const char *, shape4, const char *, shape4, const char *, shape4, const char *, shape4, int, int *)) \
    X(k_concat_f32, (char *, shape4, const char *, shape4, const char *, shape4, int)) \
    X(k_cpy, (char *, shape4, int, const char *, shape4, int))                \
    X(k_get_rows, (char *, shape4, const char *, shape4, int, const char *, shape4, int *)) \
    X(k_diag_mask_f32, (char *, shape4, const char *, shape4, int, float))    \
    X(k_fill_f32, (char *, i64, float))                                       \
    X(k_sum_rows_f32, (char *, shape4, const char *, shape4, int))            \
    X(k_sum_f32, (char *, const char *, shape4))                              \
    X(k_norm_f32, (char *, shape4, const char *, shape4, float, int))         \
    X(k_rms_norm_back_f32, (char *, shape4, const char *, shape4, const char *, shape4, float)) \
    X(k_soft_max_f32, (char *, shape4, const char *, shape4, const char *, shape4, int, float, float, const char *)) \
    X(k_soft_max_back_f32, (char *, shape4, const char *, shape4, const char *, shape4, float)) \
    X(k_mul_mat_id, (char *, shape4, const char *, shape4, int, const char *, shape4, const char *, shape4, int *)) \
    X(k_round_act_f32, (char *, shape4, const char *, shape4, int, char *)) \
    X(k_mul_mat_f32, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_f32, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_f16, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_f16, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_bf16, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_bf16, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_q4_0, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_q4_0, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_q4_1, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_q4_1, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_q5_0, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_q5_0, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_q5_1, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_q5_1, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_q8_0, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_q8_0, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_q2_k, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_q2_k, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_q3_k, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_q3_k, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_q4_k, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_q4_k, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_q5_k, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_q5_k, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_q6_k, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_mul_mat_vec_q6_k, (char *, shape4, const char *, shape4, const char *, shape4, const char *)) \
    X(k_rope, (char *, shape4, int, const char *, shape4, int, const char *, const char *, int, int, int, int, int, int, int, float, float, float, float, float, float, int)) \

#define DECLARE(name, params) extern "C" void name params;
KERNELS(DECLARE)

template <typename T> static T take(const std::vector<unsigned char> &buf, size_t &off, bool &ok) {
    off = (off + alignof(T) - 1) & ~(alignof(T) - 1);
    T v{};
    if (off + sizeof(T) > buf.size()) {
        ok = false;
    } else {
        memcpy(&v, buf.data() + off, sizeof(T));
    }
    off += sizeof(T);
    return v;
}

// bind_args unpacks buf into f's parameters; false when the sizes disagree.
template <typename... A>
static bool bind_args(void (*f)(A...), const std::vector<unsigned char> &buf, std::function<void()> &out) {
    size_t off = 0;
    bool ok = true;
    std::tuple<A...> args{take<A>(buf, off, ok)...}; // braces: left to right
    if (!ok || off != buf.size()) {
        return false;
    }
    out = [f, args]() { std::apply(f, args); };
    return true;
}

typedef bool (*binder)(const std::vector<unsigned char> &, std::function<void()> &);
static std::map<std::string, binder> registry() {
    std::map<std::string, binder> m;
#define REGISTER(name, params)                                                 \
    m[#name] = [](const std::vector<unsigned char> &b, std::function<void()> &o) { return bind_args(name, b, o); };
    KERNELS(REGISTER)
    return m;
}

// Fibers of the running block. On x86-64 a fiber switch is six pushes, a
// stack swap and six pops (emu_swap below): ucontext's swapcontext and
// getcontext make a sigprocmask system call each, three or more per thread
// of every block, which made the emulator spend half its time in the
// kernel. Elsewhere, or built with -DGOGML_EMU_UCONTEXT, the fibers use
// ucontext.
static const size_t kStack = 64 * 1024;
static std::vector<std::vector<char>> stacks;
static size_t cur;
static std::function<void()> *body;

#if defined(__x86_64__) && !defined(GOGML_EMU_UCONTEXT)
// emu_swap saves the callee-saved registers on the current stack, stores
// the stack pointer in *save and continues on the stack to (as saved by
// an earlier emu_swap, or prepared by fiber_start).
extern "C" void emu_swap(void **save, void *to);
asm(R"(
	.text
	.globl emu_swap
	.type emu_swap, @function
emu_swap:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size emu_swap, .-emu_swap
)");

struct fiber {
    void *sp;
    bool done;
    emu_dim3 tid;
};
static std::vector<fiber> fibers;
static void *sched_sp;

void __syncthreads() {
    emu_swap(&fibers[cur].sp, sched_sp);
}

static void fiber_entry() {
    (*body)();
    fibers[cur].done = true;
    emu_swap(&fibers[cur].sp, sched_sp); // never resumed
    __builtin_trap();
}

// fiber_start prepares stack t so that emu_swap to the returned pointer
// pops six zero registers and "returns" into fiber_entry with the stack
// aligned as after a call (rsp % 16 == 8 at entry).
static void *fiber_start(size_t t) {
    uintptr_t end = (uintptr_t)(stacks[t].data() + kStack) & ~(uintptr_t)15;
    void **slot = (void **)(end - 16); // 16-aligned: the return address
    slot[1] = nullptr;
    slot[0] = (void *)fiber_entry;
    for (int i = 1; i <= 6; i++) {
        slot[-i] = nullptr;
    }
    return (void *)(slot - 6);
}

static void resume(size_t t) {
    emu_swap(&sched_sp, fibers[t].sp);
}
#else
struct fiber {
    ucontext_t ctx;
    bool done;
    emu_dim3 tid;
};
static std::vector<fiber> fibers;
static ucontext_t sched;

void __syncthreads() {
    swapcontext(&fibers[cur].ctx, &sched);
}

static void trampoline() {
    (*body)();
    fibers[cur].done = true;
}

static void *fiber_start(size_t t) {
    fiber &f = fibers[t];
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stacks[t].data();
    f.ctx.uc_stack.ss_size = kStack;
    f.ctx.uc_link = &sched;
    makecontext(&f.ctx, trampoline, 0);
    return nullptr;
}

static void resume(size_t t) {
    swapcontext(&sched, &fibers[t].ctx);
}
#endif

static void run_block(unsigned nthreads) {
    if (fibers.size() < nthreads) {
        fibers.resize(nthreads);
        stacks.resize(nthreads, std::vector<char>(kStack));
    }
    for (unsigned t = 0; t < nthreads; t++) {
        fiber &f = fibers[t];
#if defined(__x86_64__) && !defined(GOGML_EMU_UCONTEXT)
        f.sp = fiber_start(t);
#else
        fiber_start(t);
#endif
        f.done = false;
        f.tid = emu_dim3{t % blockDim.x, (t / blockDim.x) % blockDim.y, t / (blockDim.x * blockDim.y)};
    }
    for (;;) {
        bool alive = false;
        for (unsigned t = 0; t < nthreads; t++) {
            if (fibers[t].done) {
                continue;
            }
            cur = t;
            threadIdx = fibers[t].tid;
            resume(t);
            alive = alive || !fibers[t].done;
        }
        if (!alive) {
            return;
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s ARENA_FILE ARENA_ADDR_HEX ARENA_SIZE\n", argv[0]);
        return 2;
    }
    const unsigned long long addr = strtoull(argv[2], nullptr, 16);
    const unsigned long long size = strtoull(argv[3], nullptr, 10);
    int fd = open(argv[1], O_RDWR);
    if (fd < 0) {
        perror("open arena");
        return 1;
    }
    void *p = mmap((void *)addr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
    if (p == MAP_FAILED || (unsigned long long)p != addr) {
        // The address is taken in this process (address-space layout
        // randomisation): the Go side retries with another arena.
        perror("mmap arena at the Go side's address");
        return 1;
    }
    std::cout << "ready" << std::endl;
    auto reg = registry();
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string op, name, hex;
        unsigned gx, gy, gz, bx, by, bz, shmem;
        in >> op >> name >> gx >> gy >> gz >> bx >> by >> bz >> shmem >> hex;
        if (op != "L" || !in) {
            std::cout << "err bad request" << std::endl;
            continue;
        }
        auto it = reg.find(name);
        if (it == reg.end()) {
            std::cout << "err unknown kernel " << name << std::endl;
            continue;
        }
        std::vector<unsigned char> buf(hex.size() / 2);
        for (size_t i = 0; i < buf.size(); i++) {
            buf[i] = (unsigned char)strtoul(hex.substr(2 * i, 2).c_str(), nullptr, 16);
        }
        std::function<void()> fn;
        if (!it->second(buf, fn)) {
            std::cout << "err argument buffer of " << buf.size() << " bytes does not fit " << name << std::endl;
            continue;
        }
        if (shmem > sizeof(emu_dyn_shared) || bx * by * bz > 1024 || bx * by * bz == 0) {
            std::cout << "err launch shape" << std::endl;
            continue;
        }
        body = &fn;
        gridDim = emu_dim3{gx, gy, gz};
        blockDim = emu_dim3{bx, by, bz};
        for (unsigned z = 0; z < gz; z++) {
            for (unsigned y = 0; y < gy; y++) {
                for (unsigned x = 0; x < gx; x++) {
                    blockIdx = emu_dim3{x, y, z};
                    run_block(bx * by * bz);
                }
            }
        }
        std::cout << "ok" << std::endl;
    }
    return 0;
}
