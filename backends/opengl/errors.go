package opengl

import "errors"

// Sentinel errors of the OpenGL backend.
var (
	// ErrNotCompiled: the binary was built without the "opengl" build tag.
	ErrNotCompiled = errors.New("opengl backend not compiled in (build with -tags opengl,egl)")
	// ErrNoDevice: no EGL display, driver or OpenGL 4.3+ core context.
	ErrNoDevice = errors.New("no usable OpenGL device")
	// ErrWrongThread: a GL call attempted outside the device's GL thread.
	ErrWrongThread = errors.New("GL call outside the device's GL thread")
	// ErrClosed: use of a backend after Close.
	ErrClosed = errors.New("opengl backend closed")
	// ErrGL: the driver reported an error (glGetError, compile or link log).
	ErrGL = errors.New("OpenGL error")
)

// RequireEnv is the environment variable that, set to 1, makes tests fail
// instead of skip when no OpenGL device can be opened.
const RequireEnv = "GOGML_REQUIRE_GL"
