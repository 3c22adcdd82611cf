package updater

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func TestDownload(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 1000)
	tests := []struct {
		name     string
		length   bool // send Content-Length
		status   int
		max      int64
		percents []int
		err      error
	}{
		{name: "with length", length: true, max: 1000, percents: []int{0, 100}}, // tenths between, as the reads fall
		{name: "without length", max: 1000, percents: []int{0, 100}},
		{name: "length over the bound", length: true, max: 999, err: errTooLarge},
		{name: "body over the bound", max: 999, percents: []int{0}, err: errTooLarge},
		{name: "not found", status: http.StatusNotFound, max: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.status != 0 {
					w.WriteHeader(tt.status)
					return
				}
				if tt.length {
					w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				}
				for i := 0; i < len(body); i += 100 { // chunks, so that progress has steps to see
					_, _ = w.Write(body[i : i+100])
					w.(http.Flusher).Flush()
				}
			}))
			defer srv.Close()
			dst := filepath.Join(t.TempDir(), "a.partial")
			var percents []int
			err := download(context.Background(), srv.Client(), srv.URL+"/a.tar.gz", dst, tt.max, func(p int) { percents = append(percents, p) })
			switch {
			case tt.err != nil && !errors.Is(err, tt.err):
				t.Fatalf("err %v, want %v", err, tt.err)
			case tt.status != 0 && err == nil:
				t.Fatal("a 404 downloaded")
			case tt.err == nil && tt.status == 0 && err != nil:
				t.Fatal(err)
			}
			if !samePercents(percents, tt.percents, tt.length) {
				t.Errorf("percents %v, want %v", percents, tt.percents)
			}
			if err == nil {
				if b, _ := os.ReadFile(dst); !bytes.Equal(b, body) {
					t.Errorf("downloaded %d bytes", len(b))
				}
			}
		})
	}
}

// samePercents: the same first and last, ascending; with a length, the
// tenths between depend on how the reads fall.
func samePercents(got, want []int, between bool) bool {
	if len(got) == 0 || len(want) == 0 || !between {
		return slices.Equal(got, want)
	}
	return got[0] == want[0] && got[len(got)-1] == want[len(want)-1] && slices.IsSorted(got)
}

// Progress is told each new tenth once, whatever the sizes of the writes.
func TestProgressWriter(t *testing.T) {
	tests := []struct {
		total  int64
		writes []int
		want   []int
	}{
		{total: 1000, writes: []int{100, 100, 100, 100, 100, 100, 100, 100, 100, 100}, want: []int{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}},
		{total: 1000, writes: []int{99, 1, 350, 549, 1}, want: []int{10, 40, 90, 100}}, // 99 → 9 %: nothing yet
		{total: 1000, writes: []int{1000}, want: []int{100}},
		{total: -1, writes: []int{500, 500}},                    // unknown length: the caller reports the end
		{total: 10, writes: []int{5, 10}, want: []int{50, 100}}, // more than announced stays at 100
	}
	for _, tt := range tests {
		var got []int
		w := &progressWriter{w: io.Discard, total: tt.total, report: func(p int) { got = append(got, p) }}
		for _, n := range tt.writes {
			if _, err := w.Write(make([]byte, n)); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("total %d, writes %v: %v, want %v", tt.total, tt.writes, got, tt.want)
		}
	}
}
