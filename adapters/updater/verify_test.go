package updater

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aead.dev/minisign"
)

func TestVerify(t *testing.T) {
	pub, priv, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	archive := []byte("an archive")
	path := filepath.Join(t.TempDir(), "a.partial")
	if err := os.WriteFile(path, archive, 0o600); err != nil {
		t.Fatal(err)
	}
	// The minisign tool signs a digest of the file (its default since 0.11).
	r := minisign.NewReader(strings.NewReader(string(archive)))
	if _, err := r.Read(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	prehashed := r.Sign(priv)
	legacy := minisign.Sign(priv, archive)
	other := minisign.Sign(mustKey(t), archive)
	tests := []struct {
		name      string
		hash, sig []byte
		max       int64
		text      string // in the error; "" for none
	}{
		{name: "prehashed", hash: sha256Of(archive), sig: prehashed, max: 100},
		{name: "legacy", hash: sha256Of(archive), sig: legacy, max: 100},
		{name: "legacy over the bound", hash: sha256Of(archive), sig: legacy, max: 5, text: "does not verify"},
		{name: "wrong hash", hash: sha256Of([]byte("other")), sig: prehashed, max: 100, text: "SHA-256 of the download"},
		{name: "short hash", hash: []byte{1, 2, 3}, sig: prehashed, max: 100, text: "3 bytes"},
		{name: "no hash", sig: prehashed, max: 100, text: "no content hash"},
		{name: "no signature", hash: sha256Of(archive), max: 100, text: "no signature"},
		{name: "not a signature", hash: sha256Of(archive), sig: []byte("hello"), max: 100, text: "not a minisign signature"},
		{name: "another key", hash: sha256Of(archive), sig: other, max: 100, text: "signed with key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := verify(path, tt.hash, tt.sig, pub, tt.max)
			if tt.text == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrNotVerified) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err %v, want %q", err, tt.text)
			}
		})
	}
}

func mustKey(t *testing.T) minisign.PrivateKey {
	t.Helper()
	_, priv, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return priv
}

// The key comes as the one line of base64, as a .pub file's text, or as
// the path of a .pub file.
func TestParsePublicKey(t *testing.T) {
	pub, _, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := pub.MarshalText()
	file := filepath.Join(t.TempDir(), "minisign.pub")
	if err := os.WriteFile(file, text, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{pub.String(), " " + pub.String() + "\n", string(text), file} {
		got, err := ParsePublicKey(in)
		if err != nil || !got.Equal(pub) {
			t.Errorf("ParsePublicKey(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "RWQ-not-a-key", filepath.Join(t.TempDir(), "missing.pub")} {
		if _, err := ParsePublicKey(in); err == nil {
			t.Errorf("ParsePublicKey(%q) took it", in)
		}
	}
}
