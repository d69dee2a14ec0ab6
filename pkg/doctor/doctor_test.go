package doctor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRunKeepsOrderAndBoundsEachCheck(t *testing.T) {
	checks := []Check{
		{Name: "slow", Run: func(ctx context.Context) []Line {
			<-ctx.Done()
			time.Sleep(5 * time.Second) // ignores its context after the deadline
			return nil
		}},
		{Name: "two", Run: func(context.Context) []Line {
			return []Line{{Subject: "a", Verdict: OK, Detail: "fine"}, {Subject: "b", Verdict: Warn, Detail: "risky", Fix: "change it"}}
		}},
		{Name: "broken", Run: func(context.Context) []Line {
			return []Line{Failed("c", errors.New("dial tcp:\n refused"), "start it")}
		}},
	}
	start := time.Now()
	lines := Run(context.Background(), checks, 100*time.Millisecond)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Run took %v with a 100 ms timeout", el)
	}
	var subjects []string
	for _, l := range lines {
		subjects = append(subjects, l.Subject)
	}
	if got := strings.Join(subjects, ","); got != "slow,a,b,c" {
		t.Fatalf("subjects %s, want slow,a,b,c", got)
	}
	if lines[0].Verdict != Fail || !strings.Contains(lines[0].Detail, "no answer within") {
		t.Errorf("the hanging check: %+v", lines[0])
	}
	if lines[3].Detail != "dial tcp: refused" {
		t.Errorf("error kept on one line: %q", lines[3].Detail)
	}
	if ExitCode(lines) != 2 || ExitCode(lines[1:3]) != 1 || ExitCode(lines[1:2]) != 0 {
		t.Errorf("exit codes %d %d %d, want 2 1 0", ExitCode(lines), ExitCode(lines[1:3]), ExitCode(lines[1:2]))
	}
	var b strings.Builder
	if err := Print(&b, lines[1:]); err != nil {
		t.Fatal(err)
	}
	want := "ok    a  fine\nwarn  b  risky\n         fix: change it\nFAIL  c  dial tcp: refused\n         fix: start it\n1 ok, 1 warnings, 1 failures\n"
	if b.String() != want {
		t.Errorf("Print:\n%s\nwant:\n%s", b.String(), want)
	}
}
