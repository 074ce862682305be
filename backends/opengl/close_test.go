//go:build opengl

package opengl

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gogml/gogml/runtime"
)

// placed returns an f32 tensor of n elements at offset 0 of a fresh buffer
// of bt.
func placed(t *testing.T, bt runtime.BufferType, n int64) (*runtime.Tensor, runtime.Buffer) {
	t.Helper()
	x := runtime.NewContext().NewTensor1D(runtime.TypeF32, n)
	x.Name = "x"
	buf, err := bt.AllocBuffer(x.NBytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.TensorAlloc(buf, x, 0); err != nil {
		t.Fatal(err)
	}
	return x, buf
}

// TestTransferAfterClose: with mapped uploads the copies used to go
// straight into the destroyed context's persistent mapping (a fault);
// every mode must answer ErrClosed.
func TestTransferAfterClose(t *testing.T) {
	for _, mode := range []UploadMode{UploadMapped, UploadSubData} {
		t.Run(mode.String(), func(t *testing.T) {
			b := open(t, Config{Upload: mode})
			x, _ := placed(t, b.DefaultBufferType(), 16<<20)
			data := make([]byte, x.NBytes())
			if err := runtime.SetTensorData(x, data, 0); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if err := runtime.SetTensorData(x, data, 0); !errors.Is(err, ErrClosed) {
				t.Fatalf("SetTensorData after Close = %v, want ErrClosed", err)
			}
			if err := runtime.GetTensorData(x, data, 0); !errors.Is(err, ErrClosed) {
				t.Fatalf("GetTensorData after Close = %v, want ErrClosed", err)
			}
			if err := x.Buffer.Clear(1); !errors.Is(err, ErrClosed) {
				t.Fatalf("Clear after Close = %v, want ErrClosed", err)
			}
		})
	}
}

// TestTransferConcurrentWithFreeAndClose runs copies through a buffer
// while another goroutine frees it, or closes the backend: each copy
// either completes or returns ErrFreed / ErrClosed; none faults. Run it
// with -race.
func TestTransferConcurrentWithFreeAndClose(t *testing.T) {
	for _, mode := range []UploadMode{UploadMapped, UploadSubData} {
		for _, kill := range []string{"free", "close"} {
			t.Run(mode.String()+"/"+kill, func(t *testing.T) {
				for round := 0; round < 4; round++ {
					b := open(t, Config{Upload: mode})
					x, buf := placed(t, b.DefaultBufferType(), 1<<20)
					var wg sync.WaitGroup
					errs := make(chan error, 8)
					start := make(chan struct{})
					for w := 0; w < 4; w++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							data := make([]byte, x.NBytes())
							<-start
							for i := 0; ; i++ {
								var err error
								if (i+w)%2 == 0 {
									err = runtime.SetTensorData(x, data, 0)
								} else {
									err = runtime.GetTensorData(x, data, 0)
								}
								if err != nil {
									if !errors.Is(err, runtime.ErrFreed) && !errors.Is(err, ErrClosed) {
										errs <- err
									}
									return
								}
							}
						}()
					}
					close(start)
					var err error
					if kill == "free" {
						err = buf.Free()
					} else {
						err = b.Close()
					}
					if err != nil {
						t.Fatal(err)
					}
					wg.Wait()
					close(errs)
					for err := range errs {
						t.Errorf("copy: %v, want ErrFreed or ErrClosed", err)
					}
				}
			})
		}
	}
}

// TestBufferTypeWithMaxSize: the lowered limit holds in AllocBuffer, not
// only in MaxSize (gogml run -max-buffer-size on GL used to ignore it).
func TestBufferTypeWithMaxSize(t *testing.T) {
	b := open(t, Config{})
	bt, err := b.BufferTypeWithMaxSize(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if bt.MaxSize() != 1<<20 {
		t.Fatalf("MaxSize %d, want %d", bt.MaxSize(), 1<<20)
	}
	if _, err := bt.AllocBuffer(1<<20 + 4); !errors.Is(err, runtime.ErrOutOfMemory) {
		t.Fatalf("AllocBuffer above the max = %v, want ErrOutOfMemory", err)
	}
	buf, err := bt.AllocBuffer(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	_ = buf.Free()
	if !b.SupportsBufferType(bt) {
		t.Fatal("the backend does not support its own limited buffer type")
	}
	if _, err := b.BufferTypeWithMaxSize(1); err == nil {
		t.Fatal("max size below the alignment accepted")
	}
}

// TestForeignBufferError: a tensor in a buffer of a second GL backend on
// the same device used to be reported as "in a GL0 buffer, not GL0".
func TestForeignBufferError(t *testing.T) {
	a := open(t, Config{})
	b := open(t, Config{})
	x, _ := placed(t, a.DefaultBufferType(), 16)
	_, err := b.glBuffer(x)
	if err == nil || !strings.Contains(err.Error(), "another OpenGL backend") {
		t.Fatalf("error %v, want one naming another OpenGL backend", err)
	}
}
