// llamalogits MODEL FA KVTYPE NGEN ID...: loads MODEL with llama.cpp
// (libllama), decodes the ids in one batch with flash attention FA (0/1)
// and a KVTYPE (f32/f16) KV cache, then NGEN greedy steps one token at a
// time. Prints "vocab V", one "logits v0 v1 ..." line per evaluated
// position, and "generated id...". Built and run by peer_test.go through
// the peer's sysroot; not part of the build. With LLAMALOGITS_DUMP set
// (a substring of tensor names), every computed f32 tensor whose name
// contains it is printed as "tensor NAME OP ne0 ne1 ne2 ne3 v...", for
// finding where a model first differs.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <llama.h>
#include <ggml-backend.h>

static void quiet(enum ggml_log_level level, const char *text, void *ud) {
    (void)ud;
    if (level >= GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static void print_row(const float *l, int n) {
    printf("logits");
    for (int i = 0; i < n; i++) printf(" %.9g", l[i]);
    printf("\n");
}

static bool dump(struct ggml_tensor *t, bool ask, void *ud) {
    const char *want = ud;
    if (!strstr(t->name, want)) return false;
    if (ask) return true;
    if (t->type != GGML_TYPE_F32 || !ggml_is_contiguous(t)) return true;
    int64_t n = ggml_nelements(t);
    float *v = malloc(n * sizeof(float));
    ggml_backend_tensor_get(t, v, 0, n * sizeof(float));
    printf("tensor %s %s %lld %lld %lld %lld", t->name, ggml_op_desc(t), (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2], (long long)t->ne[3]);
    for (int64_t i = 0; i < n; i++) printf(" %.9g", v[i]);
    printf("\n");
    free(v);
    return true;
}

static int argmax(const float *l, int n) {
    int b = 0;
    for (int i = 1; i < n; i++) if (l[i] > l[b]) b = i;
    return b;
}

int main(int argc, char **argv) {
    if (argc < 6) { fprintf(stderr, "usage: llamalogits MODEL FA KVTYPE NGEN ID...\n"); return 2; }
    llama_log_set(quiet, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    struct llama_model *model = llama_model_load_from_file(argv[1], mp);
    if (!model) { fprintf(stderr, "load failed\n"); return 1; }
    int n_prompt = argc - 5, n_gen = atoi(argv[4]);
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = n_prompt + n_gen + 1;
    cp.n_batch = cp.n_ubatch = n_prompt;
    cp.n_threads = cp.n_threads_batch = 2;
    cp.flash_attn_type = atoi(argv[2]) ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.type_k = cp.type_v = strcmp(argv[3], "f16") == 0 ? GGML_TYPE_F16 : GGML_TYPE_F32;
    if (getenv("LLAMALOGITS_DUMP")) {
        cp.cb_eval = dump;
        cp.cb_eval_user_data = getenv("LLAMALOGITS_DUMP");
    }
    struct llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "context failed\n"); return 1; }
    int V = llama_vocab_n_tokens(llama_model_get_vocab(model));
    printf("vocab %d\n", V);
    struct llama_batch b = llama_batch_init(n_prompt, 0, 1);
    for (int i = 0; i < n_prompt; i++) {
        b.token[i] = atoi(argv[5 + i]);
        b.pos[i] = i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = 1;
    }
    b.n_tokens = n_prompt;
    if (llama_decode(ctx, b)) { fprintf(stderr, "decode failed\n"); return 1; }
    for (int i = 0; i < n_prompt; i++) print_row(llama_get_logits_ith(ctx, i), V);
    int next = argmax(llama_get_logits_ith(ctx, n_prompt - 1), V);
    printf("generated %d", next);
    for (int s = 1; s < n_gen; s++) {
        b.token[0] = next;
        b.pos[0] = n_prompt + s - 1;
        b.n_tokens = 1;
        if (llama_decode(ctx, b)) { fprintf(stderr, "decode failed\n"); return 1; }
        next = argmax(llama_get_logits_ith(ctx, 0), V);
        printf(" %d", next);
    }
    printf("\n");
    llama_batch_free(b);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
