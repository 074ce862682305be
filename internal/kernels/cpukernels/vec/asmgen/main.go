// Command asmgen writes package vec's generated assembly: one Go source per
// kernel family, parameterized by SIMD level, printed as Go assembly by
// github.com/mmcloughlin/avo. Run it through go generate in package vec:
//
//	go run ./asmgen          # (re)write the generated .s files
//	go run ./asmgen -check   # exit 1 if a committed .s differs from its source
//
// Every instruction is written with physical registers, in the order the
// hand-written kernels had them, so that results stay bit for bit those
// of the kernels the generator replaced.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
)

// files maps each generated file of package vec to the function that
// writes its kernels into a fresh avo context.
var files = []struct {
	name string
	gen  func(c *build.Context)
}{
	{"gemm_amd64.s", genGemm},
	{"f16dot_amd64.s", genF16Dot},
	{"f16_amd64.s", genF16Conv},
	{"qdot2_amd64.s", genQDot2},
	{"vec_amd64.s", genVec},
	{"qdot_amd64.s", genQDot},
	{"qdot512_amd64.s", genQDot512},
	{"q4p512_amd64.s", genQ4P512},
	{"q8r512_amd64.s", genQ8R512},
	{"q8k_amd64.s", genQ8K},
	{"dequant_amd64.s", genDequant},
	{"qdot_k512_amd64.s", genQDotK512},
	{"qgemm512_amd64.s", genQGemm512},
	{"f16attn_amd64.s", genF16Attn},
	{"swiglu_amd64.s", genSwiglu},
	{"qkgemm_amd64.s", genQKGemm},
	{"rope_amd64.s", genRope},
	{"sincosf_amd64.s", genSincosf},
}

// errStale is returned by -check when a committed file differs from what
// the generator prints.
var errStale = errors.New("generated assembly is stale (run go generate ./internal/kernels/cpukernels/vec)")

func main() {
	dir := flag.String("dir", ".", "package vec's directory")
	check := flag.Bool("check", false, "compare the files in -dir with the generator's output instead of writing them")
	flag.Parse()
	if err := run(*dir, *check); err != nil {
		fmt.Fprintln(os.Stderr, "asmgen:", err)
		os.Exit(1)
	}
}

func run(dir string, check bool) error {
	var stale []string
	for _, f := range files {
		src, err := generate(f.gen)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		path := filepath.Join(dir, f.name)
		if !check {
			if err := os.WriteFile(path, src, 0o644); err != nil {
				return err
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if !bytes.Equal(old, src) {
			stale = append(stale, path)
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("%w: %v", errStale, stale)
	}
	return nil
}

// generate runs gen in a fresh context and returns the printed assembly.
// The header names the go:generate command, not the output path, so the
// -check run prints the same bytes as the writing run.
func generate(gen func(c *build.Context)) ([]byte, error) {
	c := build.NewContext()
	c.ConstraintExpr("amd64,!purego")
	gen(c)
	f, err := c.Result()
	if err != nil {
		return nil, err
	}
	if err := pass.Compile.Execute(f); err != nil {
		return nil, err
	}
	p := printer.NewGoAsm(printer.Config{Argv: []string{"go", "run", "./asmgen"}, Pkg: "vec"})
	return p.Print(f)
}
