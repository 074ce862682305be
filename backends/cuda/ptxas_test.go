package cuda

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	kcuda "github.com/gogml/gogml/internal/kernels/cuda"
)

// TestPTXAssembles assembles the embedded PTX with ptxas (from the CUDA
// toolkit; skipped without it) for Volta and Hopper, as the
// driver's JIT does at load time, and checks each kernel's registers and
// shared memory against the largest block the backend launches it with.
func TestPTXAssembles(t *testing.T) {
	ptxas, err := exec.LookPath("ptxas")
	if err != nil {
		t.Skip("no ptxas (CUDA toolkit) on PATH")
	}
	// Largest block size per kernel: the reductions use up to 1024.
	maxBlock := map[string]int{}
	for _, k := range allKernels {
		maxBlock[k.name] = blockThreads
	}
	for _, k := range []*kernel{&kSumRows, &kSum, &kNorm, &kRmsNormBack, &kSoftMax, &kSoftMaxBack} {
		maxBlock[k.name] = 1024
	}
	entryRe := regexp.MustCompile(`Compiling entry function '(\w+)'`)
	usedRe := regexp.MustCompile(`Used (\d+) registers`)
	smemRe := regexp.MustCompile(`(\d+) bytes smem`)
	files, _ := filepath.Glob("../../internal/kernels/cuda/*.ptx")
	if len(files) == 0 {
		ents, _ := kcuda.PTX.ReadDir(".")
		for _, e := range ents {
			b, _ := kcuda.PTX.ReadFile(e.Name())
			p := filepath.Join(t.TempDir(), e.Name())
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, p)
		}
	}
	for _, arch := range []string{"sm_70", "sm_90"} {
		for _, f := range files {
			t.Run(arch+"/"+filepath.Base(f), func(t *testing.T) {
				out, err := exec.Command(ptxas, "-arch="+arch, "-v", "-o", os.DevNull, f).CombinedOutput()
				if err != nil {
					if arch == "sm_90" && regexp.MustCompile(`(?i)not (defined|supported)|unknown`).Match(out) {
						t.Skipf("this ptxas does not know %s", arch)
					}
					t.Fatalf("ptxas: %v\n%s", err, out)
				}
				type usage struct{ regs, smem int }
				found := map[string]usage{}
				cur := ""
				for _, line := range strings.Split(string(out), "\n") {
					if m := entryRe.FindStringSubmatch(line); m != nil {
						cur = m[1]
					}
					if m := usedRe.FindStringSubmatch(line); m != nil && cur != "" {
						u := usage{}
						u.regs, _ = strconv.Atoi(m[1])
						if sm := smemRe.FindStringSubmatch(line); sm != nil {
							u.smem, _ = strconv.Atoi(sm[1])
						}
						found[cur] = u
					}
				}
				if len(found) == 0 {
					t.Fatalf("no register report in:\n%s", out)
				}
				for name, u := range found {
					block, ok := maxBlock[name]
					if !ok {
						t.Errorf("%s: no descriptor", name)
						continue
					}
					// 64Ki registers and 48 KiB of static shared memory
					// per block on every architecture here.
					if u.regs*block > 65536 {
						t.Errorf("%s: %d registers x %d threads exceed the register file", name, u.regs, block)
					}
					if u.smem+1024*4 > 48<<10 {
						t.Errorf("%s: %d bytes of shared memory", name, u.smem)
					}
					t.Logf("%s: %d registers, %d bytes shared", name, u.regs, u.smem)
				}
			})
		}
	}
}
