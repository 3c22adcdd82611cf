package updater

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"strings"

	"aead.dev/minisign"
)

// Why minisign: the host verifies offline with one public key per
// deployment, kept in its own configuration, and the operator signs the
// archives of their mirror once (minisign -Sm). Sigstore bundles would need
// a trust root and transparency logs reachable from every host.

// ParsePublicKey reads the minisign public key of the configuration: the
// one-line base64 key, the text of a .pub file, or the path of one.
func ParsePublicKey(s string) (minisign.PublicKey, error) {
	var key minisign.PublicKey
	s = strings.TrimSpace(s)
	if s == "" {
		return key, fmt.Errorf("no minisign public key")
	}
	if key.UnmarshalText([]byte(s)) == nil {
		return key, nil
	}
	key, err := minisign.PublicKeyFromFile(s)
	if err != nil {
		return key, fmt.Errorf("minisign public key: neither a key nor a readable key file: %w", err)
	}
	return key, nil
}

// verify is the verifying step: the archive's SHA-256 is the offer's
// content hash, and the offer's minisign signature of it verifies with the
// host's key. An offer without a hash or a signature fails: a missing check
// is never skipped.
func verify(path string, contentHash, signature []byte, key minisign.PublicKey, max int64) error {
	if len(contentHash) == 0 {
		return fmt.Errorf("%w: the offer carries no content hash", ErrNotVerified)
	}
	if len(contentHash) != sha256.Size {
		return fmt.Errorf("%w: the content hash has %d bytes, a SHA-256 has %d", ErrNotVerified, len(contentHash), sha256.Size)
	}
	if len(signature) == 0 {
		return fmt.Errorf("%w: the offer carries no signature", ErrNotVerified)
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return err
	}
	if !bytes.Equal(sum, contentHash) {
		return fmt.Errorf("%w: SHA-256 of the download is %x, the offer says %x", ErrNotVerified, sum, contentHash)
	}
	return verifySignature(path, signature, key, max)
}

func fileSHA256(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	return h.Sum(nil), nil
}

// verifySignature checks the minisign signature of the file. The minisign
// tool signs a digest of the file (prehashed, its default), which is
// verified as the file streams by; a legacy signature of the whole file
// (minisign -l) needs the file in memory, which max bounds.
func verifySignature(path string, signature []byte, key minisign.PublicKey, max int64) error {
	var sig minisign.Signature
	if err := sig.UnmarshalText(signature); err != nil {
		return fmt.Errorf("%w: the signature is not a minisign signature: %v", ErrNotVerified, err)
	}
	if sig.KeyID != key.ID() {
		return fmt.Errorf("%w: signed with key %X, the host trusts key %X", ErrNotVerified, sig.KeyID, key.ID())
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer f.Close()
	var ok bool
	if sig.Algorithm == minisign.HashEdDSA {
		r := minisign.NewReader(f)
		if _, err := io.Copy(io.Discard, r); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		ok = r.Verify(key, signature)
	} else {
		message, err := io.ReadAll(io.LimitReader(f, max+1))
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		ok = int64(len(message)) <= max && minisign.Verify(key, message, signature)
	}
	if !ok {
		return fmt.Errorf("%w: the minisign signature does not verify with key %X", ErrNotVerified, key.ID())
	}
	return nil
}
