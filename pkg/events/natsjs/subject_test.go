package natsjs

import "testing"

func TestSubjectMatches(t *testing.T) {
	for _, tc := range []struct {
		filter, subject string
		want            bool
	}{
		{"cms.changes.>", "cms.changes.objects.1", true},
		{"cms.changes.>", "cms.changes.x", true},
		{"cms.changes.>", "cms.changes", false},
		{"cms.changes.>", "cms.changesx.a", false},
		{"cms.*.x", "cms.a.x", true},
		{"cms.*.x", "cms.a.b.x", false},
		{"cms.a", "cms.a", true},
		{"cms.a", "cms.a.b", false},
		{"cms.>", "cms..a", false},
	} {
		if got := subjectMatches(tc.filter, tc.subject); got != tc.want {
			t.Errorf("subjectMatches(%q, %q) = %v, want %v", tc.filter, tc.subject, got, tc.want)
		}
	}
}
