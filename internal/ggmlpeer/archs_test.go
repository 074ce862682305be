package ggmlpeer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseLlamaArchs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "llama-archs.out"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   string
		want []string // "arch/device/config/ok/statuses"
	}{
		{name: "0.7.0 table", in: string(b), want: []string{
			"llama/AMD EPYC/Dense/true/OK,OK,OK",
			"llama/127.0.0.1:33533/Dense/false/FAIL,FAIL,OK",
			"llama/Meta/Dense/false/FAIL,SKIP,OK",
			"llama/AMD EPYC/MoE/true/OK,OK,OK",
			"llama/127.0.0.1:33533/MoE/false/FAIL,FAIL,OK",
			"llama/Meta/MoE/false/FAIL,SKIP,OK",
		}},
		{name: "died inside a row", in: "|Model arch.|Device|Config|NMSE vs. CPU|Roundtrip|\n|--|--|--|--|--|\n|llama|AMD EPYC|Dense|", want: []string{
			"llama/AMD EPYC/Dense/false/",
		}},
		{name: "no table", in: "main: using seed 1\n", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := ParseLlamaArchs(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, strings.Join([]string{r.Arch, r.Device, r.Config, map[bool]string{true: "true", false: "false"}[r.OK()], strings.Join(r.Status, ",")}, "/"))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	rows, _ := ParseLlamaArchs(strings.NewReader(string(b)))
	if c := rows[0].Columns; len(c) != 3 || c[0] != "NMSE vs. CPU" || c[2] != "Mixed batch" {
		t.Errorf("columns %q", c)
	}
}

// FuzzParseLlamaArchs checks the table parser never panics.
func FuzzParseLlamaArchs(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "llama-archs.out"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("|a|b|c|OK (1)|\n|"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, _ := ParseLlamaArchs(strings.NewReader(string(b)))
		for _, r := range rows {
			if len(r.Status) != len(r.Detail) || len(r.Status) != len(r.Columns) {
				t.Fatalf("ragged row %+v", r)
			}
		}
	})
}
