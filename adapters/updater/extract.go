package updater

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// binaryFactor bounds the extracted executable by the archive's bound: a
// gzip of a Go binary is about a third of it, and a decompression bomb must
// not fill the disk. Example: 512 MiB of archive → at most 2 GiB.
const binaryFactor = 4

var errArchive = errors.New("archive refused")

// install puts the archive's executable into versions/<version>/ whole:
// extracted into versions/<version>.partial, then renamed into place, so
// that versions/<version> is never half there. The bytes read must hash to
// contentHash, the hash verified: what is installed is what was verified,
// even if the file changed in between.
func (l Layout) install(archive, version string, contentHash []byte, maxArchive int64) error {
	partial := l.dir(version) + partialSuffix
	if err := os.RemoveAll(partial); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if err := os.MkdirAll(partial, 0o755); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if err := l.extractVerified(archive, partial, contentHash, maxArchive); err != nil {
		_ = os.RemoveAll(partial)
		return err
	}
	// A directory of the version that is not running (an earlier install
	// of it, the previous version on a one-step return) is replaced.
	if err := os.RemoveAll(l.dir(version)); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if err := os.Rename(partial, l.dir(version)); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	return syncDir(l.versionsDir())
}

func (l Layout) extractVerified(archive, dst string, contentHash []byte, maxArchive int64) error {
	f, err := os.Open(archive)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	r := io.TeeReader(f, h)
	if err := extractBinary(r, l.Binary, dst, maxArchive*binaryFactor); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, r); err != nil { // the rest counts for the hash
		return fmt.Errorf("install: %w", err)
	}
	if !bytes.Equal(h.Sum(nil), contentHash) {
		return fmt.Errorf("%w: the archive changed since it was verified", ErrNotVerified)
	}
	return nil
}

// extractBinary writes the one entry named binary at the top of a .tar.gz
// into dir, mode 0755. Other files are ignored; a name that climbs out
// (absolute, ..), a link of any kind, a second entry of the binary's name or
// none at all refuse the archive.
func extractBinary(r io.Reader, binary, dir string, max int64) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("%w: not a gzip file: %v", errArchive, err)
	}
	tr := tar.NewReader(gz)
	found := false
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %v", errArchive, err)
		}
		name, err := entryName(hdr)
		if err != nil {
			return err
		}
		if name != binary {
			continue
		}
		if found || hdr.Typeflag != tar.TypeReg {
			return fmt.Errorf("%w: %s is not one regular file", errArchive, binary)
		}
		found = true
		if err := writeExecutable(filepath.Join(dir, binary), tr, max); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("%w: no %s at the top of the archive", errArchive, binary)
	}
	return nil
}

// entryName is the entry's name without a leading "./", refused when it
// leaves the archive's root or is a link.
func entryName(hdr *tar.Header) (string, error) {
	name := strings.TrimPrefix(hdr.Name, "./")
	clean := path.Clean(name)
	if path.IsAbs(name) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(name, `\`) {
		return "", fmt.Errorf("%w: entry %q leaves the archive", errArchive, hdr.Name)
	}
	if hdr.Typeflag == tar.TypeSymlink || hdr.Typeflag == tar.TypeLink {
		return "", fmt.Errorf("%w: entry %q is a link", errArchive, hdr.Name)
	}
	return clean, nil
}

func writeExecutable(dst string, r io.Reader, max int64) (err error) {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("install: %w", cerr)
		}
	}()
	n, err := io.Copy(f, io.LimitReader(r, max+1))
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if n > max {
		return fmt.Errorf("%w: the executable is larger than %d bytes", errArchive, max)
	}
	if err := f.Chmod(0o755); err != nil { // the umask may have taken bits away
		return fmt.Errorf("install: %w", err)
	}
	return f.Sync()
}
