package branchfiles

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client is a Management API client (HTTP Basic) of one installation.
type Client struct {
	// URL is the HTTP root (http://localhost:8080).
	URL            string
	User, Password string
	// HTTP is the client to send with; nil = defaultHTTP (deadlines on
	// connecting and on each answer's headers, so a stalled server fails the
	// command instead of hanging it).
	HTTP *http.Client
}

// defaultHTTP bounds connecting (10 s) and waiting for an answer's headers
// (2 min: a batch write of 100 objects on a loaded server); bodies stream.
var defaultHTTP = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	TLSHandshakeTimeout:   10 * time.Second,
	ResponseHeaderTimeout: 2 * time.Minute,
	MaxIdleConnsPerHost:   4,
}}

// Page sizes and batch bounds of the client.
const (
	listTake = 1000 // content.MaxTake
	// writeBatchObjects and writeBatchBytes bound one write request.
	writeBatchObjects = 100
	writeBatchBytes   = 3 << 20
	getBatchIDs       = 100
	// uploadChunkBytes is one upload chunk (files.maxChunkBytes is 32 MiB).
	uploadChunkBytes = 16 << 20
)

// apiObject is a CmsObject of the wire.
type apiObject struct {
	Meta   apiMeta    `json:"meta"`
	Values []apiValue `json:"values"`
}

type apiMeta struct {
	ID            int64  `json:"id,omitempty"`
	GUID          string `json:"guid,omitempty"`
	APIIdentifier string `json:"apiIdentifier,omitempty"`
	TypeRef       *int64 `json:"typeRef,omitempty"`
	Deleted       *bool  `json:"deleted,omitempty"`
}

type apiValue struct {
	Attribute   int64           `json:"attribute"`
	Variant     int64           `json:"variant"`
	Language    int64           `json:"language"`
	Value       json.RawMessage `json:"value"`
	SortReverse *int64          `json:"sortReverse,omitempty"`
	UnitRef     *int64          `json:"unitRef,omitempty"`
}

func (o apiObject) typeRef() int64 {
	if o.Meta.TypeRef == nil {
		return 0
	}
	return *o.Meta.TypeRef
}

func (o apiObject) deleted() bool { return o.Meta.Deleted != nil && *o.Meta.Deleted }

// StatusError is an answer other than 2xx.
type StatusError struct {
	Method, Path string
	Status       int
	Body         string
}

// Error names the request, the status and the answer's body.
func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, strings.TrimSpace(e.Body))
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

func (c *Client) send(ctx context.Context, method, path string, body io.Reader, contentType string, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.URL, "/")+"/apis/cms/v1"+path, body)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(c.User, c.Password)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, &StatusError{Method: method, Path: path, Status: resp.StatusCode, Body: string(b)}
	}
	return resp, nil
}

// call sends in (nil = no body) as JSON and decodes the answer into out.
func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	ct := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body, ct = bytes.NewReader(b), "application/json"
	}
	resp, err := c.send(ctx, method, path, body, ct, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	dec := json.NewDecoder(resp.Body)
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

type objectList struct {
	Continue *string     `json:"continue"`
	Objects  []apiObject `json:"objects"`
}

// typed lists every object of typ on branch (live and deleted) with the
// values the branch shows (inherited ones included).
func (c *Client) typed(ctx context.Context, branch string, typ int64) ([]apiObject, error) {
	var out []apiObject
	cont := ""
	for {
		q := url.Values{"inherited": {"true"}, "take": {strconv.Itoa(listTake)}}
		if cont != "" {
			q.Set("continue", cont)
		}
		var page objectList
		if err := c.call(ctx, http.MethodGet, fmt.Sprintf("/branches/%s/types/%d/objects?%s", url.PathEscape(branch), typ, q.Encode()), nil, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Objects...)
		if len(out) > 10*MaxObjects {
			return nil, fmt.Errorf("type %d on branch %s has more than %d objects", typ, branch, 10*MaxObjects)
		}
		if page.Continue == nil || *page.Continue == "" {
			return out, nil
		}
		cont = *page.Continue
	}
}

// objects reads the objects ids of branch (inherited values included).
func (c *Client) objects(ctx context.Context, branch string, ids []int64) ([]apiObject, error) {
	var out []apiObject
	for start := 0; start < len(ids); start += getBatchIDs {
		batch := ids[start:min(start+getBatchIDs, len(ids))]
		s := make([]string, len(batch))
		for i, id := range batch {
			s[i] = strconv.FormatInt(id, 10)
		}
		q := url.Values{"inherited": {"true"}, "ids": {strings.Join(s, ",")}, "take": {strconv.Itoa(len(batch))}}
		var page objectList
		if err := c.call(ctx, http.MethodGet, fmt.Sprintf("/branches/%s/objects?%s", url.PathEscape(branch), q.Encode()), nil, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Objects...)
	}
	return out, nil
}

// object reads one object by id, GUID or ApiIdentifier; found is false on
// 404.
func (c *Client) object(ctx context.Context, branch, ident string) (o apiObject, found bool, err error) {
	err = c.call(ctx, http.MethodGet, fmt.Sprintf("/branches/%s/objects/%s?inherited=true", url.PathEscape(branch), url.PathEscape(ident)), nil, &o)
	var se *StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return o, false, nil
	}
	return o, err == nil, err
}

type writeRequest struct {
	Comment string      `json:"comment,omitempty"`
	Objects []apiObject `json:"objects"`
}

// batches splits objs into write requests within the batch bounds.
func batches(objs []apiObject) [][]apiObject {
	var out [][]apiObject
	var cur []apiObject
	size := 0
	for _, o := range objs {
		b, _ := json.Marshal(o)
		if len(cur) > 0 && (len(cur) == writeBatchObjects || size+len(b) > writeBatchBytes) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur, size = append(cur, o), size+len(b)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// create creates objs on branch in one transaction and answers their ids.
func (c *Client) create(ctx context.Context, branch, comment string, objs []apiObject) ([]int64, error) {
	var resp struct {
		CreatedObjectIDs []int64 `json:"createdObjectIds"`
	}
	err := c.call(ctx, http.MethodPost, fmt.Sprintf("/branches/%s/objects", url.PathEscape(branch)), writeRequest{comment, objs}, &resp)
	if err == nil && len(resp.CreatedObjectIDs) != len(objs) {
		err = fmt.Errorf("created %d objects, asked for %d", len(resp.CreatedObjectIDs), len(objs))
	}
	return resp.CreatedObjectIDs, err
}

// update writes objs on branch in one transaction.
func (c *Client) update(ctx context.Context, branch, comment string, objs []apiObject) error {
	return c.call(ctx, http.MethodPatch, fmt.Sprintf("/branches/%s/objects", url.PathEscape(branch)), writeRequest{comment, objs}, nil)
}

// download copies the stored file name (GUID and extension) to w.
func (c *Client) download(ctx context.Context, name string, w io.Writer) error {
	resp, err := c.send(ctx, http.MethodGet, "/files/"+url.PathEscape(name), nil, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(w, resp.Body)
	return err
}

// hasFile reports whether the installation stores the file name.
func (c *Client) hasFile(ctx context.Context, name string) (bool, error) {
	resp, err := c.send(ctx, http.MethodGet, "/files/"+url.PathEscape(name), nil, "", http.Header{"Range": {"bytes=0-0"}})
	var se *StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return true, resp.Body.Close()
}

// upload stores r (size bytes) with extension ext in chunks and answers
// the GUID the installation stored it under.
func (c *Client) upload(ctx context.Context, ext string, r io.Reader, size int64) (string, error) {
	token := ""
	for sent := int64(0); ; {
		n := min(int64(uploadChunkBytes), size-sent)
		last := sent+n >= size
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		if token == "" {
			_ = mw.WriteField("Extension", ext)
		}
		_ = mw.WriteField("Commit", strconv.FormatBool(last))
		fw, err := mw.CreateFormFile("File", "chunk")
		if err != nil {
			return "", err
		}
		if _, err := io.CopyN(fw, r, n); err != nil {
			return "", fmt.Errorf("read file: %w", err)
		}
		if err := mw.Close(); err != nil {
			return "", err
		}
		method, path := http.MethodPost, "/fileUpload"
		if token != "" {
			method, path = http.MethodPut, "/fileUpload/"+url.PathEscape(token)
		}
		resp, err := c.send(ctx, method, path, &body, mw.FormDataContentType(), nil)
		if err != nil {
			return "", err
		}
		var res struct {
			Token *string `json:"token"`
			GUID  *string `json:"guid"`
		}
		err = json.NewDecoder(resp.Body).Decode(&res)
		_ = resp.Body.Close()
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", method, path, err)
		}
		sent += n
		if last {
			if res.GUID == nil {
				return "", fmt.Errorf("%s %s: the committed upload has no guid", method, path)
			}
			return *res.GUID, nil
		}
		if res.Token == nil {
			return "", fmt.Errorf("%s %s: no upload token", method, path)
		}
		token = *res.Token
	}
}
