// ggufcheck FILE [OUT]: reads FILE with ggml's own gguf_init_from_file
// (tensor data loaded), prints what it sees, and with OUT writes the
// metadata back with gguf_write_to_file(only_meta): header, key/values,
// tensor infos and padding (its tensor infos hold no data pointers after a
// read, so ggml cannot write their data back). Built and run by peer_c_test.go against
// the peer's libggml-base; not part of the build.
#include <stdio.h>
#include <gguf.h>
#include <ggml.h>

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct ggml_context *ctx = NULL;
    struct gguf_init_params p = { /*no_alloc*/ false, &ctx };
    struct gguf_context *g = gguf_init_from_file(argv[1], p);
    if (!g) { printf("REJECTED\n"); return 1; }
    printf("version %u\nalignment %zu\noffset %zu\nkv %lld\ntensors %lld\n", gguf_get_version(g),
           gguf_get_alignment(g), gguf_get_data_offset(g), (long long)gguf_get_n_kv(g), (long long)gguf_get_n_tensors(g));
    for (int64_t i = 0; i < gguf_get_n_kv(g); i++) {
        enum gguf_type t = gguf_get_kv_type(g, i);
        printf("key %s %s", gguf_get_key(g, i), gguf_type_name(t));
        if (t == GGUF_TYPE_ARRAY) printf(" %s %zu", gguf_type_name(gguf_get_arr_type(g, i)), gguf_get_arr_n(g, i));
        if (t == GGUF_TYPE_UINT32) printf(" %u", gguf_get_val_u32(g, i));
        if (t == GGUF_TYPE_STRING) printf(" %s", gguf_get_val_str(g, i));
        printf("\n");
    }
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) {
        struct ggml_tensor *t = ggml_get_tensor(ctx, gguf_get_tensor_name(g, i));
        printf("tensor %s %s %zu %zu %lld,%lld,%lld,%lld\n", gguf_get_tensor_name(g, i), ggml_type_name(gguf_get_tensor_type(g, i)),
               gguf_get_tensor_offset(g, i), gguf_get_tensor_size(g, i),
               (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2], (long long)t->ne[3]);
    }
    if (argc > 2 && !gguf_write_to_file(g, argv[2], /*only_meta*/ true)) { printf("WRITE FAILED\n"); return 1; }
    gguf_free(g);
    ggml_free(ctx);
    return 0;
}
