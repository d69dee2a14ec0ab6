package sandbox

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/auth"
)

// TestMeasureAdminRenders measures Reliability II item 5 with the
// default limits (run with CMS_MEASURE_FAIRNESS=1; only API main has):
// one reader runs 24 endless-loop renders at once and an administrator
// then renders 10 times; it prints how many of the administrator's
// renders failed.
func TestMeasureAdminRenders(t *testing.T) {
	if os.Getenv("CMS_MEASURE_FAIRNESS") == "" {
		t.Skip("a measurement: set CMS_MEASURE_FAIRNESS=1")
	}
	e := New(Limits{})
	reader := auth.WithPrincipal(context.Background(), auth.Principal{Name: "reader"})
	admin := auth.WithPrincipal(context.Background(), auth.Principal{Name: "root", Admin: true})
	loop, err := e.Compile("loop", "{{range 10000}}{{range 10000}}{{range 10000}}{{end}}{{end}}{{end}}", nil)
	if err != nil {
		t.Fatal(err)
	}
	ok, _ := e.Compile("ok", "hello", nil)
	var wg sync.WaitGroup
	for range 24 {
		wg.Go(func() { _, _ = loop.Execute(reader, nil) })
	}
	time.Sleep(300 * time.Millisecond)
	failed := 0
	for range 10 {
		if _, err := ok.Execute(admin, nil); err != nil {
			failed++
		}
	}
	wg.Wait()
	fmt.Printf("MEASURE renders: %d of 10 admin renders failed under one reader's 24 endless loops\n", failed)
}
