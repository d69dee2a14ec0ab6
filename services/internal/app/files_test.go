package app

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs/natsobj"
	"github.com/cmsplatform/cms/pkg/openapitest"
)

// The file operations end to end on both setups: a 3-chunk upload with a
// restart between chunks, commit, reads through Management, Delivery and
// Rendering (full, ranges, 304), the limits and hostile names, and a
// binary proxy object read through Delivery. Responses are validated
// against NovaDB's document where it describes them.

const filesChunkLimit = 64 << 10

func filesConfig(c *Config) {
	c.Files.MaxChunkBytes = filesChunkLimit
	c.Files.MaxFileBytes = 3 * filesChunkLimit
	c.Files.ThumbnailSize = thumbnailDefault
	c.Files.MaxThumbnailSize = thumbnailCap
	// runCleanupScenario removes files stored seconds ago.
	c.JobCleanupMinAge = 0
}

// TestFilesEmbedded runs the scenario on `cms run`; the server restarts
// (same data directory) between the second and the third chunk.
func TestFilesEmbedded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	filesConfig(&cfg)
	runFilesScenario(t, func() (string, func()) { return startStoppable(t, cfg) })
}

// TestFilesDistributed runs it on PostgreSQL, NATS (object store for the
// blobs), Elasticsearch and Redis; the restart is a new process on the
// same components.
func TestFilesDistributed(t *testing.T) {
	configFor, bus := isolatedDistributed(t, "files")
	cfg := configFor(TargetAll)
	filesConfig(&cfg)
	runFilesScenario(t, func() (string, func()) { return startStoppable(t, cfg) })
	// The files went to the bucket of the installation's blobs.prefix (a
	// shared bucket would let another installation's clean-up remove them).
	obs, err := bus.JetStream().ObjectStore(t.Context(), natsobj.BucketName(cfg.Blobs.Prefix))
	if err != nil {
		t.Fatalf("bucket of blobs.prefix %q: %v", cfg.Blobs.Prefix, err)
	}
	list, err := obs.List(t.Context())
	stored := 0
	for _, oi := range list {
		if strings.HasPrefix(oi.Name, "files/") && !oi.Deleted {
			stored++
		}
	}
	if err != nil || stored == 0 {
		t.Errorf("bucket %s holds %d files: %v", natsobj.BucketName(cfg.Blobs.Prefix), stored, err)
	}
}

// startStoppable runs cfg until stop is called (or the test ends).
func startStoppable(t *testing.T, cfg Config) (string, func()) {
	t.Helper()
	srv, _, stop := startLoggedStop(t, cfg)
	return "http://" + srv.HTTPAddr(), stop
}

// multipartBody is a form with the fields (name, value pairs) and, unless
// file is nil, a file part named fileField.
func multipartBody(t *testing.T, fileField string, file []byte, fields ...string) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		if err := mw.WriteField(fields[i], fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if file != nil {
		fw, err := mw.CreateFormFile(fileField, "upload.bin")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(file)
	}
	_ = mw.Close()
	return &buf, mw.FormDataContentType()
}

type uploadResult struct {
	Size      int64   `json:"size"`
	Token     *string `json:"token"`
	Extension string  `json:"extension"`
	GUID      *string `json:"guid"`
	Created   *bool   `json:"created"`
}

type filesClient struct {
	t    *testing.T
	base string
	doc  *openapitest.Document
	// rendering, when set, validates the Rendering exchanges.
	rendering *servedDoc
}

// send does one request as the administrator; with a document it checks
// the request and the response against it: Management paths against
// NovaDB's document, Rendering paths against the served Rendering
// document (Delivery's file operations are checked by the tests against
// their operation tables).
func (c filesClient) send(method, path string, body io.Reader, contentType string, hdr ...string) (*http.Response, []byte) {
	c.t.Helper()
	var reqBody []byte
	if body != nil {
		var err error
		if reqBody, err = io.ReadAll(body); err != nil {
			c.t.Fatal(err)
		}
		body = bytes.NewReader(reqBody)
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.SetBasicAuth("admin", "test-password")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.doc != nil && strings.HasPrefix(path, "/apis/cms/v1/") {
		c.validate(req, reqBody, resp, b)
	}
	if c.rendering != nil && strings.HasPrefix(path, "/apis/rendering/v1/") {
		c.rendering.validate(c.t, req, reqBody, resp, b)
	}
	return resp, b
}

// validate checks an exchange of the Management group against its
// document: the request (method, path, parameters, content type; the
// validator does not look into multipart bodies) and the response.
func (c filesClient) validate(req *http.Request, reqBody []byte, resp *http.Response, b []byte) {
	c.t.Helper()
	if err := c.doc.ValidateRequest(req, reqBody); err != nil {
		c.t.Errorf("%s %s: the test sends a request the document rejects: %v", req.Method, req.URL.Path, err)
	}
	// The document has no 416: that answer is checked by the test.
	if resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
		return
	}
	vresp := *resp
	vresp.Header = resp.Header.Clone()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotModified:
		// ProblemDetails, validated as they are.
	case len(b) == 0:
		// An empty answer (304, the 200 of a DELETE) carries no content
		// type (docs/api-reference.md); the document declares
		// octet-stream for them: the status and the empty body are
		// checked against that.
		vresp.Header.Set("Content-Type", "application/octet-stream")
	case strings.HasPrefix(req.URL.Path, "/apis/cms/v1/files/"):
		// The document types file bytes as application/octet-stream;
		// the server sends the extension's media type.
		vresp.Header.Set("Content-Type", "application/octet-stream")
	}
	if err := c.doc.ValidateResponse(req, reqBody, &vresp, b); err != nil {
		c.t.Errorf("%s %s: response breaks the document: %v", req.Method, req.URL.Path, err)
	}
}

func (c filesClient) upload(method, path string, wantStatus int, file []byte, fields ...string) uploadResult {
	c.t.Helper()
	return c.uploadPart("File", method, path, wantStatus, file, fields...)
}

// uploadPart is upload with the file part named fileField.
func (c filesClient) uploadPart(fileField, method, path string, wantStatus int, file []byte, fields ...string) uploadResult {
	c.t.Helper()
	body, ct := multipartBody(c.t, fileField, file, fields...)
	resp, b := c.send(method, path, body, ct)
	if resp.StatusCode != wantStatus {
		c.t.Fatalf("%s %s = %d, want %d: %s", method, path, resp.StatusCode, wantStatus, b)
	}
	var r uploadResult
	if wantStatus == http.StatusOK {
		if err := json.Unmarshal(b, &r); err != nil {
			c.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	} else if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		c.t.Errorf("%s %s = %d with %q, want a ProblemDetails", method, path, resp.StatusCode, ct)
	}
	return r
}

func (c filesClient) get(path string, want int, hdr ...string) (*http.Response, []byte) {
	c.t.Helper()
	resp, b := c.send(http.MethodGet, path, nil, "", hdr...)
	if resp.StatusCode != want {
		c.t.Fatalf("GET %s %v = %d, want %d: %s", path, hdr, resp.StatusCode, want, b)
	}
	return resp, b
}

func managementDoc(t *testing.T) *openapitest.Document {
	t.Helper()
	b, err := os.ReadFile("../../management/testdata/cms-6.0.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapitest.Load(b, openapitest.WithContentTypeAlias("application/problem+json", "application/json"))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func runFilesScenario(t *testing.T, start func() (string, func())) {
	base, stop := start()
	rendering := loadRenderingDoc(t)
	c := filesClient{t: t, base: base, doc: managementDoc(t), rendering: &rendering}
	data := make([]byte, 2*filesChunkLimit+777)
	_, _ = rand.Read(data)
	parts := [][]byte{data[:filesChunkLimit], data[filesChunkLimit : 2*filesChunkLimit], data[2*filesChunkLimit:]}

	// Three chunks; the lower-case spellings and an extension without
	// the dot are accepted.
	r := c.uploadPart("file", http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, parts[0], "extension", "png", "commit", "false")
	if r.Token == nil || r.Size != filesChunkLimit || r.Extension != ".png" || r.GUID != nil || r.Created != nil {
		t.Fatalf("first chunk: %+v", r)
	}
	token := *r.Token
	r = c.upload(http.MethodPut, "/apis/cms/v1/fileUpload/"+token, http.StatusOK, parts[1], "Commit", "false")
	if r.Size != 2*filesChunkLimit {
		t.Fatalf("second chunk: %+v", r)
	}
	stop() // the upload survives a restart
	base, _ = start()
	c.base = base
	r = c.upload(http.MethodPut, "/apis/cms/v1/fileUpload/"+token, http.StatusOK, parts[2], "Commit", "true")
	sum := md5.Sum(data)
	h := hex.EncodeToString(sum[:])
	guid := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	if r.Size != int64(len(data)) || r.GUID == nil || *r.GUID != guid || r.Created == nil || !*r.Created || r.Extension != ".png" {
		t.Fatalf("commit: %+v, want guid %s", r, guid)
	}
	name := guid + ".png"

	// Full reads in the three groups, by GUID and 32-hex names.
	for _, path := range []string{"/apis/cms/v1/files/" + name, "/apis/cms/v1/files/" + h + ".png",
		"/delivery/api/files/" + name, "/delivery/api/files/" + strings.ToUpper(h) + ".png",
		"/apis/rendering/v1/files/" + name, "/apis/rendering/v1/files/" + h + ".png",
		"/apis/rendering/v1/binaries/" + guid, "/apis/rendering/v1/binaries/" + h} {
		resp, b := c.get(path, http.StatusOK)
		if !bytes.Equal(b, data) {
			t.Fatalf("GET %s: %d bytes, not the upload", path, len(b))
		}
		wantType := "image/png"
		if strings.Contains(path, "/binaries/") {
			wantType = "application/octet-stream"
		}
		if resp.Header.Get("Content-Type") != wantType || resp.Header.Get("ETag") != `"`+h+`"` ||
			resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s headers: %v", path, resp.Header)
		}
		resp, b = c.get(path, http.StatusNotModified, "If-None-Match", `"`+h+`"`)
		if len(b) != 0 || resp.Header.Get("ETag") != `"`+h+`"` {
			t.Errorf("GET %s If-None-Match: %d bytes, headers %v", path, len(b), resp.Header)
		}
	}
	// Ranges.
	path := "/apis/cms/v1/files/" + name
	resp, b := c.get(path, http.StatusPartialContent, "Range", "bytes=10-19")
	if !bytes.Equal(b, data[10:20]) || resp.Header.Get("Content-Range") != "bytes 10-19/"+strconv.Itoa(len(data)) {
		t.Errorf("range 10-19: %q %v", b, resp.Header)
	}
	_, b = c.get("/delivery/api/files/"+name, http.StatusPartialContent, "Range", "bytes=-5")
	if !bytes.Equal(b, data[len(data)-5:]) {
		t.Errorf("suffix range: %x", b)
	}
	resp, b = c.get(path, http.StatusPartialContent, "Range", "bytes=0-1,100-101")
	mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "multipart/byteranges" {
		t.Fatalf("multi-range content type %q", resp.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(b), params["boundary"])
	for _, want := range [][]byte{data[0:2], data[100:102]} {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(p)
		if !bytes.Equal(got, want) {
			t.Errorf("multi-range part %x, want %x", got, want)
		}
	}
	resp, _ = c.get(path, http.StatusRequestedRangeNotSatisfiable, "Range", "bytes=999999999-")
	if resp.Header.Get("Content-Range") != "bytes */"+strconv.Itoa(len(data)) {
		t.Errorf("416 Content-Range %q", resp.Header.Get("Content-Range"))
	}
	// The same through Rendering, whose document declares 206 (and 416
	// as ProblemDetails).
	if _, b = c.get("/apis/rendering/v1/files/"+name, http.StatusPartialContent, "Range", "bytes=10-19"); !bytes.Equal(b, data[10:20]) {
		t.Errorf("Rendering range 10-19: %q", b)
	}
	c.get("/apis/rendering/v1/files/"+name, http.StatusRequestedRangeNotSatisfiable, "Range", "bytes=999999999-")

	// The same content again: stored once, created false.
	r = c.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, data[:10], "Extension", ".txt", "Commit", "true")
	unreferenced := *r.GUID + ".txt"
	r = c.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, data[:10], "Extension", ".bin", "Commit", "true")
	if r.Created == nil || *r.Created {
		t.Errorf("the same content again: %+v, want created false", r)
	}

	// Limits and errors, all ProblemDetails.
	c.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusRequestEntityTooLarge, make([]byte, filesChunkLimit+1), "Extension", "bin")
	r = c.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusOK, make([]byte, filesChunkLimit), "Extension", "bin")
	for range 2 {
		c.upload(http.MethodPut, "/apis/cms/v1/fileUpload/"+*r.Token, http.StatusOK, make([]byte, filesChunkLimit))
	}
	c.upload(http.MethodPut, "/apis/cms/v1/fileUpload/"+*r.Token, http.StatusUnprocessableEntity, []byte("x"), "Commit", "true")
	c.upload(http.MethodPost, "/apis/cms/v1/fileUpload", http.StatusBadRequest, nil, "Extension", "bin")
	c.upload(http.MethodPut, "/apis/cms/v1/fileUpload/"+strings.Repeat("0", 32), http.StatusBadRequest, []byte("x"))
	if resp, b := c.send(http.MethodDelete, "/apis/cms/v1/fileUpload/"+*r.Token, nil, ""); resp.StatusCode != http.StatusOK || len(b) != 0 {
		t.Errorf("DELETE upload = %d %s", resp.StatusCode, b)
	}
	c.upload(http.MethodPut, "/apis/cms/v1/fileUpload/"+*r.Token, http.StatusBadRequest, []byte("x"))
	if resp, _ := c.send(http.MethodDelete, "/apis/cms/v1/fileUpload/"+*r.Token, nil, ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("DELETE of a cancelled upload = %d, want 400", resp.StatusCode)
	}
	for _, bad := range []string{"x.png", h + "%00.png", h + "..png", h + ".p%5Cg", h + "." + strings.Repeat("x", 80), h + "%0A.png"} {
		for _, prefix := range []string{"/apis/cms/v1/files/", "/delivery/api/files/", "/apis/rendering/v1/files/"} {
			c.get(prefix+bad, http.StatusBadRequest)
		}
	}
	// An encoded slash makes more path segments and ".." is resolved
	// before routing: no operation is there.
	for _, bad := range []string{"..%2F..%2Fetc%2Fpasswd", h + ".p%2Fg", "..", "%2e%2e"} {
		if resp, b := c.send(http.MethodGet, "/apis/cms/v1/files/"+bad, nil, ""); resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET files/%s = %d: %s", bad, resp.StatusCode, b)
		}
	}
	c.get("/apis/cms/v1/files/"+strings.Repeat("0", 32)+".png", http.StatusNotFound)

	// A binary proxy object: a type with 5009 = true and an object with
	// the hash (11000) and the extension (11005), read through Delivery
	// and Rendering once indexed.
	admin := httpClient{t, base, "admin", "test-password"}
	w := admin.create(obj(0, "picture", v(1000, 201, "Picture"), v(5009, 0, true)))
	pictureType := w.CreatedObjectIDs[0]
	// A BPO naming content no upload committed is refused.
	unknown := obj(w.CreatedObjectIDs[0], "", v(11000, 0, strings.Repeat("0", 32)), v(11005, 0, ".png"))
	if r := admin.do(http.MethodPost, "/apis/cms/v1/branches/4/objects", `{"objects":[`+unknown+`]}`); r.code != http.StatusUnprocessableEntity {
		t.Errorf("BPO with an unknown hash = %d, want 422: %s", r.code, r.body)
	}
	w = admin.create(obj(w.CreatedObjectIDs[0], "logo", v(1000, 201, "Logo"), v(11000, 0, guid), v(11005, 0, ".png")))
	bpo := strconv.FormatInt(w.CreatedObjectIDs[0], 10)
	minVersion := strconv.FormatInt(w.Transaction.ID, 10)
	for _, path := range []string{"/delivery/api/branches/4/files/" + bpo, "/delivery/api/branches/4/files/logo", "/apis/rendering/v1/branches/4/files/" + bpo} {
		var resp *http.Response
		var b []byte
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			resp, b = c.send(http.MethodGet, path, nil, "", "X-Cms-Min-Version", minVersion, "X-Cms-Max-Wait", "20s")
			if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
				break
			}
		}
		if resp.StatusCode != http.StatusOK || !bytes.Equal(b, data) || resp.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("GET %s = %d, %d bytes, %v", path, resp.StatusCode, len(b), resp.Header)
		}
	}
	c.get("/delivery/api/branches/4/files/999999", http.StatusNotFound)
	// Delivery renders the file fields under their ApiIdentifiers: a site
	// builds files/{externalBinaryMD5}{externalBinaryFileExtension}.
	_, b = c.get("/delivery/api/branches/4/objects/logo?props=1", http.StatusOK)
	var one struct {
		Obj struct {
			Props map[string]any `json:"props"`
		} `json:"obj"`
	}
	if err := json.Unmarshal(b, &one); err != nil {
		t.Fatal(err)
	}
	if one.Obj.Props["externalBinaryMD5"] != guid || one.Obj.Props["externalBinaryFileExtension"] != ".png" {
		t.Errorf("Delivery props of the BPO: %s", b)
	}
	c.get("/delivery/api/files/"+guid+".png", http.StatusOK)
	runThumbnailScenario(t, c, admin, pictureType)
	runDatabaseBinaryScenario(t, c, admin, bpo, data)
	runExposureScenario(c)
	runCleanupScenario(t, c, admin, name, unreferenced)
}
