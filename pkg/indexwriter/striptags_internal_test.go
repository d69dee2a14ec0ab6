package indexwriter

import "testing"

func TestStripTags(t *testing.T) {
	if got := stripTags(`<div xmlns="x"><p>Fish &amp; chips</p><p>now</p></div>`); got != "Fish & chips now" {
		t.Fatalf("stripTags = %q", got)
	}
}
