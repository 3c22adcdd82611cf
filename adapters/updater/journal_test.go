package updater

import (
	"os"
	"path/filepath"
	"testing"
)

func TestJournal_RoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "update.json")
	if j, err := loadJournal(path); err != nil || j.Attempt != nil || j.Offer != nil {
		t.Fatalf("missing journal: %+v, %v", j, err)
	}
	o := Offer{Package: "collector", Version: "0.150.0", URL: "https://m/otelcol/a.tar.gz", ContentHash: []byte{1, 2}, Signature: []byte("sig"), AllPackagesHash: []byte{3}}
	a := newAttempt(o, "0.149.0", t0)
	a.begin(StepOffered, t0)
	a.finish(StepOffered, t0.Add(1), nil)
	a.begin(StepDownloading, t0.Add(1))
	want := Journal{Attempt: a, Offer: &o, Previous: "0.148.0"}
	if err := saveJournal(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := loadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Previous != "0.148.0" || !got.Offer.Same(o) || string(got.Attempt.Offer.Signature) != "sig" ||
		got.Attempt.Running() != StepDownloading || !got.Attempt.Steps[StepOffered].StatusTime.Equal(t0.Add(1)) {
		t.Errorf("journal %+v", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files, want the journal only (no temporary file left)", len(entries))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if err := os.WriteFile(path, []byte("{half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadJournal(path); err == nil {
		t.Error("a broken journal read")
	}
}
