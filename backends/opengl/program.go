//go:build opengl

package opengl

import (
	"fmt"
	"strings"

	"github.com/go-gl/gl/v4.3-core/gl"
)

// program is a linked compute program and where its parameters go.
type program struct {
	id     uint32
	params int32 // location of the uniform uint array P
}

// compile builds a compute program from GLSL source. It runs on the GL
// thread.
func compile(name, src string) (*program, error) {
	sh := gl.CreateShader(gl.COMPUTE_SHADER)
	if sh == 0 {
		return nil, fmt.Errorf("%w: glCreateShader(GL_COMPUTE_SHADER) failed", ErrGL)
	}
	defer gl.DeleteShader(sh)
	csrc, free := gl.Strs(src + "\x00")
	gl.ShaderSource(sh, 1, csrc, nil)
	free()
	gl.CompileShader(sh)
	var ok int32
	gl.GetShaderiv(sh, gl.COMPILE_STATUS, &ok)
	if ok == gl.FALSE {
		return nil, fmt.Errorf("%w: compiling kernel %s: %s", ErrGL, name, shaderLog(sh, false))
	}
	id := gl.CreateProgram()
	gl.AttachShader(id, sh)
	gl.LinkProgram(id)
	gl.GetProgramiv(id, gl.LINK_STATUS, &ok)
	if ok == gl.FALSE {
		msg := shaderLog(id, true)
		gl.DeleteProgram(id)
		return nil, fmt.Errorf("%w: linking kernel %s: %s", ErrGL, name, msg)
	}
	return &program{id: id, params: gl.GetUniformLocation(id, gl.Str("P\x00"))}, nil
}

func shaderLog(id uint32, isProgram bool) string {
	var n int32
	if isProgram {
		gl.GetProgramiv(id, gl.INFO_LOG_LENGTH, &n)
	} else {
		gl.GetShaderiv(id, gl.INFO_LOG_LENGTH, &n)
	}
	if n <= 1 {
		return "(no log)"
	}
	buf := make([]byte, n)
	if isProgram {
		gl.GetProgramInfoLog(id, n, nil, &buf[0])
	} else {
		gl.GetShaderInfoLog(id, n, nil, &buf[0])
	}
	return strings.TrimRight(string(buf), "\x00\n")
}
