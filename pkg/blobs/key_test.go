package blobs

import (
	"errors"
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidateKey(t *testing.T) {
	valid := []string{
		"a", "a/b", "files/2024/report.pdf", "a.b", "..a", "a..", "a/.hidden", "é/ü.txt",
		"with space", strings.Repeat("x", MaxKeyLen), "C:", "a:b",
	}
	for _, k := range valid {
		if err := ValidateKey(k); err != nil {
			t.Errorf("ValidateKey(%q) = %v, want nil", k, err)
		}
	}
	invalid := []string{
		"", "/", "/a", "a/", "a//b", ".", "..", "../a", "a/..", "a/../b", "a/./b", "./a",
		`a\b`, `..\a`, "a\x00b", "a\nb", "a\x7fb", "a\u0085b", string([]byte{0xff, 'a'}),
		strings.Repeat("x", MaxKeyLen+1),
	}
	for _, k := range invalid {
		if err := ValidateKey(k); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidateKey(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
}

func TestRangeLen(t *testing.T) {
	for _, tc := range []struct {
		size, off, n, want int64
		err                bool
	}{
		{10, 0, -1, 10, false},
		{10, 2, 3, 3, false},
		{10, 8, 5, 2, false},
		{10, 10, 5, 0, false},
		{10, 11, 1, 0, true},
		{10, -1, 1, 0, true},
		{0, 0, -1, 0, false},
	} {
		got, err := RangeLen(tc.size, tc.off, tc.n)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("RangeLen(%d,%d,%d) = %d, %v", tc.size, tc.off, tc.n, got, err)
		}
	}
}

// FuzzValidateKey checks the property the file system store relies on: an
// accepted key, joined below a root, stays below it and names the same path
// after cleaning; and anything accepted is within the documented rules.
func FuzzValidateKey(f *testing.F) {
	for _, s := range []string{"a", "a/b", "../x", "a/../../b", `a\..\b`, "a\x00", "/etc/passwd", "a//b", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		err := ValidateKey(key)
		if err != nil {
			if !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("error %v does not wrap ErrInvalidKey", err)
			}
			return
		}
		if key == "" || len(key) > MaxKeyLen || !utf8.ValidString(key) {
			t.Fatalf("accepted %q", key)
		}
		if strings.ContainsAny(key, "\\\x00") {
			t.Fatalf("accepted %q with backslash or NUL", key)
		}
		const root = "/root/blobs"
		joined := path.Join(root, key)
		if !strings.HasPrefix(joined, root+"/") {
			t.Fatalf("key %q escapes root: %s", key, joined)
		}
		if joined != root+"/"+key {
			t.Fatalf("key %q is not canonical: joins to %s", key, joined)
		}
	})
}
