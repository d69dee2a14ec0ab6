package component_test

import (
	"context"
	"testing"

	"github.com/cmsplatform/cms/pkg/component"
)

// BenchmarkGuardDo and BenchmarkGuardOp: what a component call's span
// costs when nothing records it (tracing off or not sampled), the cached
// read path's case: on a 2-core machine 14 ns for Do, 20 ns for Op (before
// Op checked for a recording parent: 760 ns and 6 allocations).
func BenchmarkGuardDo(b *testing.B) {
	g := component.Guard{Name: "cache"}
	ctx := context.Background()
	for b.Loop() {
		_ = g.Do(ctx, func(context.Context) error { return nil })
	}
}

func BenchmarkGuardOp(b *testing.B) {
	g := component.Guard{Name: "cache"}
	ctx := context.Background()
	for b.Loop() {
		_ = g.Op(ctx, "Get", func(context.Context) error { return nil })
	}
}
