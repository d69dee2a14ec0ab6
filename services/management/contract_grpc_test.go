package management_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"github.com/cmsplatform/cms/services/management"
)

// grpcBridge replays an HTTP call over gRPC, building the request message
// from the method's google.api.http rule the way the gateway does (path
// variables, query parameters by JSON name, body "*"), so one case asserts
// both the HTTP status and the gRPC code.
type grpcBridge struct {
	conn *grpc.ClientConn
}

func newGRPCBridge(t *testing.T, addr string) *grpcBridge {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &grpcBridge{conn: conn}
}

// method finds the RPC carrying operation id op.
func (g *grpcBridge) method(op string) (protoreflect.MethodDescriptor, *annotations.HttpRule, error) {
	svc := managementv1.File_cms_management_v1_service_proto.Services().ByName("ManagementService")
	for i := 0; i < svc.Methods().Len(); i++ {
		m := svc.Methods().Get(i)
		if proto.GetExtension(m.Options(), optionsv1.E_OperationId).(string) == op {
			return m, proto.GetExtension(m.Options(), annotations.E_Http).(*annotations.HttpRule), nil
		}
	}
	return nil, nil, fmt.Errorf("no RPC has operation id %s", op)
}

// invoke sends c over gRPC and returns its status code.
func (g *grpcBridge) invoke(t *testing.T, c call) codes.Code {
	t.Helper()
	m, rule, err := g.method(c.op)
	if err != nil {
		t.Fatal(err)
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(m.Input().FullName())
	if err != nil {
		t.Fatal(err)
	}
	req := mt.New()
	if rule.GetBody() == "*" && c.body != "" {
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal([]byte(c.body), req.Interface()); err != nil {
			t.Fatalf("body is not a %s: %v", m.Input().FullName(), err)
		}
	}
	u, err := url.Parse(management.BasePath + c.path)
	if err != nil {
		t.Fatal(err)
	}
	_, tmpl := httpPattern(rule)
	if err := bindPath(req, tmpl, u.EscapedPath()); err != nil {
		t.Fatal(err)
	}
	for k, vs := range u.Query() {
		if err := setField(req, k, vs[len(vs)-1]); err != nil {
			t.Fatalf("query %s: %v", k, err)
		}
	}
	md := metadata.MD{}
	if !c.noAuth {
		md.Set("authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("admin:"+adminPassword)))
	}
	for k, v := range c.header {
		md.Set(strings.ToLower(k), v)
	}
	ot, err := protoregistry.GlobalTypes.FindMessageByName(m.Output().FullName())
	if err != nil {
		t.Fatal(err)
	}
	full := fmt.Sprintf("/%s/%s", m.Parent().FullName(), m.Name())
	err = g.conn.Invoke(metadata.NewOutgoingContext(context.Background(), md), full, req.Interface(), ot.New().Interface())
	return status.Code(err)
}

func httpPattern(r *annotations.HttpRule) (string, string) {
	switch p := r.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return "GET", p.Get
	case *annotations.HttpRule_Post:
		return "POST", p.Post
	case *annotations.HttpRule_Patch:
		return "PATCH", p.Patch
	case *annotations.HttpRule_Delete:
		return "DELETE", p.Delete
	case *annotations.HttpRule_Put:
		return "PUT", p.Put
	}
	return "", ""
}

// bindPath sets the {field} variables of tmpl from path.
func bindPath(msg protoreflect.Message, tmpl, path string) error {
	ts, ps := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return fmt.Errorf("%s does not match %s", path, tmpl)
	}
	for i, seg := range ts {
		if !strings.HasPrefix(seg, "{") {
			continue
		}
		v, err := url.PathUnescape(ps[i])
		if err != nil {
			return err
		}
		if err := setField(msg, strings.Trim(seg, "{}"), v); err != nil {
			return err
		}
	}
	return nil
}

// setField sets a scalar field given by proto or JSON name from text.
func setField(msg protoreflect.Message, name, text string) error {
	fields := msg.Descriptor().Fields()
	f := fields.ByName(protoreflect.Name(name))
	if f == nil {
		f = fields.ByJSONName(name)
	}
	if f == nil {
		return fmt.Errorf("no field %s in %s", name, msg.Descriptor().FullName())
	}
	var v protoreflect.Value
	switch f.Kind() {
	case protoreflect.StringKind:
		v = protoreflect.ValueOfString(text)
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return err
		}
		v = protoreflect.ValueOfBool(b)
	case protoreflect.Int32Kind:
		n, err := strconv.ParseInt(text, 10, 32)
		if err != nil {
			return err
		}
		v = protoreflect.ValueOfInt32(int32(n))
	default:
		return fmt.Errorf("field %s: kind %s not supported", name, f.Kind())
	}
	msg.Set(f, v)
	return nil
}
