// Package glsl holds gogml's GLSL compute kernels for the OpenGL backend,
// embedded in the binary. Each kernel is a .comp file that includes
// common.glsl (the binding and parameter layout shared by all kernels);
// Source expands the includes and adds the version line.
package glsl

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.comp *.glsl
var files embed.FS

// Version is the GLSL version line every kernel is compiled with.
const Version = "#version 430 core"

// Names lists the kernels (file names without ".comp"), sorted.
func Names() []string {
	ents, _ := fs.Glob(files, "*.comp")
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e, ".comp"))
	}
	sort.Strings(out)
	return out
}

// Source returns the complete GLSL source of kernel name, with its
// `#include "file"` lines replaced by the embedded files' text and a
// `#define` line for each of defines (e.g. "DENSE" or "N 4") after the
// version line.
func Source(name string, defines ...string) (string, error) {
	body, err := files.ReadFile(name + ".comp")
	if err != nil {
		return "", fmt.Errorf("glsl: no kernel %q", name)
	}
	var sb strings.Builder
	sb.WriteString(Version)
	sb.WriteString("\n")
	for _, d := range defines {
		if strings.ContainsAny(d, "\n\r") || strings.TrimSpace(d) == "" {
			return "", fmt.Errorf("glsl: kernel %s: bad define %q", name, d)
		}
		sb.WriteString("#define " + d + "\n")
	}
	sb.WriteString("#line 1\n")
	if err := expand(&sb, name+".comp", string(body), 0); err != nil {
		return "", err
	}
	return sb.String(), nil
}

func expand(sb *strings.Builder, file, text string, depth int) error {
	if depth > 4 {
		return fmt.Errorf("glsl: %s: includes nested too deeply", file)
	}
	for i, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		if !strings.HasPrefix(trim, "#include") {
			sb.WriteString(line)
			sb.WriteString("\n")
			continue
		}
		arg := strings.TrimSpace(strings.TrimPrefix(trim, "#include"))
		if len(arg) < 2 || arg[0] != '"' || arg[len(arg)-1] != '"' {
			return fmt.Errorf("glsl: %s:%d: bad include %q", file, i+1, trim)
		}
		inc := arg[1 : len(arg)-1]
		b, err := files.ReadFile(inc)
		if err != nil {
			return fmt.Errorf("glsl: %s:%d: no file %q", file, i+1, inc)
		}
		if err := expand(sb, inc, string(b), depth+1); err != nil {
			return err
		}
		// Keep compiler line numbers meaningful in the including file.
		fmt.Fprintf(sb, "#line %d\n", i+2)
	}
	return nil
}
