# gogml — make help lists the targets.
GO      ?= go
SHARED  ?= ../shared
PROMPT  ?= 1,2,3,4,5,6,7,8
NTOK    ?= 24

.PHONY: help build vet test test-go test-race test-opengl run bench fuzz clean

help:
	@echo "make run       run the main job: plan the example graph, then the small decoder on the CPU backend"
	@echo "make test      install what the tests need (apt, as root) and run every test"
	@echo "make bench     benchmarks: allocator ns/node, CPU kernels (GFLOP/s, GB/s), decoder tokens/s"
	@echo "make fuzz      run each fuzz target for FUZZTIME (default 30s)"
	@echo "make ptx       regenerate the CUDA PTX from internal/kernels/cuda/*.cu (needs nvcc; see the cuda block)"
	@echo "make gpu-check build the NVIDIA device check (test + bench binaries and a runner script)"

build:
	CGO_ENABLED=0 $(GO) build ./...

vet:
	CGO_ENABLED=0 $(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

# Every package's tests (fuzz targets run their seed corpora), again under
# the race detector, then the OpenGL backend on Mesa's llvmpipe.
test: build vet test-go test-race test-opengl

test-go:
	$(GO) test -count=1 ./...

test-race:
	$(GO) test -count=1 -race ./...

run:
	$(GO) run ./cmd/gogml plan examples/graphs/example.graph.json -stats
	$(GO) run ./cmd/gogml run -prompt $(PROMPT) -n $(NTOK)

bench:
	$(GO) test -run XXX -bench . ./runtime ./gallocr ./internal/kernels/... ./backends/cpu/... ./model/...

FUZZTIME ?= 30s
fuzz:
	@set -e; for t in \
		./runtime:FuzzParseGraphFile ./gallocr:FuzzPlanInvariants ./gallocr:FuzzOptimizedInvariants \
		./gallocr:FuzzPackBlocks ./internal/kernels/cpu:FuzzF32ToF16 ./backends/cuda:FuzzParsePTXEntries \
		./membench:FuzzParseSize ./cmd/gogml:FuzzParseTokens ./cmd/gogml:FuzzParseSize; do \
		pkg=$${t%%:*}; fn=$${t##*:}; echo "== $$pkg $$fn"; \
		$(GO) test $$pkg -run XXX -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME); \
	done

clean:
	rm -rf bin gpu-check-out gl-gpu-check-out

# --- opengl ---
# The OpenGL backend builds with the tags "opengl egl" (go-gl links only
# libEGL; see RATIONALE.md); scripts/ensure-gl-deps.sh installs
# the Debian packages as root. GOGML_REQUIRE_GL=1 turns a missing GL
# context into a failure. make bench-opengl: transfer GB/s by size and
# mode, MUL_MAT GFLOP/s and element-wise GB/s with ratios to the CPU
# backend. make run-opengl: the decoder on GL (compare its logits checksum
# with make run's). make gl-gpu-check: build gl-gpu-check-out/ (opengl.test, gogml,
# glvnd's libEGL/libGLdispatch, run.sh) for an EGL GPU machine without Go.
GL_TAGS ?= opengl,egl
.PHONY: bench-opengl gl-gpu-check run-opengl
test-opengl:
	sh scripts/ensure-gl-deps.sh
	GOGML_REQUIRE_GL=$${GOGML_REQUIRE_GL:-1} $(GO) test -count=1 -race -tags $(GL_TAGS) ./backends/opengl/... ./internal/kernels/glsl/... ./model/llama/...
	GOGML_REQUIRE_GL=$${GOGML_REQUIRE_GL:-1} $(GO) test -count=1 -tags $(GL_TAGS) -run 'TestConformance|TestOps' ./backends/opengl/
bench-opengl:
	sh scripts/ensure-gl-deps.sh
	GOGML_REQUIRE_GL=1 $(GO) test -count=1 -run XXX -bench . -benchtime 200ms -tags $(GL_TAGS) ./backends/opengl/
gl-gpu-check:
	GO=$(GO) sh scripts/gl-gpu-check/build.sh gl-gpu-check-out
run-opengl:
	sh scripts/ensure-gl-deps.sh
	$(GO) run -tags $(GL_TAGS) ./cmd/gogml run -backend opengl -prompt $(PROMPT) -n $(NTOK)
# --- end opengl ---

# --- cuda ---
# make ptx: regenerate internal/kernels/cuda/*.ptx (compute_70, PTX ISA 7.x) from the
# .cu sources; the PTX is committed, so only kernel edits need it. nvcc on
# Debian 12: add "contrib non-free non-free-firmware" to Components in
# /etc/apt/sources.list.d/debian.sources, then apt-get update && apt-get
# install nvidia-cuda-toolkit (CUDA 11.8). NVCC=/path/to/nvcc overrides.
# make gpu-check: build gpu-check-out/ (cuda.test, gogml, run.sh) here; on
# an NVIDIA machine run gpu-check-out/run.sh [results-dir] (no Go needed;
# see scripts/gpu-check/README).
.PHONY: ptx gpu-check
ptx:
	sh internal/kernels/cuda/genptx.sh
gpu-check:
	GO=$(GO) sh scripts/gpu-check/build.sh gpu-check-out
# --- end cuda ---

# --- bench-vs-ggml ---
# make bench-vs-ggml: gogml's CPU backend and Debian's ggml 0.27.0
# (test-backend-ops perf) on the same ops and shapes, interleaved rounds at
# 1 and 2 threads; writes docs/performance.md. The peer comes from
# scripts/ggml-peer.sh when present, else GOGML_GGML_SYSROOT. ggml's perf
# loop moves ~8 GB per case, so this takes ~13 min on a busy 2-core machine
# (prompt batch 32, 1 round); BENCHVSGGML_FLAGS to change it (-prompt 512
# -rounds 2: the full measurement, ~1 h there; -cases 'rope|cpy' to narrow).
.PHONY: bench-vs-ggml test-simd-levels
bench-vs-ggml:
	$(GO) run ./internal/cmd/benchvsggml $(BENCHVSGGML_FLAGS)
# make test-simd-levels: the kernel and CPU backend tests under each SIMD
# level this CPU has (GOGML_CPU caps the level; see package vec).
test-simd-levels:
	@set -e; for l in generic avx2 avx512; do echo "== GOGML_CPU=$$l"; \
		GOGML_CPU=$$l $(GO) test -count=1 ./internal/kernels/... ./backends/cpu/...; done
# --- end bench-vs-ggml ---
