// Package opengl is gogml's OpenGL backend: tensors live in OpenGL
// shader-storage buffer objects and graphs run as GLSL compute shaders, on
// any driver that offers a desktop OpenGL 4.3+ core context through EGL
// (NVIDIA's driver, Mesa's radeonsi/iris, and Mesa's llvmpipe software
// rasterizer, which is what CI uses).
//
// # Building
//
// The backend is compiled only with the build tags "opengl egl":
//
//	go test -tags opengl,egl -race ./backends/opengl/...
//
// "opengl" selects this implementation (without it, New returns an error
// wrapping ErrNotCompiled and the package needs neither cgo nor GL
// libraries). "egl" is go-gl's own tag: it makes go-gl resolve GL entry
// points through eglGetProcAddress and link only libEGL, instead of libGL
// and GLX, which a headless machine has no use for. Building with
// "opengl" alone also works where libGL is installed (go-gl then links it).
// Debian packages: libegl-dev (headers, pkg-config file) to build;
// libegl1 and libgl1-mesa-dri (llvmpipe) or a GPU vendor's EGL driver to run.
// scripts/ensure-gl-deps.sh installs them.
//
// # Context and threads
//
// A small cgo EGL shim opens Mesa's surfaceless platform
// (EGL_PLATFORM_SURFACELESS_MESA) or, failing that, an EGL device
// (EGL_EXT_platform_device, as NVIDIA's driver offers), binds the desktop
// OpenGL API, and creates the newest core-profile context from 4.6 down to
// 4.3, current without any surface. Each Backend owns one goroutine that
// locks its OS thread for life; every GL call is a closure run on it. GL
// helpers check that they run on that thread and return ErrWrongThread
// otherwise, instead of silently doing nothing.
//
// # Memory
//
// The buffer type "GL<n>" allocates immutable-storage SSBOs
// (glBufferStorage). Base is a fixed fake address: only offsets matter.
// Alignment is GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT (at least 16) and
// MaxSize 4 GiB less a page. A buffer larger than
// GL_MAX_SHADER_STORAGE_BLOCK_SIZE (128 MiB on llvmpipe) is bound by ranges
// around each dispatch's tensors, so SupportsOp refuses only nodes with a
// tensor larger than one block.
//
// # Kernels
//
// GLSL 4.30 compute shaders from package internal/kernels/glsl, compiled once per
// device and variant. Claimed (SupportsOp and Compute share one planner):
// DUP/CPY/CONT between f32, f16, bf16, i32 and to/from q4_0/q8_0; ADD,
// SUB, MUL, DIV with broadcast; ADD1, SCALE, SQR, SQRT, LOG, CLAMP,
// DIAG_MASK_INF; UNARY abs, neg, tanh, relu, sigmoid, gelu, silu, exp;
// SUM_ROWS, MEAN, REPEAT, CONCAT, NORM, RMS_NORM; SOFT_MAX with mask,
// scale and ALiBi; ROPE and ROPE_BACK (normal, NeoX, YaRN, frequency
// factors); MUL_MAT and GET_ROWS with f32, f16, bf16, q4_0 and q8_0
// weights; SILU_BACK, RMS_NORM_BACK, SOFT_MAX_BACK. Tensors are addressed
// by byte offset and ggml's nb strides, so views need no copies.
//
// # Tests
//
// Without GL libraries or a usable driver, New returns an error wrapping
// ErrNoDevice and the tests skip, saying why, unless the environment
// variable GOGML_REQUIRE_GL=1 turns that into a failure (CI sets it).
// make test-opengl runs them (with -race); make bench-opengl measures
// transfers, MUL_MAT and element-wise throughput against the CPU backend;
// make gl-gpu-check packages the tests for a GPU machine without Go.
package opengl
