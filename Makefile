# gogml — make help lists the targets.
GO      ?= go
SHARED  ?= ../shared
PROMPT  ?= 1,2,3,4,5,6,7,8
NTOK    ?= 24

.PHONY: help build vet staticcheck test test-go test-race test-opengl run bench fuzz clean

help:
	@echo "make run          run the main job: plan the example graph, then the small decoder on the CPU backend"
	@echo "make test         build, vet, staticcheck, then every test, again under -race, then OpenGL on Mesa"
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
	@echo "make gl-gpu-check build the OpenGL device check for an EGL GPU machine without Go"
	@echo "make clean        remove build outputs"

build:
	CGO_ENABLED=0 $(GO) build ./...

vet:
	CGO_ENABLED=0 $(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

# Every package's tests (fuzz targets run their seed corpora), again under
# the race detector, then the OpenGL backend on Mesa's llvmpipe.
test: build vet staticcheck test-go test-race test-opengl

# staticcheck is pinned in go.mod (go get -tool honnef.co/go/tools/cmd/staticcheck@v0.8.2).
# The tagged pass needs libEGL's headers (cgo), hence ensure-gl-deps.sh.
staticcheck:
	$(GO) tool staticcheck ./...
ifneq ($(SKIP_GL),1)
	sh scripts/ensure-gl-deps.sh
	$(GO) tool staticcheck -tags $(GL_TAGS) ./...
endif

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
		./gallocr:FuzzPackBlocks ./internal/kernels/cpukernels:FuzzF32ToF16 ./backends/cuda:FuzzParsePTXEntries \
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
# SKIP_GL=1 skips them (say, as a user who cannot install Mesa); without it
# a missing package stops at once with the command that installs it.
test-opengl:
ifeq ($(SKIP_GL),1)
	@echo "test-opengl: skipped (SKIP_GL=1)"
else
	sh scripts/ensure-gl-deps.sh
	GOGML_REQUIRE_GL=$${GOGML_REQUIRE_GL:-1} $(GO) test -count=1 -race -tags $(GL_TAGS) ./backends/opengl/... ./internal/kernels/glsl/... ./model/llama/... ./membench/providers/ ./cmd/gogml/
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
.PHONY: ptx gpu-check
ptx:
	sh internal/kernels/cuda/genptx.sh
gpu-check:
	GO=$(GO) sh scripts/gpu-check/build.sh gpu-check-out
# --- end cuda ---
