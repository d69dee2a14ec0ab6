package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// uploads records what StartUpload and ContinueUpload receive.
type uploads struct {
	managementv1.UnimplementedManagementServiceServer
}

func (uploads) StartUpload(stream grpc.ClientStreamingServer[managementv1.StartUploadRequest, managementv1.FileUploadResult]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	hdr := first.GetHeader()
	if hdr == nil {
		return status.Error(codes.InvalidArgument, "the first message must be the header")
	}
	h := sha256.New()
	var size int64
	var name string
	for {
		m, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if m.GetChunk().GetFileName() != "" {
			name = m.GetChunk().GetFileName()
		}
		size += int64(len(m.GetChunk().GetData()))
		h.Write(m.GetChunk().GetData())
	}
	if size > 1<<20 {
		return WithReason(codes.InvalidArgument, ReasonUnprocessable, "the file exceeds the total size limit", nil)
	}
	_ = SetHTTPStatus(stream.Context(), http.StatusCreated)
	return stream.SendAndClose(&managementv1.FileUploadResult{
		Size: size, Extension: hdr.GetExtension(), Created: proto.Bool(hdr.GetCommit()),
		Token: proto.String(name + ":" + hex.EncodeToString(h.Sum(nil))),
	})
}

func (uploads) ContinueUpload(stream grpc.ClientStreamingServer[managementv1.ContinueUploadRequest, managementv1.FileUploadResult]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	return stream.SendAndClose(&managementv1.FileUploadResult{Token: proto.String(first.GetHeader().GetToken())})
}

func newUploadServer(t *testing.T, limit int64) string {
	t.Helper()
	conn := backend(t, func(srv *grpc.Server) { managementv1.RegisterManagementServiceServer(srv, uploads{}) })
	mux := NewServeMux()
	sd := managementv1.File_cms_management_v1_service_proto.Services().ByName("ManagementService")
	if err := RegisterMultipart(mux, conn, sd, MultipartLimits{MaxRequestBytes: limit}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL
}

func form(t *testing.T, fields [][2]string, fileName string, data []byte, fileFirst bool) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	writeFile := func() {
		if fileName == "" {
			return
		}
		fw, err := mw.CreateFormFile("File", fileName)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(data)
	}
	if fileFirst {
		writeFile()
	}
	for _, f := range fields {
		_ = mw.WriteField(f[0], f[1])
	}
	if !fileFirst {
		writeFile()
	}
	_ = mw.Close()
	return &buf, mw.FormDataContentType()
}

func post(t *testing.T, method, url string, body io.Reader, ct string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	req.Header.Set("Content-Type", ct)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMultipartUploadStreamsFormIntoRPC(t *testing.T) {
	base := newUploadServer(t, 8<<20)
	data := bytes.Repeat([]byte("0123456789abcdef"), 40_000) // 640 KB: several chunks
	sum := sha256.Sum256(data)
	for _, fileFirst := range []bool{false, true} {
		body, ct := form(t, [][2]string{{"Extension", ".pdf"}, {"Commit", "true"}}, "report.pdf", data, fileFirst)
		code, got := post(t, http.MethodPost, base+"/apis/cms/v1/fileUpload", body, ct)
		if code != http.StatusCreated {
			t.Fatalf("fileFirst=%v: %d %s", fileFirst, code, got)
		}
		var res struct {
			Size      int64  `json:"size"`
			Token     string `json:"token"`
			Extension string `json:"extension"`
			Created   bool   `json:"created"`
		}
		if err := json.Unmarshal([]byte(got), &res); err != nil {
			t.Fatal(err)
		}
		if res.Size != int64(len(data)) || res.Extension != ".pdf" || !res.Created ||
			res.Token != "report.pdf:"+hex.EncodeToString(sum[:]) {
			t.Fatalf("fileFirst=%v: service received %+v", fileFirst, res)
		}
	}
	// Path parameters reach the header message.
	body, ct := form(t, nil, "x.bin", []byte("x"), false)
	if code, got := post(t, http.MethodPut, base+"/apis/cms/v1/fileUpload/tok-1", body, ct); code != 200 || !strings.Contains(got, `"token":"tok-1"`) {
		t.Fatalf("continue: %d %s", code, got)
	}
}

func TestMultipartLimitsAndBadInput(t *testing.T) {
	base := newUploadServer(t, 2<<20)
	// Over the request limit: 413 from the gateway, before the service.
	body, ct := form(t, nil, "big.bin", make([]byte, 3<<20), false)
	if code, got := post(t, http.MethodPost, base+"/apis/cms/v1/fileUpload", body, ct); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("over the request limit: %d %s", code, got)
	}
	// Over the service's total limit: 422 from the service.
	body, ct = form(t, nil, "mid.bin", make([]byte, 1536<<10), false)
	if code, got := post(t, http.MethodPost, base+"/apis/cms/v1/fileUpload", body, ct); code != http.StatusUnprocessableEntity {
		t.Fatalf("over the service limit: %d %s", code, got)
	}
	// Not multipart: 415.
	if code, got := post(t, http.MethodPost, base+"/apis/cms/v1/fileUpload", strings.NewReader("{}"), "application/json"); code != http.StatusUnsupportedMediaType || !strings.Contains(got, "multipart/form-data") {
		t.Fatalf("json body: %d %s", code, got)
	}
	// Truncated multipart body: 400.
	if code, got := post(t, http.MethodPost, base+"/apis/cms/v1/fileUpload", strings.NewReader("--b\r\nContent-Disposition: form-data; name=\"File\"; filename=\"a\"\r\n\r\nabc"), "multipart/form-data; boundary=b"); code != http.StatusBadRequest {
		t.Fatalf("truncated: %d %s", code, got)
	}
	// Cut off inside a file part that is streamed (the fields came first):
	// 400, and the service never sees the stream end as complete.
	body, ct = form(t, [][2]string{{"Extension", "bin"}, {"Commit", "true"}}, "cut.bin", make([]byte, 1<<20), false)
	whole, _ := io.ReadAll(body)
	for _, cut := range []int{len(whole) - 100, len(whole) / 2, len(whole) - 3} {
		if code, got := post(t, http.MethodPost, base+"/apis/cms/v1/fileUpload", bytes.NewReader(whole[:cut]), ct); code != http.StatusBadRequest {
			t.Fatalf("cut off at %d of %d: %d %s", cut, len(whole), code, got)
		}
	}
	// A bad scalar form value: 400 naming the field.
	body, ct = form(t, [][2]string{{"Commit", "maybe"}}, "a.txt", []byte("a"), false)
	if code, got := post(t, http.MethodPost, base+"/apis/cms/v1/fileUpload", body, ct); code != http.StatusBadRequest || !strings.Contains(got, "Commit") {
		t.Fatalf("bad bool: %d %s", code, got)
	}
}
