package opengl

import "fmt"

// UploadMode selects how host bytes move into and out of GL buffers.
type UploadMode int

const (
	// UploadAuto picks per device: UploadMapped on software rasterizers
	// (llvmpipe, softpipe), where buffers are host memory anyway and a
	// memcpy into a persistent mapping is faster: BenchmarkTransfer (make
	// bench-opengl) on llvmpipe, 2-vCPU VM, measured ~800x at 4 KiB, where
	// glBufferSubData pays the GL thread round trip, and 1.5-2.4x at
	// 4-64 MiB (single runs on a shared VM vary by up to 2x at the large
	// sizes); UploadSubData on GPUs, whose compute buffers should stay in
	// device memory.
	UploadAuto UploadMode = iota
	// UploadSubData uses glBufferSubData / glGetBufferSubData on the GL
	// thread. Buffers can stay in device-local memory on discrete GPUs.
	UploadSubData UploadMode = iota
	// UploadMapped keeps every buffer persistently and coherently mapped
	// and copies with memcpy; buffers live in host-visible memory.
	UploadMapped
)

// String names the mode.
func (m UploadMode) String() string {
	switch m {
	case UploadAuto:
		return "auto"
	case UploadSubData:
		return "subdata"
	case UploadMapped:
		return "mapped"
	}
	return fmt.Sprintf("upload(%d)", int(m))
}

// Config selects the device and options of a Backend.
type Config struct {
	// Device is the EGL device index. Index 0 tries Mesa's surfaceless
	// platform first, then EGL device 0.
	Device int
	// Upload selects how SetTensor/GetTensor move bytes (zero: auto).
	Upload UploadMode
	// MaxBufferSize, when non-zero, lowers the buffer type's MaxSize
	// (4 GiB less a page; to test or force splitting); it is rounded down
	// to the alignment.
	MaxBufferSize uint64
}

// Info describes an opened OpenGL device.
type Info struct {
	Platform    string // EGL platform used: "surfaceless" or "device"
	EGLVendor   string
	EGLVersion  string
	Vendor      string // GL_VENDOR
	Renderer    string // GL_RENDERER
	Version     string // GL_VERSION
	GLSLVersion string // GL_SHADING_LANGUAGE_VERSION
	Major       int    // context version, major
	Minor       int    // context version, minor

	MaxSSBOBlockSize        uint64    // GL_MAX_SHADER_STORAGE_BLOCK_SIZE
	SSBOOffsetAlignment     uint64    // GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT
	MaxSSBOBindings         int       // GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS
	MaxComputeSSBOs         int       // GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS
	MaxWorkGroupInvocations int       // GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS
	MaxWorkGroupCount       [3]uint64 // GL_MAX_COMPUTE_WORK_GROUP_COUNT
	MaxWorkGroupSize        [3]int    // GL_MAX_COMPUTE_WORK_GROUP_SIZE
	MaxSharedMemory         int       // GL_MAX_COMPUTE_SHARED_MEMORY_SIZE

	// TotalMemory and FreeMemory are bytes, where the driver tells
	// (GL_NVX_gpu_memory_info, GL_ATI_meminfo); MemoryKnown says so.
	TotalMemory uint64
	FreeMemory  uint64
	MemoryKnown bool

	// Extensions lists the GL extensions the context reports.
	Extensions []string
}

// String summarizes the device in one line.
func (i Info) String() string {
	return fmt.Sprintf("%s (%s, GL %s, EGL %s %s via %s)", i.Renderer, i.Vendor, i.Version, i.EGLVendor, i.EGLVersion, i.Platform)
}
