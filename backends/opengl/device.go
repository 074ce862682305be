//go:build opengl

package opengl

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-gl/gl/v4.3-core/gl"
	"golang.org/x/sys/unix"
)

// GL constants that go-gl's core package does not name.
const (
	glGPUMemoryInfoTotalAvailableNVX   = 0x9048
	glGPUMemoryInfoCurrentAvailableNVX = 0x9049
	glVBOFreeMemoryATI                 = 0x87FB
)

// glLoad resolves go-gl's function pointers. go-gl keeps them in package
// variables of its own, so this is done once per process; with EGL the
// pointers are context-independent dispatch entries.
var glLoad = sync.OnceValue(func() error { return gl.InitWithProcAddrFunc(procAddr) })

// device is one GL context and the locked OS thread that owns it.
type device struct {
	index int
	egl   *eglContext
	tid   int // OS thread id of the GL thread; written before ready is signalled
	info  Info
	exts  map[string]bool

	work chan func()
	quit chan struct{}
	done chan struct{}
	once sync.Once
	dead atomic.Bool
	// mapMu is held for reading while a caller copies through a buffer's
	// persistent mapping, and for writing by close while it marks the
	// device dead, before the context (and every mapping with it) goes.
	mapMu sync.RWMutex

	// Owned by the GL thread.
	programs map[string]*program
	status   uint32 // buffer of the kernels' status words (0 until needed)
}

// openDevice starts the device's GL thread and opens its context there.
func openDevice(index int) (*device, error) {
	if index < 0 {
		return nil, fmt.Errorf("opengl device %d: %w: negative index", index, ErrNoDevice)
	}
	d := &device{
		index:    index,
		work:     make(chan func()),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
		programs: map[string]*program{},
	}
	ready := make(chan error, 1)
	go d.loop(ready)
	if err := <-ready; err != nil {
		return nil, fmt.Errorf("opengl device %d: %w", index, err)
	}
	return d, nil
}

// loop is the body of the GL thread. It never unlocks its OS thread: when
// it returns, Go ends the thread together with whatever EGL kept on it.
func (d *device) loop(ready chan<- error) {
	goruntime.LockOSThread()
	defer close(d.done)
	e, err := openEGL(d.index)
	if err != nil {
		d.dead.Store(true)
		ready <- err
		return
	}
	d.egl = e
	d.tid = unix.Gettid()
	if err := d.setup(); err != nil {
		_ = e.close()
		d.dead.Store(true)
		ready <- err
		return
	}
	ready <- nil
	for {
		select {
		case f := <-d.work:
			f()
		case <-d.quit:
			d.teardown()
			_ = e.close()
			return
		}
	}
}

// state is ", closed" for a closed device and "" otherwise, for messages.
func (d *device) state() string {
	if d.dead.Load() {
		return ", closed"
	}
	return ""
}

// onThread returns nil only on the GL thread with the context current.
func (d *device) onThread() error {
	if d.egl == nil || unix.Gettid() != d.tid || !d.egl.current() {
		return ErrWrongThread
	}
	return nil
}

// call runs f on the GL thread and waits for it. f may issue many GL
// calls; GL errors left after f are returned wrapping ErrGL, and a panic in
// f is returned as an error. Called on the GL thread itself, it runs f
// directly.
func (d *device) call(f func() error) error {
	if d.dead.Load() {
		return ErrClosed
	}
	if d.tid != 0 && unix.Gettid() == d.tid {
		return d.run(f)
	}
	res := make(chan error, 1)
	select {
	case d.work <- func() { res <- d.run(f) }:
		return <-res
	case <-d.done:
		return ErrClosed
	}
}

func (d *device) run(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("opengl: panic on the GL thread: %v", r)
		}
		if gerr := glErrors(); gerr != nil && err == nil {
			err = gerr
		}
	}()
	return f()
}

// glErrors drains glGetError.
func glErrors() error {
	var codes []string
	for i := 0; i < 16; i++ {
		c := gl.GetError()
		if c == gl.NO_ERROR {
			break
		}
		codes = append(codes, glErrorName(c))
	}
	if len(codes) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrGL, strings.Join(codes, ", "))
}

func glErrorName(c uint32) string {
	switch c {
	case gl.INVALID_ENUM:
		return "GL_INVALID_ENUM"
	case gl.INVALID_VALUE:
		return "GL_INVALID_VALUE"
	case gl.INVALID_OPERATION:
		return "GL_INVALID_OPERATION"
	case gl.OUT_OF_MEMORY:
		return "GL_OUT_OF_MEMORY"
	case gl.INVALID_FRAMEBUFFER_OPERATION:
		return "GL_INVALID_FRAMEBUFFER_OPERATION"
	case gl.STACK_OVERFLOW:
		return "GL_STACK_OVERFLOW"
	case gl.STACK_UNDERFLOW:
		return "GL_STACK_UNDERFLOW"
	}
	return fmt.Sprintf("GL error 0x%x", c)
}

// close stops the GL thread after releasing GL objects. It is safe to call
// more than once.
func (d *device) close() error {
	first := false
	d.once.Do(func() {
		first = true
		d.mapMu.Lock()
		d.dead.Store(true)
		d.mapMu.Unlock()
		close(d.quit)
	})
	<-d.done
	if !first {
		return ErrClosed
	}
	return nil
}

// teardown deletes the programs; buffers are deleted with the context.
func (d *device) teardown() {
	for k, p := range d.programs {
		gl.DeleteProgram(p.id)
		delete(d.programs, k)
	}
	if d.status != 0 {
		gl.DeleteBuffers(1, &d.status)
		d.status = 0
	}
	gl.Finish()
}

// setup loads GL, reads the device's description and limits, and checks
// what the backend needs. It runs on the GL thread.
func (d *device) setup() error {
	if err := glLoad(); err != nil {
		return fmt.Errorf("%w: loading GL entry points: %v", ErrNoDevice, err)
	}
	_ = glErrors()
	in := &d.info
	in.Platform, in.EGLVendor, in.EGLVersion = d.egl.platform, d.egl.vendor, d.egl.version
	in.Vendor = glString(gl.VENDOR)
	in.Renderer = glString(gl.RENDERER)
	in.Version = glString(gl.VERSION)
	in.GLSLVersion = glString(gl.SHADING_LANGUAGE_VERSION)
	var maj, min int32
	gl.GetIntegerv(gl.MAJOR_VERSION, &maj)
	gl.GetIntegerv(gl.MINOR_VERSION, &min)
	in.Major, in.Minor = int(maj), int(min)
	if maj < 4 || (maj == 4 && min < 3) {
		return fmt.Errorf("%w: context is OpenGL %d.%d, need 4.3", ErrNoDevice, maj, min)
	}
	var n int32
	gl.GetIntegerv(gl.NUM_EXTENSIONS, &n)
	d.exts = make(map[string]bool, n)
	for i := int32(0); i < n; i++ {
		name := gl.GoStr(gl.GetStringi(gl.EXTENSIONS, uint32(i)))
		d.exts[name] = true
		in.Extensions = append(in.Extensions, name)
	}
	if !(maj > 4 || min >= 4) && !d.exts["GL_ARB_buffer_storage"] {
		return fmt.Errorf("%w: OpenGL %d.%d without GL_ARB_buffer_storage", ErrNoDevice, maj, min)
	}
	var v64 int64
	gl.GetInteger64v(gl.MAX_SHADER_STORAGE_BLOCK_SIZE, &v64)
	in.MaxSSBOBlockSize = uint64(v64)
	gl.GetInteger64v(gl.SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, &v64)
	in.SSBOOffsetAlignment = uint64(v64)
	gl.GetIntegerv(gl.MAX_SHADER_STORAGE_BUFFER_BINDINGS, &n)
	in.MaxSSBOBindings = int(n)
	gl.GetIntegerv(gl.MAX_COMPUTE_SHADER_STORAGE_BLOCKS, &n)
	in.MaxComputeSSBOs = int(n)
	gl.GetIntegerv(gl.MAX_COMPUTE_WORK_GROUP_INVOCATIONS, &n)
	in.MaxWorkGroupInvocations = int(n)
	gl.GetIntegerv(gl.MAX_COMPUTE_SHARED_MEMORY_SIZE, &n)
	in.MaxSharedMemory = int(n)
	for i := uint32(0); i < 3; i++ {
		gl.GetInteger64i_v(gl.MAX_COMPUTE_WORK_GROUP_COUNT, i, &v64)
		in.MaxWorkGroupCount[i] = uint64(v64)
		gl.GetIntegeri_v(gl.MAX_COMPUTE_WORK_GROUP_SIZE, i, &n)
		in.MaxWorkGroupSize[i] = int(n)
	}
	switch {
	case d.exts["GL_NVX_gpu_memory_info"]:
		var kb int32
		gl.GetIntegerv(glGPUMemoryInfoTotalAvailableNVX, &kb)
		in.TotalMemory = uint64(kb) << 10
		gl.GetIntegerv(glGPUMemoryInfoCurrentAvailableNVX, &kb)
		in.FreeMemory = uint64(kb) << 10
		in.MemoryKnown = true
	case d.exts["GL_ATI_meminfo"]:
		var kb [4]int32
		gl.GetIntegerv(glVBOFreeMemoryATI, &kb[0])
		in.FreeMemory = uint64(kb[0]) << 10
		in.TotalMemory = in.FreeMemory
		in.MemoryKnown = true
	}
	if err := glErrors(); err != nil {
		return fmt.Errorf("querying limits: %w", err)
	}
	if in.MaxSSBOBlockSize == 0 || in.MaxComputeSSBOs < 4 {
		return fmt.Errorf("%w: shader storage limits too small (block %d bytes, %d compute blocks)", ErrNoDevice, in.MaxSSBOBlockSize, in.MaxComputeSSBOs)
	}
	return nil
}

// memory re-reads free memory where the driver reports it.
func (d *device) memory() (free, total uint64) {
	free, total = d.info.FreeMemory, d.info.TotalMemory
	_ = d.call(func() error {
		switch {
		case d.exts["GL_NVX_gpu_memory_info"]:
			var kb int32
			gl.GetIntegerv(glGPUMemoryInfoCurrentAvailableNVX, &kb)
			free = uint64(kb) << 10
		case d.exts["GL_ATI_meminfo"]:
			var kb [4]int32
			gl.GetIntegerv(glVBOFreeMemoryATI, &kb[0])
			free = uint64(kb[0]) << 10
		}
		return nil
	})
	return free, total
}

func glString(name uint32) string {
	p := gl.GetString(name)
	if p == nil {
		return ""
	}
	return gl.GoStr(p)
}

// finish waits, with a fence, until the GPU has executed every command
// issued so far. It runs on the GL thread.
func (d *device) finish() error {
	if err := d.onThread(); err != nil {
		return err
	}
	s := gl.FenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0)
	if s == 0 {
		return fmt.Errorf("%w: glFenceSync failed", ErrGL)
	}
	defer gl.DeleteSync(s)
	for {
		switch r := gl.ClientWaitSync(s, gl.SYNC_FLUSH_COMMANDS_BIT, 1_000_000_000); r {
		case gl.ALREADY_SIGNALED, gl.CONDITION_SATISFIED:
			return nil
		case gl.TIMEOUT_EXPIRED:
			continue
		default:
			return fmt.Errorf("%w: glClientWaitSync returned 0x%x", ErrGL, r)
		}
	}
}
