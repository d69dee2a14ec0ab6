package main

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
)

// TestJobRunnerKill9 kills `cms run` (a process of its own, SIGKILL) while
// its job runner is in the middle of an import, starts it again, and
// checks that the job is recovered, not left Running: the new process's
// runner takes it over (restarts 1, "taken over"), resumes after the last
// batch the dead one committed (its log says where) and imports every
// input object exactly once. Before the kill, the log read over HTTP
// while the job runs holds what was written so far. Embedded, the
// restarted process releases the dead runner's jobs at once
// (Queue.ReleaseDead); distributed (PostgreSQL, NATS), `cms serve
// --target=management` and `cms serve --target=jobs` follow the killed
// process, and the queue hands the job to the latter after jobAckWait
// (5s here). The imported objects are
// then exported as JSON and CSV and checked in the downloaded ZIPs, and a
// second import of the input is killed over HTTP while it runs.
func TestJobRunnerKill9(t *testing.T) {
	// Batches small enough that the import runs for seconds on either.
	t.Run("embedded", func(t *testing.T) { jobRunnerKill9(t, 20, false, nil) })
	t.Run("distributed", func(t *testing.T) {
		jobRunnerKill9(t, 100, true, distributedEnv(t))
	})
}

const (
	killJobObjects = 40000
	killJobAckWait = 5 * time.Second
)

func jobRunnerKill9(t *testing.T, batch int, separate bool, env []string) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env = append(env, "CMS_JOB_ACK_WAIT="+killJobAckWait.String())
	p := startCMS(t, bin, dir, env...)
	api := p.base + "/apis/cms/v1"

	var typ writeAnswer
	b := mustCall(t, http.StatusCreated, http.MethodPost, api+"/branches/4/objects", `{"objects":[{"meta":{"typeRef":0,"apiIdentifier":"killjob"}}]}`)
	if err := json.Unmarshal(b, &typ); err != nil || len(typ.CreatedObjectIDs) != 1 {
		t.Fatalf("create type: %v %s", err, b)
	}
	input := testenv.ImportInputBytes(killJobObjects, typ.CreatedObjectIDs[0])
	half := len(input) / 2
	token := uploadJobInput(t, api+"/jobInput", input[:half], "")
	uploadJobInput(t, api+"/jobInput/"+token, input[half:], token)
	b = mustCall(t, http.StatusOK, http.MethodPost, api+"/jobs", fmt.Sprintf(`{"branchId":4,"jobDefinitionId":1202,"inputFile":{"token":%q},`+
		`"parameters":[{"name":"batchSize","values":["%d"]}],"language":201}`, token, batch))
	var created struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(b, &created); err != nil || created.ID <= 0 {
		t.Fatalf("create job: %v %s", err, b)
	}
	jobURL := fmt.Sprintf("%s/jobs/%d", api, created.ID)

	// Running, with batches committed (progressInfo "N objects created").
	var atKill int
	deadline := time.Now().Add(60 * time.Second)
	for {
		j := getJob(t, jobURL)
		var prog struct {
			ProgressInfo *string `json:"progressInfo"`
		}
		_ = json.Unmarshal(mustCall(t, http.StatusOK, http.MethodGet, jobURL+"/progress", ""), &prog)
		if j.State > 1 {
			t.Fatalf("the import finished before the kill (state %d %q): make it longer", j.State, j.StateMessage)
		}
		if prog.ProgressInfo != nil && j.State == 1 {
			if _, err := fmt.Sscanf(*prog.ProgressInfo, "%d objects created", &atKill); err == nil && atKill >= 5*batch {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no import progress after 60s: state %d, progress %v", j.State, prog.ProgressInfo)
		}
		time.Sleep(50 * time.Millisecond)
	}
	log := string(mustCall(t, http.StatusOK, http.MethodGet, jobURL+"/logs", ""))
	if !strings.Contains(log, "started by admin") || strings.Contains(log, "imported:") {
		t.Fatalf("log while running:\n%s", log)
	}
	before := getJob(t, jobURL)
	p.kill()
	t.Logf("killed pid %d with %d of %d objects reported created; job instance %s", p.cmd.Process.Pid, atKill, killJobObjects, before.InstanceID)

	restarted := time.Now()
	runner := ""
	if separate {
		// Management and the runner each in a process of their own: the
		// job can only be taken over by `serve --target=jobs`.
		p = startCommand(t, bin, t.TempDir(), []string{"serve", "--target=management"}, env...)
		jp := startCommand(t, bin, t.TempDir(), []string{"serve", "--target=jobs"}, env...)
		runner = fmt.Sprintf("-%d/", jp.cmd.Process.Pid)
	} else {
		p = startCMS(t, bin, dir, env...)
	}
	ready := time.Since(restarted)
	api = p.base + "/apis/cms/v1"
	jobURL = fmt.Sprintf("%s/jobs/%d", api, created.ID)
	var takenOver time.Duration
	deadline = time.Now().Add(3 * time.Minute)
	var j crashJob
	for {
		j = getJob(t, jobURL)
		if takenOver == 0 && j.InstanceID != before.InstanceID {
			takenOver = time.Since(restarted)
		}
		if j.State > 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %d (%q, instance %s) 3 minutes after the restart", j.State, j.StateMessage, j.InstanceID)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("restarted process ready after %v; job taken over after %v, finished after %v", ready.Round(time.Millisecond),
		takenOver.Round(time.Millisecond), time.Since(restarted).Round(time.Millisecond))
	if j.State != 2 || j.Restarts != 1 || !strings.Contains(j.StateMessage, "taken over") || !strings.Contains(j.InstanceID, runner) {
		t.Fatalf("recovered job: state %d %q restarts %d instance %s (want the runner %s)", j.State, j.StateMessage, j.Restarts, j.InstanceID, runner)
	}
	if bound := killJobAckWait + 15*time.Second; takenOver > bound {
		t.Errorf("the job was taken over %v after the restart, beyond %v", takenOver, bound)
	}
	log = string(mustCall(t, http.StatusOK, http.MethodGet, jobURL+"/logs", ""))
	var resumed int
	if i := strings.Index(log, "resuming after "); i < 0 {
		t.Errorf("the log does not say where the import resumed:\n%.2000s", log)
	} else if _, err := fmt.Sscanf(log[i:], "resuming after %d input objects", &resumed); err != nil || resumed < atKill || resumed%batch != 0 {
		t.Errorf("resumed after %d objects (%v); %d were reported created before the kill", resumed, err, atKill)
	}
	t.Logf("resumed after %d input objects", resumed)

	// Every input object exists exactly once.
	names := map[string]int{}
	for token := ""; ; {
		u := api + "/branches/4/types/killjob/objects?take=1000"
		if token != "" {
			u += "&continue=" + url.QueryEscape(token)
		}
		var page struct {
			Continue *string `json:"continue"`
			Objects  []struct {
				Values []struct {
					Attribute int64  `json:"attribute"`
					Value     string `json:"value"`
				} `json:"values"`
			} `json:"objects"`
		}
		if b := mustCall(t, http.StatusOK, http.MethodGet, u, ""); json.Unmarshal(b, &page) != nil {
			t.Fatalf("list: %s", b)
		}
		for _, o := range page.Objects {
			for _, v := range o.Values {
				if v.Attribute == 1000 {
					names[v.Value]++
				}
			}
		}
		if page.Continue == nil || *page.Continue == "" {
			break
		}
		token = *page.Continue
	}
	var twice, missing []string
	for i := 0; i < killJobObjects; i++ {
		switch n := names[fmt.Sprintf("item %d", i)]; {
		case n == 0:
			missing = append(missing, fmt.Sprint(i))
		case n > 1:
			twice = append(twice, fmt.Sprintf("%d (%d times)", i, n))
		}
	}
	if len(twice) > 0 || len(missing) > 0 || len(names) != killJobObjects {
		t.Fatalf("%d distinct objects; imported more than once: %s; missing: %s", len(names), firstFew(twice), firstFew(missing))
	}
	exportThroughZip(t, api, "killjob", killJobObjects)
	killRunning(t, api, token, batch)
}

// killRunning imports the input token again and kills the job over HTTP
// (PATCH state 0) while it runs: it must end as Error within seconds (the
// runner reads the job's state every second).
func killRunning(t *testing.T, api, token string, batch int) {
	t.Helper()
	b := mustCall(t, http.StatusOK, http.MethodPost, api+"/jobs", fmt.Sprintf(`{"branchId":4,"jobDefinitionId":1202,"inputFile":{"token":%q},`+
		`"parameters":[{"name":"batchSize","values":["%d"]}],"language":0}`, token, batch))
	var created struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(b, &created); err != nil {
		t.Fatal(err)
	}
	u := fmt.Sprintf("%s/jobs/%d", api, created.ID)
	deadline := time.Now().Add(time.Minute)
	for j := getJob(t, u); j.State != 1; j = getJob(t, u) {
		if j.State > 1 || time.Now().After(deadline) {
			t.Fatalf("the second import never ran: %+v", j)
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	mustCall(t, http.StatusOK, http.MethodPatch, u, `{"retainUntil":null,"state":0}`)
	j := getJob(t, u)
	for ; j.State != 2 && j.State != 3; j = getJob(t, u) { // 4 KillRequest until the runner stops it
		if time.Since(start) > 30*time.Second {
			t.Fatalf("killed job still %+v after 30s", j)
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	t.Logf("a running import killed over HTTP ended after %v", took.Round(time.Millisecond))
	if j.State != 3 || !strings.Contains(j.StateMessage, "killed by admin") || took > 10*time.Second {
		t.Fatalf("killed job after %v: %+v", took, j)
	}
	if log := string(mustCall(t, http.StatusOK, http.MethodGet, u+"/logs", "")); !strings.Contains(log, "killed: killed by admin") {
		t.Errorf("log of the killed job:\n%.2000s", log)
	}
}

// exportThroughZip exports every object of type typ with jobExportJson
// and jobExportCsv, downloads each job's artifacts.zip and checks that
// both files hold the n objects "item 0" … "item n-1".
func exportThroughZip(t *testing.T, api, typ string, n int) {
	t.Helper()
	files := map[string][]byte{}
	for _, def := range []int{1200, 1201} {
		b := mustCall(t, http.StatusOK, http.MethodPost, api+"/jobs",
			fmt.Sprintf(`{"branchId":4,"jobDefinitionId":%d,"parameters":[{"name":"type","values":[%q]}],"language":0}`, def, typ))
		var created struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(b, &created); err != nil {
			t.Fatal(err)
		}
		u := fmt.Sprintf("%s/jobs/%d", api, created.ID)
		deadline := time.Now().Add(2 * time.Minute)
		for j := getJob(t, u); j.State < 2; j = getJob(t, u) {
			if time.Now().After(deadline) {
				t.Fatalf("export %d not finished: %+v", def, j)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if j := getJob(t, u); j.State != 2 {
			t.Fatalf("export %d: %+v", def, j)
		}
		z := mustCall(t, http.StatusOK, http.MethodGet, u+"/artifacts.zip", "")
		zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
		if err != nil || len(zr.File) != 1 {
			t.Fatalf("artifacts.zip of export %d: %v", def, err)
		}
		rc, err := zr.File[0].Open()
		if err != nil {
			t.Fatal(err)
		}
		files[zr.File[0].Name], err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	var doc struct {
		Objects []struct {
			Values []struct {
				Value string `json:"value"`
			} `json:"values"`
		} `json:"objects"`
	}
	if err := json.Unmarshal(files["objects.json"], &doc); err != nil {
		t.Fatalf("objects.json: %v", err)
	}
	rows, err := csv.NewReader(bytes.NewReader(files["objects.csv"])).ReadAll()
	if err != nil {
		t.Fatalf("objects.csv: %v", err)
	}
	inJSON, inCSV := map[string]bool{}, map[string]bool{}
	for _, o := range doc.Objects {
		if len(o.Values) == 1 {
			inJSON[o.Values[0].Value] = true
		}
	}
	for _, r := range rows[1:] {
		inCSV[r[len(r)-1]] = true
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("item %d", i)
		if !inJSON[name] || !inCSV[name] {
			t.Fatalf("%s: in objects.json %v, in objects.csv %v", name, inJSON[name], inCSV[name])
		}
	}
	if len(doc.Objects) != n || len(rows) != n+1 {
		t.Fatalf("objects.json holds %d objects, objects.csv %d rows; want %d", len(doc.Objects), len(rows)-1, n)
	}
	t.Logf("exported %d objects; objects.json %d bytes, objects.csv %d bytes through artifacts.zip", n, len(files["objects.json"]), len(files["objects.csv"]))
}

// crashJob is what the test reads of a CmsJob.
type crashJob struct {
	State        int    `json:"state"`
	StateMessage string `json:"stateMessage"`
	Restarts     int    `json:"restarts"`
	InstanceID   string `json:"instanceId"`
}

func getJob(t *testing.T, u string) crashJob {
	t.Helper()
	var j crashJob
	if b := mustCall(t, http.StatusOK, http.MethodGet, u, ""); json.Unmarshal(b, &j) != nil {
		t.Fatalf("job: %s", b)
	}
	return j
}

// uploadJobInput sends one job input chunk (multipart field "file") and
// returns the token; a continued upload must answer the same token.
func uploadJobInput(t *testing.T, u string, data []byte, token string) string {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "input.json")
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, u, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.SetBasicAuth("admin", crashPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res struct {
		Token string `json:"token"`
		Size  int64  `json:"size"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK || res.Token == "" ||
		(token != "" && res.Token != token) {
		t.Fatalf("POST %s = %d %v: %+v", u, resp.StatusCode, err, res)
	}
	return res.Token
}
