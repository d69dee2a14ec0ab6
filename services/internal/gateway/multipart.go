package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"strings"

	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// MultipartChunkSize is the largest file chunk sent in one stream message.
const MultipartChunkSize = 256 << 10

// MultipartLimits bound an upload before it reaches the service.
type MultipartLimits struct {
	// MaxRequestBytes caps the whole multipart body (413 beyond it).
	MaxRequestBytes int64
}

// RegisterMultipart serves every client-streaming RPC of service that carries
// the cms.options.v1.multipart option. The request message must have a oneof
// of two message fields: the header (path parameters and plain form fields,
// matched by JSON or proto name) and the chunk (a bytes field for file data,
// optional string fields for the file name and content type). The form's
// files are streamed in chunks over conn, so interceptors see the call.
func RegisterMultipart(mux *runtime.ServeMux, conn grpc.ClientConnInterface, service protoreflect.ServiceDescriptor, limits MultipartLimits) error {
	methods := service.Methods()
	for i := 0; i < methods.Len(); i++ {
		md := methods.Get(i)
		opts, _ := md.Options().(*descriptorpb.MethodOptions)
		if opts == nil || !proto.HasExtension(opts, optionsv1.E_Multipart) {
			continue
		}
		route := proto.GetExtension(opts, optionsv1.E_Multipart).(*optionsv1.MultipartRoute)
		up, err := newUpload(md, route.GetPath())
		if err != nil {
			return err
		}
		h := func(w http.ResponseWriter, r *http.Request, params map[string]string) {
			up.serve(mux, conn, limits, w, r, params)
		}
		if err := mux.HandlePath(route.GetMethod(), route.GetPath(), h); err != nil {
			return fmt.Errorf("multipart route for %s: %w", md.FullName(), err)
		}
	}
	return nil
}

type upload struct {
	fullMethod  string
	path        string
	req, resp   protoreflect.MessageType
	header      protoreflect.FieldDescriptor
	chunk       protoreflect.FieldDescriptor
	data        protoreflect.FieldDescriptor
	fileName    protoreflect.FieldDescriptor
	contentType protoreflect.FieldDescriptor
}

func newUpload(md protoreflect.MethodDescriptor, path string) (*upload, error) {
	if !md.IsStreamingClient() || md.IsStreamingServer() {
		return nil, fmt.Errorf("%s: multipart needs a client-streaming RPC", md.FullName())
	}
	req, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
	if err != nil {
		return nil, err
	}
	resp, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	if err != nil {
		return nil, err
	}
	u := &upload{
		fullMethod: fmt.Sprintf("/%s/%s", md.Parent().FullName(), md.Name()),
		path:       path, req: req, resp: resp,
	}
	oneofs := md.Input().Oneofs()
	for i := 0; i < oneofs.Len(); i++ {
		fields := oneofs.Get(i).Fields()
		for j := 0; j < fields.Len(); j++ {
			f := fields.Get(j)
			if f.Message() == nil {
				continue
			}
			if data := firstOfKind(f.Message(), protoreflect.BytesKind); data != nil {
				u.chunk, u.data = f, data
				u.fileName = fieldNamed(f.Message(), "file_name", "filename", "name")
				u.contentType = fieldNamed(f.Message(), "content_type", "mime_type")
			} else {
				u.header = f
			}
		}
	}
	if u.chunk == nil || u.header == nil {
		return nil, fmt.Errorf("%s: request needs a oneof of a header message and a chunk message with a bytes field", md.Input().FullName())
	}
	return u, nil
}

func firstOfKind(md protoreflect.MessageDescriptor, k protoreflect.Kind) protoreflect.FieldDescriptor {
	for i := 0; i < md.Fields().Len(); i++ {
		if f := md.Fields().Get(i); f.Kind() == k && !f.IsList() {
			return f
		}
	}
	return nil
}

func fieldNamed(md protoreflect.MessageDescriptor, names ...string) protoreflect.FieldDescriptor {
	for _, n := range names {
		if f := md.Fields().ByName(protoreflect.Name(n)); f != nil && f.Kind() == protoreflect.StringKind {
			return f
		}
	}
	return nil
}

func (u *upload) serve(mux *runtime.ServeMux, conn grpc.ClientConnInterface, limits MultipartLimits, w http.ResponseWriter, r *http.Request, params map[string]string) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	fail := func(err error) { ErrorHandler(ctx, mux, WireJSON{}, w, r, err) }
	if limits.MaxRequestBytes > 0 {
		if r.ContentLength > limits.MaxRequestBytes {
			fail(tooLarge(limits.MaxRequestBytes))
			return
		}
		if !RaiseBodyLimit(w, r, limits.MaxRequestBytes) {
			r.Body = http.MaxBytesReader(w, r.Body, limits.MaxRequestBytes)
		}
	} else {
		RaiseBodyLimit(w, r, math.MaxInt64-1)
	}
	mediaType, mparams, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/form-data" || mparams["boundary"] == "" {
		fail(&runtime.HTTPStatusError{HTTPStatus: http.StatusUnsupportedMediaType,
			Err: status.Error(codes.InvalidArgument, "the body must be multipart/form-data with a boundary")})
		return
	}
	actx, err := runtime.AnnotateContext(ctx, mux, r, u.fullMethod, runtime.WithHTTPPathPattern(u.path))
	if err != nil {
		fail(err)
		return
	}
	var header, trailer metadata.MD
	stream, err := conn.NewStream(actx, &grpc.StreamDesc{ClientStreams: true}, u.fullMethod,
		grpc.Header(&header), grpc.Trailer(&trailer))
	if err != nil {
		fail(err)
		return
	}
	sendErr := u.send(stream, r, params, limits)
	resp := u.resp.New().Interface()
	var recvErr error
	if sendErr == nil {
		recvErr = stream.RecvMsg(resp)
	} else if errors.Is(sendErr, io.EOF) {
		// The server ended the call early; its status is on RecvMsg.
		sendErr, recvErr = nil, stream.RecvMsg(resp)
	}
	sctx := runtime.NewServerMetadataContext(ctx, runtime.ServerMetadata{HeaderMD: header, TrailerMD: trailer})
	switch {
	case sendErr != nil:
		cancel()
		fail(sendErr)
	case recvErr != nil:
		ErrorHandler(sctx, mux, WireJSON{}, w, r, recvErr)
	default:
		runtime.ForwardResponseMessage(sctx, mux, NewBinary(), w, r, resp, forwardHTTPStatus)
	}
}

// send streams the header message (path parameters and every plain form
// field) and then the first file part in chunks. The form is read as it
// arrives: when every form field of the header has come before the file
// part (the usual order), the file is streamed straight from the request;
// otherwise it is spooled to a temporary file (removed afterwards) until
// the rest of the form has been read. Later file parts and repeated fields
// are ignored (the first counts). A body that ends early or breaks a limit
// fails the call: the stream is never closed as if complete.
func (u *upload) send(stream grpc.ClientStream, r *http.Request, params map[string]string, limits MultipartLimits) error {
	mr, err := r.MultipartReader()
	if err != nil {
		return multipartError(err, limits)
	}
	hdr := u.req.New()
	hmsg := hdr.Mutable(u.header).Message()
	for k, v := range params {
		if err := setScalar(hmsg, k, v); err != nil {
			return err
		}
	}
	missing := formFields(hmsg.Descriptor(), params)
	var spooled *spooledPart
	defer func() { spooled.remove() }()
	fileSent := false
	for parts := 0; ; parts++ {
		part, err := mr.NextPart()
		if err == io.EOF { //nolint:errorlint // only the bare io.EOF is the final boundary; a wrapped one is a cut-off body
			break
		}
		if err != nil {
			return multipartError(err, limits)
		}
		if parts >= maxFormParts {
			return status.Errorf(codes.InvalidArgument, "the form has more than %d parts", maxFormParts)
		}
		if part.FileName() == "" { // a plain field
			name := part.FormName()
			value, err := io.ReadAll(io.LimitReader(part, maxFieldBytes+1))
			if err != nil {
				return multipartError(err, limits)
			}
			if len(value) > maxFieldBytes {
				return status.Errorf(codes.InvalidArgument, "form field %q is longer than %d bytes", name, maxFieldBytes)
			}
			if f := fieldByFormName(hmsg.Descriptor(), name); f != nil && missing[f.Number()] && !fileSent {
				delete(missing, f.Number())
				if err := setScalar(hmsg, name, string(value)); err != nil {
					return err
				}
			}
			continue
		}
		if fileSent || spooled != nil {
			continue // only the first file part counts
		}
		if len(missing) > 0 {
			if spooled, err = spool(part); err != nil {
				return multipartError(err, limits)
			}
			continue
		}
		if err := stream.SendMsg(hdr.Interface()); err != nil {
			return err
		}
		fileSent = true
		if err := u.sendFile(stream, part, part.FileName(), part.Header.Get("Content-Type")); err != nil {
			return sendFileError(err, limits)
		}
	}
	if fileSent {
		return stream.CloseSend()
	}
	if err := stream.SendMsg(hdr.Interface()); err != nil {
		return err
	}
	if spooled == nil {
		return stream.CloseSend() // a form without a file: the service decides
	}
	if _, err := spooled.f.Seek(0, io.SeekStart); err != nil {
		return status.Errorf(codes.Internal, "reading the spooled file part: %v", err)
	}
	if err := u.sendFile(stream, spooled.f, spooled.name, spooled.contentType); err != nil {
		return sendFileError(err, limits)
	}
	return stream.CloseSend()
}

// maxFormParts and maxFieldBytes bound a multipart form: its parts, and
// the value of a plain field (400 beyond either).
const (
	maxFormParts  = 1000
	maxFieldBytes = 64 << 10
)

// formFields are the scalar fields of the header md that the form may
// set: those no path parameter in params has set.
func formFields(md protoreflect.MessageDescriptor, params map[string]string) map[protoreflect.FieldNumber]bool {
	out := map[protoreflect.FieldNumber]bool{}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		if f := fields.Get(i); !f.IsList() && !f.IsMap() && f.Message() == nil {
			out[f.Number()] = true
		}
	}
	for k := range params {
		if f := fieldByFormName(md, k); f != nil {
			delete(out, f.Number())
		}
	}
	return out
}

// spooledPart is a file part kept in a temporary file while the rest of
// the form is read.
type spooledPart struct {
	f                 *os.File
	name, contentType string
}

func spool(part *multipart.Part) (*spooledPart, error) {
	f, err := os.CreateTemp("", "cms-upload-*")
	if err != nil {
		return nil, err
	}
	sp := &spooledPart{f: f, name: part.FileName(), contentType: part.Header.Get("Content-Type")}
	if _, err := io.Copy(f, part); err != nil {
		sp.remove()
		return nil, err
	}
	return sp, nil
}

func (sp *spooledPart) remove() {
	if sp == nil {
		return
	}
	_ = sp.f.Close()
	_ = os.Remove(sp.f.Name())
}

// readError is a failure reading the file data (not sending it).
type readError struct{ err error }

func (e readError) Error() string { return e.err.Error() }
func (e readError) Unwrap() error { return e.err }

// sendFileError maps an error of sendFile: reading the body is the
// client's (multipartError), sending returns the stream's error as it is
// (io.EOF when the service ended the call early: its status follows).
func sendFileError(err error, limits MultipartLimits) error {
	var re readError
	if errors.As(err, &re) {
		return multipartError(re.err, limits)
	}
	return err
}

// sendFile streams the file data from r in chunk messages, the first with
// its name and content type; read errors come back as readError (a file
// part cut off by the end of the body is io.ErrUnexpectedEOF), send
// errors as they are.
func (u *upload) sendFile(stream grpc.ClientStream, r io.Reader, name, contentType string) error {
	buf := make([]byte, MultipartChunkSize)
	first := true
	for {
		n, err := fill(r, buf)
		if n > 0 || first {
			msg := u.req.New()
			c := msg.Mutable(u.chunk).Message()
			c.Set(u.data, protoreflect.ValueOfBytes(append([]byte(nil), buf[:n]...)))
			if first {
				if u.fileName != nil {
					c.Set(u.fileName, protoreflect.ValueOfString(name))
				}
				if u.contentType != nil {
					c.Set(u.contentType, protoreflect.ValueOfString(contentType))
				}
				first = false
			}
			if serr := stream.SendMsg(msg.Interface()); serr != nil {
				return serr
			}
		}
		if err == io.EOF { //nolint:errorlint // fill returns r's errors unwrapped
			return nil
		}
		if err != nil {
			return readError{err}
		}
	}
}

// fill reads from r until buf is full (nil error) or r fails: io.EOF at
// its end, any other error as it is.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func multipartError(err error, limits MultipartLimits) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(limits.MaxRequestBytes)
	}
	return status.Errorf(codes.InvalidArgument, "malformed multipart body: %v", err)
}

func tooLarge(limit int64) error {
	return WithReason(codes.ResourceExhausted, ReasonPayloadTooLarge,
		fmt.Sprintf("the upload exceeds the limit of %d bytes", limit), nil)
}

// setScalar sets the field of m named name (its JSON or proto name, in any
// case: NovaDB forms say "Extension") from text. Unknown form fields are
// ignored, like unknown JSON fields.
func setScalar(m protoreflect.Message, name, text string) error {
	f := fieldByFormName(m.Descriptor(), name)
	if f == nil || f.IsList() || f.IsMap() {
		return nil
	}
	bad := func() error {
		return status.Errorf(codes.InvalidArgument, "form field %q: %q is not a valid %s", name, text, f.Kind())
	}
	switch f.Kind() {
	case protoreflect.StringKind:
		m.Set(f, protoreflect.ValueOfString(text))
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return bad()
		}
		m.Set(f, protoreflect.ValueOfBool(b))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(text, 10, 32)
		if err != nil {
			return bad()
		}
		m.Set(f, protoreflect.ValueOfInt32(int32(n)))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return bad()
		}
		m.Set(f, protoreflect.ValueOfInt64(n))
	case protoreflect.DoubleKind:
		x, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return bad()
		}
		m.Set(f, protoreflect.ValueOfFloat64(x))
	}
	return nil
}

func fieldByFormName(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		if strings.EqualFold(f.JSONName(), name) || strings.EqualFold(string(f.Name()), name) {
			return f
		}
	}
	return nil
}
