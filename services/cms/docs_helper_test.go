package main

import (
	"os"
	"path/filepath"
	"testing"
)

// userDocs is the user documentation these tests hold to the code: the
// README (which has the settings table) and every page of docs/ (where
// the limits, deadlines and operations pages give each default again).
func userDocs(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md pages: %v", err)
	}
	for _, p := range pages {
		page, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, '\n'), page...)
	}
	return b
}
