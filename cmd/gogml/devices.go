package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gogml/gogml/device"
	"github.com/gogml/gogml/gallocr"
	"github.com/gogml/gogml/model/llama"
	"github.com/gogml/gogml/runtime"
)

// parseSplit reads "3,1" into shares.
func parseSplit(s string) ([]float64, error) {
	if s == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("-split %q: %q is not a number", s, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// runDevices is gogml run -devices: the decoder spread over several
// devices by the scheduler, with where each layer went and the bytes that
// crossed between devices per token.
func runDevices(o *runOptions, prompt []int32, strat gallocr.Strategy, maxBuf uint64, stdout, stderr io.Writer) error {
	split, err := parseSplit(o.split)
	if err != nil {
		return err
	}
	reg := device.Default(device.Options{Threads: o.threads, MaxBufferSize: maxBuf})
	devs, err := reg.OpenList(o.devices)
	if err != nil {
		return fmt.Errorf("-devices: %w", err)
	}
	defer device.CloseAll(devs)
	if split != nil && len(split) != len(devs) {
		return fmt.Errorf("-split has %d shares for %d devices", len(split), len(devs))
	}
	cfg := o.cfg
	fmt.Fprintf(stdout, "model: llama-style decoder, vocab %d, dim %d, heads %d (head size %d), layers %d, ffn %d, ctx %d, weights %s, seed %d\n",
		cfg.Vocab, cfg.Dim, cfg.Heads, cfg.HeadDim(), cfg.Layers, cfg.FFN, cfg.Ctx, cfg.WeightType, cfg.Seed)
	smp, err := o.samp.sampler(stdout)
	if err != nil {
		return err
	}
	for i, d := range devs {
		free, total := d.Memory()
		fmt.Fprintf(stdout, "device %d: %s (%s), %s free of %s\n", i, d.Name(), d.Description(), runtime.FormatBytes(free), runtime.FormatBytes(total))
	}
	t0 := time.Now()
	opts := llama.Options{Backend: devs[0].Backend(), Strategy: strat}
	if len(devs) > 1 {
		opts = llama.Options{Backends: device.Backends(devs), Split: split, Strategy: strat}
	}
	var m *llama.Model
	if o.model != "" {
		m, err = llama.LoadGGUF(o.model, llama.LoadOptions{Options: opts, Ctx: cfg.Ctx})
	} else {
		m, err = llama.New(llama.GenerateWeights(cfg), opts)
	}
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Reserve(min(len(prompt), cfg.Ctx)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "load: %s (weights placed, compute buffers reserved)\n", ms(time.Since(t0)))
	layers := m.LayerBackends()
	for i := 0; i < len(layers); {
		j := i
		for j < len(layers) && layers[j] == layers[i] {
			j++
		}
		fmt.Fprintf(stdout, "layers %d-%d: %s\n", i, j-1, layers[i])
		i = j
	}
	st := m.Stats()
	fmt.Fprintf(stdout, "memory: weights %s in %d buffer(s), kv cache %s, compute %s (lower bound %s)\n",
		runtime.FormatBytes(st.WeightsBytes), st.WeightsBuffers, runtime.FormatBytes(st.KVBytes),
		runtime.FormatBytes(st.ComputeBytes), runtime.FormatBytes(st.ComputeLowerBound))
	for _, c := range m.ComputeByBufferType() {
		over := 0.0
		if c.LowerBound > 0 {
			over = 100 * (float64(c.Bytes)/float64(c.LowerBound) - 1)
		}
		fmt.Fprintf(stdout, "  compute in %s: %s, live-bytes lower bound %s (+%.2f%%)\n", c.BufferType, runtime.FormatBytes(c.Bytes), runtime.FormatBytes(c.LowerBound), over)
	}
	res, err := m.GenerateWith(prompt, o.n, smp, nil)
	if err != nil {
		return err
	}
	ids := make([]string, len(res.Generated))
	for i, t := range res.Generated {
		ids[i] = strconv.Itoa(int(t))
	}
	fmt.Fprintf(stdout, "generated: %s\n", strings.Join(ids, ","))
	printGeneratedText(o, stdout, prompt, res.Generated)
	if names, bytes := m.Splits(); names != nil {
		var parts []string
		var sum uint64
		for i, n := range names {
			parts = append(parts, fmt.Sprintf("%s %s", n, runtime.FormatBytes(bytes[i])))
			sum += bytes[i]
		}
		fmt.Fprintf(stdout, "last token: %d splits, copied in: %s; %s crossed between devices\n", len(names), strings.Join(parts, ", "), runtime.FormatBytes(sum))
	}
	if n := len(res.TokenTimes); n > 0 {
		fmt.Fprintf(stdout, "per token: %.1f tokens/s over %d tokens\n", res.TokensPerSecond(), n)
	}
	fmt.Fprintf(stdout, "logits checksum: %s\n", res.Logits)
	return nil
}
