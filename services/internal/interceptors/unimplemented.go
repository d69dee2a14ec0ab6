package interceptors

import (
	"context"
	"fmt"
	"strings"

	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// OperationID returns the NovaDB operation id of a gRPC full method name
// ("/cms.management.v1.ManagementService/GetBranch" → "Cms_GetBranch"), or
// "" when the method carries none.
func OperationID(fullMethod string) string {
	name := strings.TrimPrefix(fullMethod, "/")
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return ""
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name[:i]))
	if err != nil {
		return ""
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return ""
	}
	md := sd.Methods().ByName(protoreflect.Name(name[i+1:]))
	if md == nil {
		return ""
	}
	opts, ok := md.Options().(*descriptorpb.MethodOptions)
	if !ok || opts == nil {
		return ""
	}
	return proto.GetExtension(opts, optionsv1.E_OperationId).(string)
}

// notImplemented rewrites the generated stubs' Unimplemented error into one
// that names the NovaDB operation, which the gateway writes as a 501
// ProblemDetails.
func notImplemented(fullMethod string, err error) error {
	if status.Code(err) != codes.Unimplemented {
		return err
	}
	op := OperationID(fullMethod)
	if op == "" {
		return err
	}
	return gateway.WithReason(codes.Unimplemented, gateway.ReasonNotImplemented,
		fmt.Sprintf("operation %s is not implemented yet", op), map[string]string{"operation": op})
}

// UnaryNotImplemented names the operation in Unimplemented errors.
func UnaryNotImplemented(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	return resp, notImplemented(info.FullMethod, err)
}

// StreamNotImplemented names the operation in Unimplemented errors.
func StreamNotImplemented(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return notImplemented(info.FullMethod, h(srv, ss))
}
