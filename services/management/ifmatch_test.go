package management_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cmsplatform/cms/services/internal/app"
)

// If-Match on the Management writes: unit cases over HTTP on the whole
// system, and the read-modify-write race on SQLite and PostgreSQL.

// adminClient sends requests as the administrator and checks that errors
// are ProblemDetails; safe for concurrent use.
type adminClient struct{ base string }

type adminReply struct {
	status int
	etag   string
	body   []byte
}

func (c adminClient) send(t *testing.T, method, path, body string, hdr ...string) (adminReply, error) {
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		return adminReply{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth("admin", adminPassword)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return adminReply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return adminReply{}, err
	}
	if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		return adminReply{}, fmt.Errorf("%s %s: %d without ProblemDetails: %s", method, path, resp.StatusCode, b)
	}
	return adminReply{status: resp.StatusCode, etag: resp.Header.Get("ETag"), body: b}, nil
}

// must sends and checks the status.
func (c adminClient) must(t *testing.T, want int, method, path, body string, hdr ...string) adminReply {
	t.Helper()
	r, err := c.send(t, method, path, body, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	if r.status != want {
		t.Fatalf("%s %s %v = %d, want %d: %s", method, path, hdr, r.status, want, r.body)
	}
	return r
}

// counterFixture creates an Integer attribute "counter" and a type and an
// object with counter 0; it returns the attribute and object ids.
func counterFixture(t *testing.T, c adminClient) (attr, obj int) {
	t.Helper()
	ids := func(r adminReply) []int {
		var m struct{ CreatedObjectIds []int }
		if err := json.Unmarshal(r.body, &m); err != nil || len(m.CreatedObjectIds) == 0 {
			t.Fatalf("create: %s (%v)", r.body, err)
		}
		return m.CreatedObjectIds
	}
	model := ids(c.must(t, 201, "POST", "/branches/4/objects", `{"objects":[
		{"meta":{"typeRef":0,"apiIdentifier":"tally"},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Tally"}]},
		{"meta":{"typeRef":10,"apiIdentifier":"counter"},"values":[{"attribute":1001,"language":0,"variant":0,"value":"Integer"}]}]}`))
	obj = ids(c.must(t, 201, "POST", "/branches/4/objects", fmt.Sprintf(`{"objects":[
		{"meta":{"typeRef":%d},"values":[{"attribute":%d,"language":0,"variant":0,"value":0}]}]}`, model[0], model[1])))[0]
	return model[1], obj
}

// counterOf reads the counter value from a GET object body.
func counterOf(t *testing.T, body []byte, attr int) (int, error) {
	var o struct {
		Values []struct {
			Attribute int
			Value     json.Number
		}
	}
	if err := json.Unmarshal(body, &o); err != nil {
		return 0, err
	}
	for _, v := range o.Values {
		if v.Attribute == attr {
			n, err := v.Value.Int64()
			return int(n), err
		}
	}
	return 0, fmt.Errorf("no counter in %s", body)
}

func setCounter(attr, obj, n int) string {
	return fmt.Sprintf(`{"objects":[{"meta":{"id":%d},"values":[{"attribute":%d,"language":0,"variant":0,"value":%d}]}]}`, obj, attr, n)
}

func TestIfMatchObjectsBranchesComments(t *testing.T) {
	base, _ := startSystem(t, app.Component{})
	c := adminClient{base: base}
	attr, obj := counterFixture(t, c)
	path := fmt.Sprintf("/branches/4/objects/%d", obj)

	t.Run("object", func(t *testing.T) {
		tag := c.must(t, 200, "GET", path, "").etag
		// Missing header: unconditional.
		c.must(t, 200, "PATCH", "/branches/4/objects", setCounter(attr, obj, 1))
		// The tag read before that write is stale now.
		p := c.must(t, 412, "PATCH", "/branches/4/objects", setCounter(attr, obj, 2), "If-Match", tag)
		if !strings.Contains(string(p.body), `"status":412`) || !strings.Contains(string(p.body), "ETag") {
			t.Fatalf("412 body %s", p.body)
		}
		cur := c.must(t, 200, "GET", path, "")
		if n, err := counterOf(t, cur.body, attr); err != nil || n != 1 {
			t.Fatalf("a refused write changed the object: %d %v", n, err)
		}
		// The current tag matches, also among others; a weak one never does.
		c.must(t, 412, "PATCH", "/branches/4/objects", setCounter(attr, obj, 2), "If-Match", "W/"+cur.etag)
		c.must(t, 200, "PATCH", "/branches/4/objects", setCounter(attr, obj, 2), "If-Match", `"other", `+cur.etag)
		c.must(t, 200, "PATCH", "/branches/4/objects", setCounter(attr, obj, 3), "If-Match", "*")
		// Batch writes take no If-Match; creates neither.
		both := fmt.Sprintf(`{"objects":[{"meta":{"id":%d},"values":[]},{"meta":{"id":%d},"values":[]}]}`, obj, attr)
		c.must(t, 400, "PATCH", "/branches/4/objects", both, "If-Match", "*")
		c.must(t, 400, "POST", "/branches/4/objects", `{"objects":[{"meta":{"typeRef":0},"values":[]}]}`, "If-Match", "*")
		// Unknown objects stay 404 whatever the precondition.
		c.must(t, 404, "PATCH", "/branches/4/objects", setCounter(attr, 999999, 1), "If-Match", "*")

		// Delete: stale tag 412, current tag 200, then "*" fails on the
		// tombstone while its own current tag still matches.
		cur = c.must(t, 200, "GET", path, "")
		del := fmt.Sprintf(`{"objectIds":["%d"]}`, obj)
		c.must(t, 412, "DELETE", "/branches/4/objects", del, "If-Match", tag)
		c.must(t, 400, "DELETE", "/branches/4/objects", fmt.Sprintf(`{"objectIds":["%d","%d"]}`, obj, attr), "If-Match", cur.etag)
		c.must(t, 200, "DELETE", "/branches/4/objects", del, "If-Match", cur.etag)
		c.must(t, 412, "DELETE", "/branches/4/objects", del, "If-Match", "*")
		gone := c.must(t, 200, "GET", path, "")
		c.must(t, 200, "DELETE", "/branches/4/objects", del, "If-Match", gone.etag)
	})

	t.Run("branch", func(t *testing.T) {
		r := c.must(t, 200, "POST", "/branches", `{"values":[{"attribute":1000,"language":201,"variant":0,"value":"B"}]}`)
		var b struct{ Meta struct{ ID int } }
		if err := json.Unmarshal(r.body, &b); err != nil {
			t.Fatal(err)
		}
		bp := fmt.Sprintf("/branches/%d", b.Meta.ID)
		c.must(t, 400, "POST", "/branches", `{"values":[{"attribute":1000,"language":201,"variant":0,"value":"C"}]}`, "If-Match", "*")
		tag := c.must(t, 200, "GET", bp, "").etag
		rename := `{"values":[{"attribute":1000,"language":201,"variant":0,"value":"B2"}]}`
		c.must(t, 200, "PATCH", bp, rename, "If-Match", tag)
		c.must(t, 412, "PATCH", bp, rename, "If-Match", tag)
		c.must(t, 412, "DELETE", bp, `{}`, "If-Match", tag)
		c.must(t, 200, "DELETE", bp, `{}`, "If-Match", c.must(t, 200, "GET", bp, "").etag)
		c.must(t, 404, "DELETE", bp, `{}`, "If-Match", "*")
	})

	t.Run("comment", func(t *testing.T) {
		r := c.must(t, 200, "POST", "/comments", fmt.Sprintf(`{"branchId":4,"objectRef":%d,"body":"<div>one</div>"}`, attr))
		var cm struct{ ID int }
		if err := json.Unmarshal(r.body, &cm); err != nil {
			t.Fatal(err)
		}
		c.must(t, 400, "POST", "/comments", fmt.Sprintf(`{"branchId":4,"objectRef":%d,"body":"<div>x</div>"}`, attr), "If-Match", "*")
		cp := fmt.Sprintf("/comments/%d", cm.ID)
		tag := c.must(t, 200, "GET", cp, "").etag
		c.must(t, 200, "PATCH", cp, `{"body":"<div>two</div>"}`, "If-Match", tag)
		c.must(t, 412, "PATCH", cp, `{"body":"<div>three</div>"}`, "If-Match", tag)
		c.must(t, 412, "DELETE", cp, "", "If-Match", tag)
		c.must(t, 200, "DELETE", cp, "", "If-Match", c.must(t, 200, "GET", cp, "").etag)
	})
}

func TestIfMatchRaceSQLite(t *testing.T) { runIfMatchRace(t, app.Component{}) }

func TestIfMatchRacePostgres(t *testing.T) {
	runIfMatchRace(t, app.Component{Engine: app.EnginePostgres, URL: freshPostgres(t)})
}

// runIfMatchRace: two clients each make 200 read-modify-write increments
// of one counter with If-Match, retrying on 412. Every acknowledged
// increment must survive: the counter ends at exactly 400.
func runIfMatchRace(t *testing.T, st app.Component) {
	base, _ := startSystem(t, st)
	c := adminClient{base: base}
	attr, obj := counterFixture(t, c)
	path := fmt.Sprintf("/branches/4/objects/%d", obj)
	const clients, increments = 2, 200
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	conflicts := 0
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < increments; {
				cur, err := c.send(t, "GET", path, "")
				if err != nil || cur.status != 200 {
					errs <- fmt.Errorf("GET: %v %d %s", err, cur.status, cur.body)
					return
				}
				n, err := counterOf(t, cur.body, attr)
				if err != nil {
					errs <- err
					return
				}
				r, err := c.send(t, "PATCH", "/branches/4/objects", setCounter(attr, obj, n+1), "If-Match", cur.etag)
				switch {
				case err != nil:
					errs <- err
					return
				case r.status == 200:
					done++
				case r.status == 412:
					mu.Lock()
					conflicts++
					mu.Unlock()
				default:
					errs <- fmt.Errorf("PATCH = %d: %s", r.status, r.body)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n, err := counterOf(t, c.must(t, 200, "GET", path, "").body, attr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d acknowledged increments in %v, counter %d, %d retries after 412", clients*increments, time.Since(start).Round(time.Millisecond), n, conflicts)
	if n != clients*increments {
		t.Fatalf("counter = %d after %d acknowledged increments: %d lost", n, clients*increments, clients*increments-n)
	}
}
