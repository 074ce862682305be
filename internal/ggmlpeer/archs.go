package ggmlpeer

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// ArchRow is one row of test-llama-archs' table: a model architecture
// with random weights, built in memory, run on one device and compared
// with the CPU.
type ArchRow struct {
	// Arch, Device and Config are the row's first cells (Device is the
	// device description: an RPC device's is its endpoint).
	Arch, Device, Config string
	// Columns are the header's names of the status cells ("NMSE vs.
	// CPU", "Roundtrip", ...); Status holds each cell's verdict (OK,
	// FAIL or SKIP) and Detail the rest of the cell. Both are empty when
	// the program died inside the row.
	Columns, Status, Detail []string
}

// OK reports whether the row finished with no FAIL and a passing
// comparison with the CPU.
func (r ArchRow) OK() bool {
	if len(r.Status) == 0 || r.Status[0] != "OK" {
		return false
	}
	for _, s := range r.Status {
		if s == "FAIL" {
			return false
		}
	}
	return true
}

// ParseLlamaArchs reads test-llama-archs' stdout into its rows.
func ParseLlamaArchs(r io.Reader) ([]ArchRow, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	var header []string
	var rows []ArchRow
	for sc.Scan() {
		line := strings.TrimSpace(ansiRE.ReplaceAllString(sc.Text(), ""))
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case len(cells) >= 3 && cells[0] == "Model arch.":
			header = cells
			continue
		case len(cells) > 0 && strings.Trim(cells[0], "-") == "":
			continue
		case len(cells) < 3:
			continue
		}
		row := ArchRow{Arch: cells[0], Device: cells[1], Config: cells[2]}
		for i, c := range cells[3:] {
			if c == "" {
				continue
			}
			verdict, detail, _ := strings.Cut(c, " ")
			row.Status = append(row.Status, verdict)
			row.Detail = append(row.Detail, strings.TrimSpace(detail))
			name := ""
			if 3+i < len(header) {
				name = header[3+i]
			}
			row.Columns = append(row.Columns, name)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return rows, fmt.Errorf("ggmlpeer: reading test-llama-archs output: %w", err)
	}
	return rows, nil
}

// LlamaArchsRun is one test-llama-archs run.
type LlamaArchsRun struct {
	// Rows are every row printed (all devices).
	Rows []ArchRow
	// Stdout and Stderr are the program's output; Err its exit error.
	Stdout, Stderr []byte
	Err            error
}

// Device returns the rows of the device whose description is desc (an
// RPC device's description is its endpoint).
func (r *LlamaArchsRun) Device(desc string) []ArchRow {
	var out []ArchRow
	for _, row := range r.Rows {
		if row.Device == desc {
			out = append(out, row)
		}
	}
	return out
}

// LlamaArchs runs "test-llama-archs -a ^arch$ -s seed" with the RPC
// server at endpoint registered: every device (ggml's CPU, the RPC device,
// and llama.cpp's "Meta" split of the non-CPU devices) gets a row per
// config. The name is anchored: -a takes a regular expression, and a bare
// "qwen3" would also run qwen3moe, qwen3vl, ...
func (p *Peer) LlamaArchs(ctx context.Context, endpoint, arch string, seed int) (*LlamaArchsRun, error) {
	return p.llamaArchs(ctx, endpoint, nil, arch, seed)
}

// LlamaArchsPlaced is LlamaArchs against srv, and when srv answers the
// op-support query (Server.SupportsOpQuery), llama.cpp's scheduler asks
// it op by op (GGML_PEER_SUPPORTS_OP=1) and places the ops srv declines
// on ggml's CPU, as it does for a local backend that lacks an op: the RPC
// row then judges srv's ops inside a whole model.
func (p *Peer) LlamaArchsPlaced(ctx context.Context, srv *Server, arch string, seed int) (*LlamaArchsRun, error) {
	var env []string
	if srv.SupportsOpQuery {
		env = []string{"GGML_PEER_SUPPORTS_OP=1"}
	}
	return p.llamaArchs(ctx, srv.Endpoint, env, arch, seed)
}

func (p *Peer) llamaArchs(ctx context.Context, endpoint string, env []string, arch string, seed int) (*LlamaArchsRun, error) {
	stdout, stderr, exitErr, err := p.runCaptured(ctx, endpoint, env, "test-llama-archs", "-a", "^"+regexp.QuoteMeta(arch)+"$", "-s", fmt.Sprint(seed))
	run := &LlamaArchsRun{Stdout: stdout, Stderr: stderr, Err: exitErr}
	if err != nil {
		return run, err
	}
	run.Rows, err = ParseLlamaArchs(bytes.NewReader(run.Stdout))
	return run, err
}
