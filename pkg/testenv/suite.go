package testenv

import "testing"

// Case is one named test of a conformance suite (pkg/*/…test): Run gets a
// fresh instance of the component under test.
type Case[T any] struct {
	Name string
	Run  func(t *testing.T, c T)
}

// RunCases runs each case as a subtest named Case.Name, with an instance
// fresh makes for that subtest (fresh registers its own cleanup).
func RunCases[T any](t *testing.T, fresh func(t *testing.T) T, cases []Case[T]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, fresh(t)) })
	}
}
