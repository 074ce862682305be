//go:build opengl

package opengl

/*
#cgo linux pkg-config: egl
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>

// gogml_egl is what the shim hands back: a display with a current context
// on the calling thread, or an error text.
typedef struct {
	EGLDisplay dpy;
	EGLContext ctx;
	int major, minor;
	const char *platform;
	char err[512];
} gogml_egl;

static int gogml_has_ext(const char *list, const char *name) {
	if (list == NULL) return 0;
	size_t n = strlen(name);
	const char *p = list;
	while ((p = strstr(p, name)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
		p += n;
	}
	return 0;
}

static void gogml_errf(gogml_egl *g, const char *what) {
	size_t used = strlen(g->err);
	if (used >= sizeof(g->err) - 2) return;
	snprintf(g->err + used, sizeof(g->err) - used, "%s%s (egl error 0x%x)", used ? "; " : "", what, (unsigned)eglGetError());
}

// gogml_try_context binds the desktop OpenGL API on an initialized display
// and creates a core-profile context of the newest version from 4.6 down to
// 4.3, made current without surfaces.
static int gogml_try_context(gogml_egl *g, EGLDisplay dpy, EGLint egl_major, EGLint egl_minor) {
	const char *exts = eglQueryString(dpy, EGL_EXTENSIONS);
	if (!gogml_has_ext(exts, "EGL_KHR_surfaceless_context")) {
		gogml_errf(g, "display lacks EGL_KHR_surfaceless_context");
		return 0;
	}
	if (!gogml_has_ext(exts, "EGL_KHR_create_context")) {
		if (egl_major < 1 || (egl_major == 1 && egl_minor < 5)) {
			gogml_errf(g, "display lacks EGL_KHR_create_context and EGL 1.5");
			return 0;
		}
	}
	if (!eglBindAPI(EGL_OPENGL_API)) {
		gogml_errf(g, "eglBindAPI(EGL_OPENGL_API)");
		return 0;
	}
	EGLConfig cfg = EGL_NO_CONFIG_KHR;
	if (!gogml_has_ext(exts, "EGL_KHR_no_config_context") && !gogml_has_ext(exts, "EGL_MESA_configless_context")) {
		EGLint want[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE, 0, EGL_NONE};
		EGLint n = 0;
		if (!eglChooseConfig(dpy, want, &cfg, 1, &n) || n < 1) {
			gogml_errf(g, "no EGL config renders desktop OpenGL");
			return 0;
		}
	}
	static const int versions[][2] = {{4, 6}, {4, 5}, {4, 4}, {4, 3}};
	for (int i = 0; i < 4; i++) {
		EGLint attrs[] = {
			EGL_CONTEXT_MAJOR_VERSION, versions[i][0],
			EGL_CONTEXT_MINOR_VERSION, versions[i][1],
			EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
			EGL_NONE,
		};
		EGLContext ctx = eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, attrs);
		if (ctx == EGL_NO_CONTEXT) continue;
		if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
			gogml_errf(g, "eglMakeCurrent without surfaces");
			eglDestroyContext(dpy, ctx);
			return 0;
		}
		g->dpy = dpy;
		g->ctx = ctx;
		g->major = versions[i][0];
		g->minor = versions[i][1];
		return 1;
	}
	gogml_errf(g, "no OpenGL 4.3+ core context");
	return 0;
}

// gogml_egl_open makes a context current on the calling thread: first on
// Mesa's surfaceless platform (device index 0 only), then on the index-th
// EGL device (EGL_EXT_platform_device, as NVIDIA's driver offers).
static void gogml_egl_open(gogml_egl *g, int index) {
	memset(g, 0, sizeof(*g));
	const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
	if (client == NULL || !gogml_has_ext(client, "EGL_EXT_platform_base")) {
		gogml_errf(g, "libEGL offers no EGL_EXT_platform_base: no EGL vendor driver found "
			"(install libegl-mesa0 and libgl1-mesa-dri for llvmpipe, or a GPU driver with EGL; "
			"check __EGL_VENDOR_LIBRARY_FILENAMES)");
		return;
	}
	PFNEGLGETPLATFORMDISPLAYEXTPROC getDisplay =
		(PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
	if (getDisplay == NULL) {
		gogml_errf(g, "no eglGetPlatformDisplayEXT");
		return;
	}
	if (index == 0 && gogml_has_ext(client, "EGL_MESA_platform_surfaceless")) {
		EGLDisplay dpy = getDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
		EGLint maj, min;
		if (dpy != EGL_NO_DISPLAY && eglInitialize(dpy, &maj, &min)) {
			if (gogml_try_context(g, dpy, maj, min)) {
				g->platform = "surfaceless";
				return;
			}
		} else {
			gogml_errf(g, "surfaceless platform display");
		}
	}
	if (gogml_has_ext(client, "EGL_EXT_platform_device") && gogml_has_ext(client, "EGL_EXT_device_enumeration")) {
		PFNEGLQUERYDEVICESEXTPROC queryDevices =
			(PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
		EGLDeviceEXT devs[16];
		EGLint n = 0;
		if (queryDevices == NULL || !queryDevices(16, devs, &n)) {
			gogml_errf(g, "eglQueryDevicesEXT");
			return;
		}
		if (index >= n) {
			char msg[96];
			snprintf(msg, sizeof msg, "EGL device %d of %d does not exist", index, (int)n);
			gogml_errf(g, msg);
			return;
		}
		EGLDisplay dpy = getDisplay(EGL_PLATFORM_DEVICE_EXT, devs[index], NULL);
		EGLint maj, min;
		if (dpy == EGL_NO_DISPLAY || !eglInitialize(dpy, &maj, &min)) {
			gogml_errf(g, "device platform display");
			return;
		}
		if (gogml_try_context(g, dpy, maj, min)) {
			g->platform = "device";
			return;
		}
		return;
	}
	gogml_errf(g, "EGL offers neither a working surfaceless platform nor EGL_EXT_platform_device");
}

// gogml_egl_close releases the context from the calling thread and destroys
// it. The display stays initialized: EGL displays are shared by the whole
// process, and terminating one would destroy other devices' contexts.
static void gogml_egl_close(EGLDisplay dpy, EGLContext ctx) {
	eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
	eglDestroyContext(dpy, ctx);
	eglReleaseThread();
}

static int gogml_egl_is_current(EGLContext ctx) {
	return eglGetCurrentContext() == ctx;
}

static void *gogml_egl_proc(const char *name) {
	return (void *)eglGetProcAddress(name);
}

static const char *gogml_egl_string(EGLDisplay dpy, EGLint name) {
	const char *s = eglQueryString(dpy, name);
	return s ? s : "";
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// eglContext is a desktop OpenGL core context made current, without
// surfaces, on the OS thread that created it.
type eglContext struct {
	dpy      C.EGLDisplay
	ctx      C.EGLContext
	major    int
	minor    int
	platform string
	vendor   string
	version  string
}

// openEGL creates a context for EGL device index on the calling thread,
// which must stay locked to its goroutine for the context's life.
func openEGL(index int) (*eglContext, error) {
	var g C.gogml_egl
	C.gogml_egl_open(&g, C.int(index))
	if g.ctx == nil {
		msg := C.GoString(&g.err[0])
		if msg == "" {
			msg = "unknown EGL failure"
		}
		return nil, fmt.Errorf("%w: %s", ErrNoDevice, msg)
	}
	return &eglContext{
		dpy:      g.dpy,
		ctx:      g.ctx,
		major:    int(g.major),
		minor:    int(g.minor),
		platform: C.GoString(g.platform),
		vendor:   C.GoString(C.gogml_egl_string(g.dpy, C.EGL_VENDOR)),
		version:  C.GoString(C.gogml_egl_string(g.dpy, C.EGL_VERSION)),
	}, nil
}

// current reports whether this context is current on the calling thread.
func (e *eglContext) current() bool { return C.gogml_egl_is_current(e.ctx) != 0 }

// close destroys the context; it must run on the context's thread.
func (e *eglContext) close() error {
	if e == nil || e.ctx == nil {
		return errors.New("egl: context already closed")
	}
	C.gogml_egl_close(e.dpy, e.ctx)
	e.ctx = nil
	return nil
}

// procAddr resolves a GL entry point through EGL.
func procAddr(name string) unsafe.Pointer {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.gogml_egl_proc(cs)
}
