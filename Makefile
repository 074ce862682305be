# gogml — make help lists the targets.
GO      ?= go
SHARED  ?= ../shared
PROMPT  ?= 1,2,3,4,5,6,7,8
NTOK    ?= 24

.PHONY: help build vet staticcheck test test-go test-race test-opengl run bench fuzz clean

help:
	@echo "make run          run the main job: plan a llama-style graph (ggml vs optimized vs lower bound), then the small decoder on the CPU backend"
	@echo "make test         build, vet, staticcheck, then every test, again under -race, then OpenGL on Mesa, then ggml's CI subset"
	@echo "                  (installs Mesa as root; SKIP_GL=1 skips the OpenGL tests)"
	@echo "make build        build every package with CGO_ENABLED=0"
	@echo "make vet          go vet and gofmt"
	@echo "make staticcheck  staticcheck (pinned in go.mod as a tool), default build and -tags opengl,egl"
	@echo "make test-go      every package's tests"
	@echo "make test-race    every package's tests under the race detector"
	@echo "make test-opengl  the OpenGL backend's tests on Mesa llvmpipe (installs Mesa as root)"
	@echo "make bench        benchmarks: allocator ns/node, CPU kernels (GFLOP/s, GB/s), decoder tokens/s"
	@echo "make bench-opengl OpenGL transfer and kernel benchmarks with ratios to the CPU backend"
	@echo "make run-opengl   the decoder on the OpenGL backend"
	@echo "make fuzz         run each fuzz target for FUZZTIME (default 30s)"
	@echo "make ptx          regenerate the CUDA PTX from internal/kernels/cuda/*.cu (needs nvcc; see the cuda block)"
	@echo "make gpu-check    build the NVIDIA device check (test + bench binaries and a runner script)"
	@echo "make device-check  build device-check-out/: the CUDA and OpenGL device checks for one run (scripts/gpu-check/README)"
	@echo "make test-ggml    ggml 0.27.0's test-backend-ops against gogml rpc-server (CI subset; fetches the Debian peer)"
	@echo "make test-ggml-full  every op of test-backend-ops against gogml rpc-server (long)"
	@echo "make ggml-conformance  regenerate docs/ggml-conformance.md (every op, CPU and OpenGL; long)"
	@echo "make ggml-cuda-emu  every op of test-backend-ops on the emulated CUDA kernels, table in /tmp (hours)"
	@echo "make ggml-cuda-emu-archs  llama.cpp's test-llama-archs on the emulated CUDA backend (twelve architectures, dense, MoE and SSM/hybrid)"
	@echo "make gguf-peer    the GGUF tests against Debian's python3-gguf"
	@echo "make test-simd-levels  the kernel and CPU backend tests at each SIMD level (GOGML_CPU=generic|avx2|avx512)"
	@echo "make bench-planner-vs-ggml gogml's graph allocator vs ggml 0.27.0's ggml_gallocr on every corpus graph, interleaved; writes docs/planner-bench.md"
	@echo "make bench-vs-ggml gogml's CPU backend vs ggml 0.27.0 test-backend-ops perf, same shapes, interleaved; writes docs/performance.md"
	@echo "make bench-vs-llama gogml run -model vs llama.cpp's llama-bench and llama-completion on the same GGUF files; writes docs/llama-bench.md"
	@echo "make bench-decoder-vs-llama the same at 1 and 2 threads, f32 and q8_0, default and medium shapes; docs/llama-bench-{default,medium}.md"
	@echo "make gl-gpu-check build the OpenGL device check for an EGL GPU machine without Go"
	@echo "make asm          regenerate the generated kernel assembly (internal/kernels/cpukernels/vec/asmgen) and check it"
	@echo "make asm-identity show the generated kernels' machine code equals the hand-written files' they replaced"
	@echo "make clean        remove build outputs"

# The library also builds for macOS and for 64-bit ARM Linux (host
# memory through x/sys/unix there too; huge pages and sysinfo are Linux's).
build:
	CGO_ENABLED=0 $(GO) build ./...
	CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 $(GO) build ./...
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build ./...

vet:
	CGO_ENABLED=0 $(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

# Every package's tests (fuzz targets run their seed corpora), again under
# the race detector, then the OpenGL backend on Mesa's llvmpipe.
test: build vet staticcheck ggml-peer test-go test-simd-levels test-race test-opengl test-ggml

# staticcheck is pinned in go.mod (go get -tool honnef.co/go/tools/cmd/staticcheck@v0.8.2).
# The tagged pass needs libEGL's headers (cgo), hence ensure-gl-deps.sh.
staticcheck:
	$(GO) tool staticcheck ./...
ifneq ($(SKIP_GL),1)
	sh scripts/ensure-gl-deps.sh
	$(GO) tool staticcheck -tags $(GL_TAGS) ./...
endif

# The tests that compare with real ggml/llama.cpp (GGUF readers, logits,
# tokens) find its sysroot in GOGML_PEER_ROOT; when the pinned peer is gone
# it is empty and they skip, saying so.
test-go:
	GOGML_PEER_ROOT=$$(bash scripts/ggml-peer.sh path 2>/dev/null) $(GO) test -count=1 ./...

test-race:
	$(GO) test -count=1 -race ./...

run:
	$(GO) run ./cmd/gogml plan examples/graphs/llama-01.graph.json -stats
	$(GO) run ./cmd/gogml run -prompt $(PROMPT) -n $(NTOK)

bench:
	$(GO) test -run XXX -bench . ./runtime ./gallocr ./internal/kernels/... ./backends/cpu/... ./model/...

FUZZTIME ?= 30s
fuzz:
	@set -e; for t in \
		./runtime:FuzzParseGraphFile ./gallocr:FuzzPlanInvariants ./gallocr:FuzzOptimizedInvariants \
		./gallocr:FuzzGraphFile ./gallocr:FuzzDynIndexed ./gallocr:FuzzParsePlanFile \
		./gallocr:FuzzPackBlocks ./internal/kernels/cpukernels:FuzzF32ToF16 ./backends/cuda:FuzzParsePTXEntries \
		./membench:FuzzParseSize ./cmd/gogml:FuzzParseTokens ./cmd/gogml:FuzzParseSize \
		./internal/rpcwire:FuzzDecodeGraph ./rpcserver:FuzzServeConn \
		./internal/ggmlpeer:FuzzParseBackendOps ./internal/ggmlpeer:FuzzParseLlamaArchs \
		./gguf:FuzzParse ./model/llama:FuzzCheckGGUF ./model/llama:FuzzBPEEncode ./model/llama:FuzzBPEVocab; do \
		pkg=$${t%%:*}; fn=$${t##*:}; echo "== $$pkg $$fn"; \
		$(GO) test $$pkg -run XXX -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME); \
	done

clean:
	rm -rf bin gpu-check-out gl-gpu-check-out device-check-out

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
# SKIP_GL=1 skips them (say, as a user who cannot install Mesa); without it
# a missing package stops at once with the command that installs it.
test-opengl:
ifeq ($(SKIP_GL),1)
	@echo "test-opengl: skipped (SKIP_GL=1)"
else
	sh scripts/ensure-gl-deps.sh
	GOGML_REQUIRE_GL=$${GOGML_REQUIRE_GL:-1} $(GO) test -count=1 -race -tags $(GL_TAGS) ./backends/opengl/... ./internal/kernels/glsl/... ./model/llama/... ./membench/providers/ ./cmd/gogml/ ./sched/
	GOGML_REQUIRE_GL=$${GOGML_REQUIRE_GL:-1} $(GO) test -count=1 -tags $(GL_TAGS) -run 'TestConformance|TestOps' ./backends/opengl/
endif
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
# make device-check: build device-check-out/ (cuda/, gl/, device-check.sh,
# under 60 MiB) for one device `run` that checks CUDA then OpenGL in 8
# minutes: the exact call is in scripts/gpu-check/README.
.PHONY: ptx gpu-check device-check
ptx:
	sh internal/kernels/cuda/genptx.sh
gpu-check:
	GO=$(GO) sh scripts/gpu-check/build.sh gpu-check-out
device-check:
	GO=$(GO) sh scripts/gpu-check/bundle.sh device-check-out
# --- end cuda ---

# --- ggml peer ---
# Real ggml 0.27.0 / llama.cpp 0.7.0 (Debian binaries in a private sysroot,
# scripts/ggml-peer.sh) judges gogml rpc-server: test-backend-ops -b RPC0
# through a preload library built here with gcc. make test-ggml: the peer
# script, then the CI subset of claimed ops (internal/ggmlpeer.CISubset) on
# -backend cpu, and on -backend opengl (llvmpipe). Exit 3 from the script
# (pinned version gone from Debian) makes the tests SKIP with its message;
# GGML_PEER_OPTIONAL=1 makes any fetch failure a skip. make test-ggml-full:
# every op of the suite, failing when a claimed op is not clean (long).
# make ggml-conformance: the same run, written to docs/ggml-conformance.md
# (GGML_CONFORMANCE_FLAGS adds flags, e.g. -cuda DIR, -logs DIR -reuse).
GGML_PEER_OPS ?= ci
GGML_CONFORMANCE_FLAGS ?=
.PHONY: test-ggml test-ggml-full ggml-conformance ggml-peer
ggml-peer:
	@bash scripts/ggml-peer.sh fetch; rc=$$?; \
	if [ $$rc -eq 3 ]; then echo "test-ggml: SKIPPED: the pinned ggml peer is unavailable (see above)" >&2; \
	elif [ $$rc -ne 0 ] && [ "$${GGML_PEER_OPTIONAL:-}" = 1 ]; then echo "test-ggml: SKIPPED: peer fetch failed (GGML_PEER_OPTIONAL=1)" >&2; \
	elif [ $$rc -ne 0 ]; then exit $$rc; fi
test-ggml: ggml-peer
	GOGML_PEER=1 GOGML_PEER_OPS=$(GGML_PEER_OPS) GOGML_PEER_OPTIONAL=$${GGML_PEER_OPTIONAL:-} \
		$(GO) test -count=1 -timeout 20m -v -run 'TestPreloadAgainstGGMLServer|TestRPCServerCPU|TestDecoderOverGGMLServers' ./internal/ggmlpeer/
	sh scripts/ensure-gl-deps.sh
	GOGML_PEER=1 GOGML_PEER_OPS=$(GGML_PEER_OPS) GOGML_PEER_OPTIONAL=$${GGML_PEER_OPTIONAL:-} \
		$(GO) test -count=1 -timeout 20m -v -tags $(GL_TAGS) -run 'TestRPCServerOpenGL|TestDecoderOverGogmlGLAndGGML' ./internal/ggmlpeer/
test-ggml-full: ggml-peer
	sh scripts/ensure-gl-deps.sh
	$(GO) run ./internal/ggmlpeer/conformance -backends cpu,opengl -check -out /dev/null $(GGML_CONFORMANCE_FLAGS)
ggml-conformance: ggml-peer
	sh scripts/ensure-gl-deps.sh
	$(GO) run ./internal/ggmlpeer/conformance -backends cpu,opengl -out docs/ggml-conformance.md $(GGML_CONFORMANCE_FLAGS)
# make ggml-cuda-emu-archs: llama.cpp's test-llama-archs with the emulated
# CUDA backend as its RPC device (ops it declines placed on ggml's CPU by
# llama.cpp's scheduler); CUDA_EMU_ARCHS lists the architectures.
.PHONY: ggml-cuda-emu-archs
CUDA_EMU_ARCHS ?= llama,qwen3,qwen3moe,mistral3,granite,smollm3,mamba,mamba2,granitehybrid,falcon-h1,jamba,nemotron_h
ggml-cuda-emu-archs: ggml-peer
	GOGML_PEER_ROOT=$$(bash scripts/ggml-peer.sh path) GOGML_EMU_ARCHS=$(CUDA_EMU_ARCHS) $(GO) test -count=1 -timeout 3h \
		-run TestLlamaArchsOnEmulatedCUDA -v ./backends/cuda/

# make ggml-cuda-emu: test-backend-ops on the emulated CUDA backend (the
# kernels' CUDA C built with g++; backends/cuda TestGGMLJudgesEmulatedCUDA
# with GOGML_EMU_ALL=1, every op, the longest in chunks; hours on two
# cores), logs in CUDA_EMU_LOGS, then their per-op table (a CUDA column)
# in CUDA_EMU_OUT (an earlier run's logs are removed first, so no stale
# chunk merges in); fails when a case the backend runs fails.
.PHONY: ggml-cuda-emu
CUDA_EMU_LOGS ?= /tmp/gogml-cuda-emu
CUDA_EMU_OUT ?= /tmp/gogml-cuda-emu.md
CUDA_EMU_LIMIT ?= 30m
ggml-cuda-emu: ggml-peer
	@rm -rf $(CUDA_EMU_LOGS); GOGML_PEER_ROOT=$$(bash scripts/ggml-peer.sh path) GOGML_EMU_ALL=1 GOGML_EMU_GGML_LOGS=$(CUDA_EMU_LOGS) \
		GOGML_EMU_GGML_LIMIT=$(CUDA_EMU_LIMIT) nice -n 10 $(GO) test -count=1 -timeout 48h \
		-run TestGGMLJudgesEmulatedCUDA -v ./backends/cuda/; rc=$$?; \
	$(GO) run ./internal/ggmlpeer/conformance -backends '' -archs '' -cuda $(CUDA_EMU_LOGS) -cuda-emulated -out $(CUDA_EMU_OUT) && \
	echo "ggml-cuda-emu: table in $(CUDA_EMU_OUT)"; exit $$rc
# --- end ggml peer ---

# --- gguf ---
# make gguf-peer: fetch Debian's python3-gguf (llama.cpp 0.7.0's gguf-py)
# and run the gguf tests against it and, where GOGML_PEER_ROOT (default
# the ggml peer's sysroot) holds Debian's ggml 0.27.0, against ggml's own reader.
# Without the peers those tests skip, saying so.
.PHONY: gguf-peer
GGUF_PEER_DIR ?= /tmp/gogml-gguf-peer
gguf-peer:
	sh scripts/gguf-peer.sh $(GGUF_PEER_DIR)
	GOGML_GGUF_PEER=$(GGUF_PEER_DIR)/root/usr/lib/python3/dist-packages $(GO) test -count=1 -v -run 'Peer|GGML' ./gguf/
# --- end gguf ---

# --- bench-vs-llama ---
# make bench-vs-llama: the decoder side by side with llama.cpp 0.7.0 on the
# same GGUF files (an f16 file written by gogml, the other types quantized
# by llama-quantize --pure): llama-bench -p 128 -n 64 -t 1 and 2 (three interleaved rounds) against gogml run
# -model, then time to first token and peak RSS on a cold page cache;
# writes docs/llama-bench.md (~2-5 min on a quiet 2-core machine).
# BENCHVSLLAMA_FLAGS to change it (-types, -p, -n, -t, -r, model shape).
.PHONY: bench-vs-llama
BENCHVSLLAMA_FLAGS ?=
bench-vs-llama: ggml-peer
	$(GO) run ./internal/cmd/benchvsllama -t 1,2 -r 3 -out docs/llama-bench.md $(BENCHVSLLAMA_FLAGS)
# make bench-decoder-vs-llama: the same at 1 and 2 threads for f32 and q8_0
# files of the built-in decoder's default shape (dim 128, 2 layers, vocabulary
# 256) and of a medium one (dim 1024, 8 layers); writes
# docs/llama-bench-default.md and docs/llama-bench-medium.md (~3 min).
.PHONY: bench-decoder-vs-llama
bench-decoder-vs-llama: ggml-peer
	$(GO) run ./internal/cmd/benchvsllama -target bench-decoder-vs-llama -types f32,q8_0 -t 1,2 -r 3 \
		-dim 128 -heads 4 -kv-heads 4 -ffn 352 -layers 2 -vocab 256 -out docs/llama-bench-default.md
	$(GO) run ./internal/cmd/benchvsllama -target bench-decoder-vs-llama -types f32,q8_0 -t 1,2 -r 2 \
		-dim 1024 -heads 16 -kv-heads 4 -ffn 2816 -layers 8 -vocab 32000 -out docs/llama-bench-medium.md
# --- end bench-vs-llama ---

# --- bench-vs-ggml ---
# make bench-vs-ggml: gogml's CPU backend and Debian's ggml 0.27.0
# (test-backend-ops perf) on the same ops and shapes, interleaved rounds at
# 1 and 2 threads; writes docs/performance.md. The peer comes from
# scripts/ggml-peer.sh when present, else GOGML_GGML_SYSROOT. ggml's perf
# loop moves ~8 GB per test-file case, so this takes ~15 min on a busy
# 2-core machine (prompt batch 32, plus n=512 MUL_MAT rows from ggml's own
# perf cases, 1 round); BENCHVSGGML_FLAGS to change it (-prompt-big 0 drops
# the n=512 rows, -rounds 2, -cases 'rope|cpy' to narrow).
.PHONY: bench-vs-ggml test-simd-levels
bench-vs-ggml:
	$(GO) run ./internal/cmd/benchvsggml $(BENCHVSGGML_FLAGS)
# make test-simd-levels (part of make test): the kernel and CPU backend
# tests under each SIMD level (GOGML_CPU caps the level; see package vec;
# a level the CPU lacks runs as the best it has).
test-simd-levels:
	@set -e; for l in generic avx2 avx512; do echo "== GOGML_CPU=$$l"; \
		GOGML_CPU=$$l $(GO) test -count=1 ./internal/kernels/... ./backends/cpu/...; done
# --- end bench-vs-ggml ---

# --- asm ---
# make asm: regenerate package vec's generated assembly from its Go source
# (asmgen, github.com/mmcloughlin/avo), then check that it is current.
# make test checks it too: asmgen's TestGeneratedCurrent (in test-go).
# make asm-identity: the generated kernels assemble to the machine code of
# the hand-written files they replaced (as of 8acf8c5), function by function;
# the q8_0 four-row AVX-512 dot differs on purpose since then (it prefetches
# a second line of the next rows: RATIONALE, the q8_0 prefetch entry).
.PHONY: asm asm-identity
asm:
	cd internal/kernels/cpukernels/vec && $(GO) generate . && $(GO) run ./asmgen -check
asm-identity:
	scripts/asm-identity.sh 8acf8c5 vec_amd64.s qdot_amd64.s qdot512_amd64.s q8k_amd64.s \
		dequant_amd64.s qdot_k512_amd64.s qgemm512_amd64.s
# --- end asm ---

# --- bench-planner-vs-ggml ---
# make bench-planner-vs-ggml: gogml's graph allocator (gallocr) and
# ggml 0.27.0's ggml_gallocr side by side on every graph of
# ../shared/conformance (plus a synthesized 96-layer, ~3,000-node llama
# graph): fresh allocator reserve + alloc (gogml also numbering a new
# graph) and warm alloc, interleaved rounds, each repetition timed alone;
# also checks that both place every tensor alike. The C side is built with
# the system gcc against the peer sysroot. Writes docs/planner-bench.md
# (~1-2 min); BENCHPLANNER_FLAGS to change it (-rounds, -graphs REGEXP).
.PHONY: bench-planner-vs-ggml
BENCHPLANNER_FLAGS ?=
bench-planner-vs-ggml: ggml-peer
	$(GO) run ./internal/cmd/benchplanner $(BENCHPLANNER_FLAGS)
# --- end bench-planner-vs-ggml ---
