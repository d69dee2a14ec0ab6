package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmsplatform/cms/pkg/loadtest"
	"github.com/cmsplatform/cms/pkg/loadtest/cmsload"
)

const loadLong = `Drive a running deployment over HTTP with a weighted mix of requests and
compare it with a baseline measured in the same run.

First a small data set is seeded through the Management API (a type, three
attributes and --objects objects referring to each other) and awaited in
Delivery (X-Cms-Min-Version). Then --concurrency workers run the --mix for
--duration after a --warmup:

  delivery-get      GET /delivery/api/branches/{b}/objects/{id}, every second
                    one with If-None-Match (304 when unchanged)
  delivery-list     GET /delivery/api/branches/{b}/types/{type}/objects,
                    20 per page, sorted, references resolved
  index-search      POST /apis/index/v1/branches/{b}/objects (type + filter)
  management-write  PATCH /apis/cms/v1/branches/{b}/objects (one value)

The baseline is a bare net/http server started in this process on
127.0.0.1 that answers the bytes of a Delivery GET; it runs with the same
concurrency. The ratio lines give baseline latency / system latency and
system throughput / baseline throughput in percent.

With --write-rate N the mix and the baseline are replaced by a write
visibility phase: for --duration, N writes per second are started (each a
PATCH of one value of a seeded object, not waiting for the previous ones),
and for each the time from sending it until Delivery serves its
transaction (X-Cms-Min-Version: the index has applied it) is measured.
The table gives the writes' own latency and write → visible p50/p99.

A progress line goes to stderr every second, the table to stdout. The
exit status is non-zero when more than --max-errors percent failed.
Seeded objects stay in the branch (their ApiIdentifiers carry a unique
suffix), so run it against a scratch deployment.`

func newLoadCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Load-test a running deployment over HTTP against a bare net/http baseline",
		Long:  loadLong,
		Args:  cobra.NoArgs,
	}
	f := cmd.Flags()
	f.String("url", "http://localhost:8080", "HTTP root of the deployment")
	f.String("user", "admin", "HTTP Basic user")
	f.String("password", "admin", "HTTP Basic password")
	f.Int("concurrency", 8, "concurrent workers")
	f.Duration("duration", 10*time.Second, "measured duration (system; the baseline runs as long)")
	f.Int64("requests", 0, "stop after this many requests instead (0 = by duration only)")
	f.Duration("warmup", 2*time.Second, "warm-up before measuring (not counted)")
	f.Int("branch", 4, "branch id")
	f.Int("objects", 200, "objects to seed")
	f.String("mix", cmsload.DefaultMix, "operations and weights")
	f.Float64("max-errors", 1, "fail when more than this percentage of requests failed")
	f.Float64("write-rate", 0, "writes per second of the write-visibility phase (0 = run the mix instead)")
	cmd.RunE = runLoad
	return cmd
}

// errTooManyErrors is returned when the error rate exceeds --max-errors.
var errTooManyErrors = errors.New("error rate above --max-errors")

func runLoad(cmd *cobra.Command, _ []string) error {
	f := cmd.Flags()
	url, _ := f.GetString("url")
	user, _ := f.GetString("user")
	pw, _ := f.GetString("password")
	conc, _ := f.GetInt("concurrency")
	dur, _ := f.GetDuration("duration")
	reqs, _ := f.GetInt64("requests")
	warm, _ := f.GetDuration("warmup")
	branch, _ := f.GetInt("branch")
	objects, _ := f.GetInt("objects")
	mixFlag, _ := f.GetString("mix")
	maxErr, _ := f.GetFloat64("max-errors")
	writeRate, _ := f.GetFloat64("write-rate")
	mix, err := cmsload.ParseMix(mixFlag)
	if err != nil {
		return err
	}
	if conc < 1 || objects < 1 || branch < 1 || (dur <= 0 && reqs <= 0) {
		return errors.New("--concurrency, --objects and --branch must be ≥ 1, and --duration or --requests positive")
	}
	var vis *cmsload.VisibilityOptions
	if writeRate > 0 {
		if dur <= 0 {
			return errors.New("--write-rate needs a positive --duration")
		}
		vis = &cmsload.VisibilityOptions{Rate: writeRate, Duration: dur}
	}
	res, err := cmsload.Run(cmd.Context(), cmsload.Options{
		Target:  cmsload.Target{URL: url, User: user, Password: pw, Branch: branch},
		Objects: objects, Mix: mix, Log: cmd.ErrOrStderr(), Visibility: vis,
		Load: loadtest.Config{Concurrency: conc, Duration: dur, Requests: reqs, Warmup: warm},
	})
	if res != nil {
		if werr := res.Write(cmd.OutOrStdout()); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	if res.Visibility != nil {
		for _, s := range []loadtest.Stats{res.Visibility.Write, res.Visibility.Visible} {
			if rate := s.ErrorRate(); rate > maxErr {
				return fmt.Errorf("%w: %s %.2f%% > %.2f%%", errTooManyErrors, s.Name, rate, maxErr)
			}
		}
		return nil
	}
	if rate := res.System.Total.ErrorRate(); rate > maxErr {
		return fmt.Errorf("%w: %.2f%% > %.2f%%", errTooManyErrors, rate, maxErr)
	}
	return nil
}
