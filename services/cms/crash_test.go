package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCrashKill9DuringParallelWrites runs `cms run` as a process of its own
// (SQLite, embedded NATS, Bleve, memory cache, blobs on disk) on a temporary
// data directory and, three times, lets crashWriters writers create and
// update objects through Management until it kills the process with
// SIGKILL at a random moment, then restarts it on the same data. Every
// write answered 2xx is acknowledged and must survive: after the last
// restart Management shows each acknowledged object with its last
// acknowledged value (or the value of a write that was in flight at a kill
// and got no answer, which may or may not have committed), and Index and
// Delivery, asked with read-your-writes for the highest version written,
// show exactly what Management shows.
//
// It found two waits of 30s after every kill, both fixed in pkg/: the
// indexer's delivery pending at the kill (natsjs: NewEmbedded resets the
// consumer) and the outbox events the relay had claimed (sqlite: Open
// releases the leases), whose wait also let newer events overtake them,
// so read-your-writes answered without acknowledged writes.
func TestCrashKill9DuringParallelWrites(t *testing.T) {
	started := time.Now()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d, data dir %s", seed, dir)

	p := startCMS(t, bin, dir)
	attrID, typeID := setupModel(t, p.base)
	ws := make([]*crashWriter, crashWriters)
	for i := range ws {
		ws[i] = &crashWriter{id: i, typeID: typeID, attrID: attrID, rng: rand.New(rand.NewPCG(seed, uint64(i)+2))}
	}
	for round := 1; round <= crashRounds; round++ {
		killAfter := time.Duration(300+rng.IntN(501)) * time.Millisecond
		st := runRound(t, p, ws, killAfter)
		restarted := time.Now()
		p = startCMS(t, bin, dir)
		t.Logf("round %d: SIGKILL %v after the first acknowledged write: %d writes acknowledged (%.0f/s), %d unknown, %d rejected; ready again after %v",
			round, st.elapsed.Round(time.Millisecond), st.acked, float64(st.acked)/st.elapsed.Seconds(), st.unknown, st.rejected,
			time.Since(restarted).Round(time.Millisecond))
	}

	exp := expectations(ws)
	verifyStart := time.Now()
	mgmt := managementState(t, p.base, attrID)
	res := exp.check(t, mgmt)
	mgmtTook := time.Since(verifyStart)
	// Unanswered writes may have committed after the highest acknowledged
	// one: wait for what Management shows, so that Index and Delivery must
	// equal it.
	minVersion := max(exp.maxTx, res.maxLastTx)
	idxStart := time.Now()
	idx := indexState(t, p.base, typeID, minVersion)
	idxOK := compareSurface(t, "Index", mgmt, idx, false)
	idxTook := time.Since(idxStart)
	delivStart := time.Now()
	deliv := deliveryState(t, p.base, minVersion)
	delivOK := compareSurface(t, "Delivery", mgmt, deliv, true)
	delivTook := time.Since(delivStart)
	t.Logf("%d writes acknowledged (%d objects created, %d updates), %d unknown (%d found applied), %d rejected, highest acknowledged transaction %d",
		exp.acked, exp.createdObjects, exp.updates, exp.unknown, res.unknownApplied, exp.rejectedOps, exp.maxTx)
	t.Logf("verified: Management %d/%d acknowledged objects with their value (%v); Index %d/%d objects equal to Management (%v) and Delivery %d/%d (%v), read-your-writes at version %d; total %v",
		res.verified, len(exp.objects), mgmtTook.Round(time.Millisecond), idxOK, len(mgmt), idxTook.Round(time.Millisecond),
		delivOK, len(mgmt), delivTook.Round(time.Millisecond), minVersion, time.Since(started).Round(time.Millisecond))
}

const (
	crashWriters  = 8
	crashRounds   = 3
	crashMinAcked = 100 // writes acknowledged in a round before its kill …
	crashMaxAcked = 160 // … and at most
	crashPassword = "crash-password"
	crashType     = "crashitem"
	crashAttr     = "crashval"
	// crashLogDirEnv names a directory for the full (debug) log of every
	// process the test starts, cms-<pid>.log; without it a failing test
	// prints the last lines of each.
	crashLogDirEnv = "CRASH_TEST_LOG_DIR"
)

// crashExecEnv makes the test binary the cms binary: this package is
// main, so the test binary holds the whole command, and TestMain runs it
// instead of the tests. The server is thus a process of its own, to be
// killed, without linking a second binary (seconds on two busy cores).
const crashExecEnv = "CRASH_TEST_EXEC_CMS"

func TestMain(m *testing.M) {
	if os.Getenv(crashExecEnv) == "1" {
		writeHeapProfilesOnSignal()
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// cmsProc is one running `cms run`.
type cmsProc struct {
	cmd  *exec.Cmd
	base string
	log  *procLog
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done
}

// kill sends SIGKILL and waits until the process is gone.
func (p *cmsProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// procLog keeps the process's stderr and reports the HTTP address of its
// "cms serving" line.
type procLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial []byte
	addr    chan string
}

func (l *procLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		var line struct {
			Msg  string `json:"msg"`
			HTTP string `json:"http"`
		}
		if json.Unmarshal(l.partial[:i], &line) == nil && line.Msg == "cms serving" && line.HTTP != "" {
			select {
			case l.addr <- line.HTTP:
			default:
			}
		}
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

// tail returns the last n lines of the log.
func (l *procLog) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := strings.Split(strings.TrimRight(l.buf.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// startCMS starts `cms run` (bin with crashExecEnv) on dir with free loopback ports (the process
// binds :0 and logs the address) and waits for /readyz. env adds settings
// ("CMS_CORS_ORIGINS=…"). The process is killed when the test ends; its
// log is printed when the test failed.
func startCMS(t testing.TB, bin, dir string, env ...string) *cmsProc {
	t.Helper()
	return startCommand(t, bin, dir, []string{"run"}, env...)
}

// startCommand is startCMS for another command: args is the command and
// its own flags ("serve", "--target=jobs"); a target without Management
// is only waited for until /readyz answers 200.
func startCommand(t testing.TB, bin, dir string, args []string, env ...string) *cmsProc {
	t.Helper()
	log := &procLog{addr: make(chan string, 1)}
	cmd := exec.Command(bin, append(args, "--data-dir", dir, "--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--log-format", "json", "--log-level", "info")...)
	if os.Getenv(crashLogDirEnv) != "" {
		cmd.Args[len(cmd.Args)-1] = "debug" // e.g. every event the indexer applies
	}
	for _, kv := range os.Environ() { // no CI or developer CMS_* setting may change the setup
		if !strings.HasPrefix(kv, "CMS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "CMS_ADMIN_PASSWORD="+crashPassword, crashExecEnv+"=1")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &cmsProc{cmd: cmd, log: log, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if d := os.Getenv(crashLogDirEnv); d != "" {
			_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("cms-%d.log", cmd.Process.Pid)), log.buf.Bytes(), 0o644)
		}
		if t.Failed() {
			t.Logf("log of cms pid %d (last 30 lines):\n%s", cmd.Process.Pid, log.tail(30))
		}
	})
	deadline := time.After(30 * time.Second)
	select {
	case addr := <-log.addr:
		p.base = "http://" + addr
	case <-p.done:
		t.Fatalf("cms run on %s exited before serving: %v", dir, p.err)
	case <-deadline:
		t.Fatalf("cms run on %s: not serving after 30s", dir)
	}
	for {
		resp, err := http.Get(p.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-p.done:
			t.Fatalf("cms run on %s exited before ready: %v", dir, p.err)
		case <-deadline:
			t.Fatalf("cms run on %s: not ready after 30s", dir)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "--target=") && a != "--target=all" && a != "--target=management"
	}) {
		return p
	}
	// One authenticated call, so the writers find the credentials cached
	// instead of queueing for the password check together.
	if code, body, err := call(http.DefaultClient, http.MethodGet, p.base+"/apis/cms/v1/branches/4", ""); err != nil || code != http.StatusOK {
		t.Fatalf("GET /apis/cms/v1/branches/4 after start = %d %v: %s", code, err, body)
	}
	return p
}

// call sends one request as the administrator.
func call(c *http.Client, method, url, body string, hdr ...string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.SetBasicAuth("admin", crashPassword)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// mustCall is call that fails the test unless the answer is want.
func mustCall(t *testing.T, want int, method, url, body string, hdr ...string) []byte {
	t.Helper()
	code, b, err := call(http.DefaultClient, method, url, body, hdr...)
	if err != nil || code != want {
		t.Fatalf("%s %s = %d %v, want %d: %s", method, url, code, err, want, b)
	}
	return b
}

// value is one value row of a Management write.
func value(attr int64, lang int, v any) string {
	b, _ := json.Marshal(v)
	return fmt.Sprintf(`{"attribute":%d,"language":%d,"variant":0,"value":%s}`, attr, lang, b)
}

// setupModel creates the attribute crashval and the type crashitem and
// returns their ids.
func setupModel(t *testing.T, base string) (attrID, typeID int64) {
	t.Helper()
	attr := `{"meta":{"typeRef":10,"apiIdentifier":"` + crashAttr + `"},"values":[` + value(1000, 201, crashAttr) + "," +
		value(1001, 0, "String") + "," + value(1004, 0, false) + "," + value(1017, 0, false) + "]}"
	typ := `{"meta":{"typeRef":0,"apiIdentifier":"` + crashType + `"},"values":[` + value(1000, 201, "Crash item") + "]}"
	var w writeAnswer
	b := mustCall(t, http.StatusCreated, http.MethodPost, base+"/apis/cms/v1/branches/4/objects", `{"objects":[`+attr+","+typ+`]}`)
	if err := json.Unmarshal(b, &w); err != nil || len(w.CreatedObjectIDs) != 2 {
		t.Fatalf("create model: %v: %s", err, b)
	}
	return w.CreatedObjectIDs[0], w.CreatedObjectIDs[1]
}

// writeAnswer is a Management write's answer.
type writeAnswer struct {
	Transaction struct {
		ID int64 `json:"id"`
	} `json:"transaction"`
	CreatedObjectIDs []int64 `json:"createdObjectIds"`
}

// surfaceObj is what one surface shows of a crashitem.
type surfaceObj struct {
	name   string // display name (attribute 1000, en-US)
	val    string // crashval ("" where the surface does not show it)
	lastTx int64  // Management's meta.lastTransaction
}

// managementState lists every crashitem through Management, 1,000 a page.
func managementState(t *testing.T, base string, attrID int64) map[int64]surfaceObj {
	t.Helper()
	out := map[int64]surfaceObj{}
	for token := ""; ; {
		u := base + "/apis/cms/v1/branches/4/types/" + crashType + "/objects?take=1000"
		if token != "" {
			u += "&continue=" + url.QueryEscape(token)
		}
		var page struct {
			Continue *string `json:"continue"`
			Objects  []struct {
				Meta struct {
					ID              int64 `json:"id"`
					LastTransaction int64 `json:"lastTransaction"`
					Deleted         bool  `json:"deleted"`
				} `json:"meta"`
				Values []struct {
					Attribute int64  `json:"attribute"`
					Language  int64  `json:"language"`
					Value     string `json:"value"`
				} `json:"values"`
			} `json:"objects"`
		}
		if b := mustCall(t, http.StatusOK, http.MethodGet, u, ""); json.Unmarshal(b, &page) != nil {
			t.Fatalf("Management list: %s", b)
		}
		for _, o := range page.Objects {
			s := surfaceObj{lastTx: o.Meta.LastTransaction}
			for _, v := range o.Values {
				switch {
				case v.Attribute == 1000 && v.Language == 201:
					s.name = v.Value
				case v.Attribute == attrID && v.Language == 0:
					s.val = v.Value
				}
			}
			if o.Meta.Deleted {
				t.Errorf("Management: object %d is deleted; nobody deleted it", o.Meta.ID)
			}
			out[o.Meta.ID] = s
		}
		if page.Continue == nil || *page.Continue == "" {
			return out
		}
		token = *page.Continue
	}
}

type checkResult struct {
	verified       int   // acknowledged objects showing an allowed value
	unknownApplied int   // unanswered writes found applied
	maxLastTx      int64 // highest meta.lastTransaction
}

// check compares Management with the writes: every acknowledged object
// exists with its last acknowledged value or one of an unanswered write
// after it, both attributes of a write together; every other object comes
// whole from an unanswered create; no rejected write left a trace.
func (e crashExpect) check(t *testing.T, mgmt map[int64]surfaceObj) checkResult {
	t.Helper()
	var r checkResult
	var lost, stale []string
	for id, x := range e.objects {
		o, ok := mgmt[id]
		switch {
		case !ok:
			lost = append(lost, fmt.Sprintf("%d (%q, transaction %d)", id, x.last, x.tx))
		case o.name != o.val:
			t.Errorf("Management: object %d shows name %q but crashval %q: one write applied in part", id, o.name, o.val)
		case o.name != x.last && !slices.Contains(x.later, o.name):
			stale = append(stale, fmt.Sprintf("%d shows %q, acknowledged %q in transaction %d", id, o.name, x.last, x.tx))
		case o.lastTx < x.tx:
			t.Errorf("Management: object %d: lastTransaction %d before its acknowledged transaction %d", id, o.lastTx, x.tx)
		default:
			r.verified++
			if o.name != x.last {
				r.unknownApplied++
			}
		}
	}
	if len(lost) > 0 {
		t.Errorf("Management: %d acknowledged objects lost: %s", len(lost), firstFew(lost))
	}
	if len(stale) > 0 {
		t.Errorf("Management: %d acknowledged updates lost: %s", len(stale), firstFew(stale))
	}
	createOf := map[string]int{}
	for i, vals := range e.unknownCreates {
		for _, v := range vals {
			createOf[v] = i
		}
	}
	present := make([]int, len(e.unknownCreates))
	for id, o := range mgmt {
		r.maxLastTx = max(r.maxLastTx, o.lastTx)
		if e.rejected[o.name] || e.rejected[o.val] {
			t.Errorf("Management: object %d shows %q/%q of a write answered with an error", id, o.name, o.val)
		}
		if _, ok := e.objects[id]; ok {
			continue
		}
		if i, ok := createOf[o.name]; ok && o.val == o.name {
			present[i]++
		} else {
			t.Errorf("Management: object %d (%q/%q) was never written", id, o.name, o.val)
		}
	}
	for i, n := range present {
		if n > 0 {
			r.unknownApplied++
		}
		if n != 0 && n != len(e.unknownCreates[i]) {
			t.Errorf("Management: %d of the %d objects of one create %v exist: a transaction applied in part", n, len(e.unknownCreates[i]), e.unknownCreates[i])
		}
	}
	return r
}

// indexState finds every crashitem through the Index group, waiting for
// minVersion (minChangeTrackingVersion + maxWaitTime).
func indexState(t *testing.T, base string, typeID, minVersion int64) map[int64]surfaceObj {
	t.Helper()
	var res struct {
		ChangeTrackingVersion int64 `json:"changeTrackingVersion"`
		Objects               []struct {
			ID          int64  `json:"id"`
			DisplayName string `json:"displayName"`
		} `json:"objects"`
	}
	// The indexer catches up with every write of the rounds now (it gets
	// little CPU while eight writers run): one wait (10s) may not be
	// enough on a busy machine, so ask again while the answer is older,
	// as long as the version moves. A wait without progress is a stalled
	// indexer (e.g. waiting for a killed process's delivery).
	filter := fmt.Sprintf(`{"filter":{"objectTypeIds":[%d]},"minChangeTrackingVersion":%d,"maxWaitTime":"00:00:10"}`, typeID, minVersion)
	start, prev := time.Now(), int64(-1)
	for {
		if b := mustCall(t, http.StatusOK, http.MethodPost, base+"/apis/index/v1/branches/4/objects", filter); json.Unmarshal(b, &res) != nil {
			t.Fatalf("Index search: %s", b)
		}
		if res.ChangeTrackingVersion >= minVersion {
			break
		}
		if res.ChangeTrackingVersion == prev || time.Since(start) > 45*time.Second {
			t.Fatalf("Index at version %d after %v (the previous wait ended at %d), asked for %d",
				res.ChangeTrackingVersion, time.Since(start).Round(time.Millisecond), prev, minVersion)
		}
		prev = res.ChangeTrackingVersion
	}
	var count struct {
		Count int `json:"count"`
	}
	if b := mustCall(t, http.StatusOK, http.MethodPost, base+"/apis/index/v1/branches/4/objectCount", filter); json.Unmarshal(b, &count) != nil {
		t.Fatalf("Index count: %s", b)
	}
	if count.Count != len(res.Objects) {
		t.Errorf("Index: objectCount %d, search found %d", count.Count, len(res.Objects))
	}
	out := map[int64]surfaceObj{}
	for _, o := range res.Objects {
		out[o.ID] = surfaceObj{name: o.DisplayName}
	}
	return out
}

// deliveryState lists every crashitem through Delivery, 1,000 a page,
// with X-Cms-Min-Version: minVersion (503 + Retry-After is retried).
func deliveryState(t *testing.T, base string, minVersion int64) map[int64]surfaceObj {
	t.Helper()
	out := map[int64]surfaceObj{}
	deadline := time.Now().Add(30 * time.Second)
	for skip := 0; ; {
		u := fmt.Sprintf("%s/delivery/api/branches/4/types/%s/objects?lang=en-US&props=1&sort=meta.id&take=1000&skip=%d", base, crashType, skip)
		code, b, err := call(http.DefaultClient, http.MethodGet, u, "", "X-Cms-Min-Version", fmt.Sprint(minVersion), "X-Cms-Max-Wait", "30s")
		if err == nil && code == http.StatusServiceUnavailable && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if err != nil || code != http.StatusOK {
			t.Fatalf("GET %s = %d %v: %s", u, code, err, b)
		}
		var page struct {
			More bool `json:"more"`
			Objs []struct {
				DisplayName string `json:"displayName"`
				Meta        struct {
					ID int64 `json:"id"`
				} `json:"meta"`
				Props map[string]any `json:"props"`
			} `json:"objs"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatalf("Delivery list: %v: %s", err, b)
		}
		for _, o := range page.Objs {
			val, _ := o.Props[crashAttr].(string)
			out[o.Meta.ID] = surfaceObj{name: o.DisplayName, val: val}
		}
		skip += len(page.Objs)
		if !page.More || len(page.Objs) == 0 {
			return out
		}
	}
}

// compareSurface reports every object of got that differs from
// Management and returns how many are equal.
func compareSurface(t *testing.T, surface string, mgmt, got map[int64]surfaceObj, withVal bool) int {
	t.Helper()
	var diffs []string
	equal := 0
	for id, m := range mgmt {
		g, ok := got[id]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%d missing (Management: %q)", id, m.name))
		case g.name != m.name || (withVal && g.val != m.val):
			diffs = append(diffs, fmt.Sprintf("%d shows %q/%q, Management %q/%q", id, g.name, g.val, m.name, m.val))
		default:
			equal++
		}
	}
	for id, g := range got {
		if _, ok := mgmt[id]; !ok {
			diffs = append(diffs, fmt.Sprintf("%d (%q) not in Management", id, g.name))
		}
	}
	if len(diffs) > 0 {
		t.Errorf("%s differs from Management in %d objects: %s", surface, len(diffs), firstFew(diffs))
	}
	return equal
}

// firstFew joins up to ten items, sorted.
func firstFew(items []string) string {
	slices.Sort(items)
	if len(items) > 10 {
		return strings.Join(items[:10], "; ") + fmt.Sprintf("; … (%d more)", len(items)-10)
	}
	return strings.Join(items, "; ")
}
