// Command openapifix rewrites the OpenAPI (Swagger 2.0) documents that
// protoc-gen-openapiv2 generates so they say what the gateway writes
// (services/internal/gateway/wirejson.go), in one place for every group:
//
//   - int64 and uint64 (fields, wrappers, parameters) are JSON numbers on
//     the wire, so their schemas become "type": "integer" (the generator
//     writes "type": "string" as protojson does);
//   - a field marked (cms.options.v1.emit_null) is written as null when
//     unset, so its schema gets "x-nullable": true. The generator is run
//     with generate_x_go_type, which names each definition's message; the
//     names are removed here;
//   - every 429 answer carries Retry-After (services/internal/gateway
//     TooMany, the edge's login throttling): the generator drops the
//     headers of the file-level answers each group's service.proto
//     declares, so they are added here.
//
// It rewrites each file given as an argument in place, keeping the order of
// every object, so its output is as deterministic as the generator's.
// scripts/gen-openapi.sh runs it after the generator.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	optionsv1 "github.com/cmsplatform/cms/proto/gen/go/cms/options/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	// The groups whose messages the documents describe.
	_ "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	_ "github.com/cmsplatform/cms/proto/gen/go/cms/index/v1"
	_ "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	_ "github.com/cmsplatform/cms/proto/gen/go/cms/problem/v1"
	_ "github.com/cmsplatform/cms/proto/gen/go/cms/rendering/v1"
)

func main() {
	nullable, err := nullableFields()
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapifix:", err)
		os.Exit(1)
	}
	for _, name := range os.Args[1:] {
		if err := fixFile(name, nullable); err != nil {
			fmt.Fprintf(os.Stderr, "openapifix: %s: %v\n", name, err)
			os.Exit(1)
		}
	}
}

func fixFile(name string, nullable map[goType][]string) error {
	in, err := os.ReadFile(name) //nolint:gosec // the generated documents gen-openapi.sh names
	if err != nil {
		return err
	}
	out, err := fix(in, nullable)
	if err != nil {
		return err
	}
	return os.WriteFile(name, out, 0o644) //nolint:gosec // committed files, readable like the rest of the tree
}

// fix returns the document in rewritten.
func fix(in []byte, nullable map[goType][]string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	doc, err := decode(dec)
	if err != nil {
		return nil, err
	}
	root, ok := doc.(*object)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	if defs, ok := root.get("definitions").(*object); ok {
		for _, k := range defs.keys {
			if err := markNullable(defs.vals[k], nullable); err != nil {
				return nil, fmt.Errorf("definition %s: %w", k, err)
			}
		}
	}
	walk(root, integerForInt64)
	if paths, ok := root.get("paths").(*object); ok {
		for _, p := range paths.keys {
			item, _ := paths.vals[p].(*object)
			for _, m := range item.keysOrNil() {
				op, _ := item.vals[m].(*object)
				responses, _ := op.get("responses").(*object)
				if r, ok := responses.get("429").(*object); ok {
					retryAfter(r)
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := encode(&buf, root); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// retryAfter declares the Retry-After header of a 429 answer r that
// declares none.
func retryAfter(r *object) {
	headers, _ := r.get("headers").(*object)
	if headers == nil {
		headers = &object{vals: map[string]any{}}
	}
	if headers.get("Retry-After") != nil {
		return
	}
	h := &object{vals: map[string]any{}}
	h.set("description", "Seconds to wait before retrying.")
	h.set("type", "integer")
	headers.set("Retry-After", h)
	r.set("headers", headers)
}

// integerForInt64 rewrites a schema or parameter of a 64-bit integer.
func integerForInt64(o *object) {
	format, _ := o.get("format").(string)
	if t, _ := o.get("type").(string); t == "string" && (format == "int64" || format == "uint64") {
		o.set("type", "integer")
	}
}

// markNullable adds x-nullable to the properties of a definition whose
// message has emit_null fields, and removes the x-go-type name.
func markNullable(def any, nullable map[goType][]string) error {
	d, ok := def.(*object)
	if !ok {
		return nil
	}
	xt, ok := d.get("x-go-type").(*object)
	if !ok {
		return nil
	}
	d.remove("x-go-type")
	imp, _ := xt.get("import").(*object)
	if imp == nil {
		return errors.New("x-go-type without import")
	}
	pkg, _ := imp.get("package").(string)
	typ, _ := xt.get("type").(string)
	names, ok := nullable[goType{pkg, typ}]
	if !ok {
		return nil
	}
	if names == nil {
		return fmt.Errorf("%s.%s names more than one message with emit_null fields", pkg, typ)
	}
	props, _ := d.get("properties").(*object)
	for _, n := range names {
		p, ok := props.get(n).(*object)
		if !ok {
			// A request body without the field (a path parameter).
			continue
		}
		if p.get("$ref") != nil {
			return fmt.Errorf("property %s: x-nullable next to $ref is ignored", n)
		}
		p.set("x-nullable", true)
	}
	return nil
}

// goType is how generate_x_go_type names a message: its file's Go import
// path and its own name (without the names of enclosing messages).
type goType struct{ pkg, name string }

// nullableFields lists, per message, the JSON names of its emit_null
// fields. A name shared by two such messages of one package maps to nil.
func nullableFields() (map[goType][]string, error) {
	out := map[goType][]string{}
	seen := map[goType]bool{}
	var err error
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "cms.") {
			return true
		}
		opts, _ := fd.Options().(*descriptorpb.FileOptions)
		pkg, _, _ := strings.Cut(opts.GetGoPackage(), ";")
		if pkg == "" {
			err = fmt.Errorf("%s has no go_package", fd.Path())
			return false
		}
		rangeMessages(fd.Messages(), func(md protoreflect.MessageDescriptor) {
			var names []string
			fields := md.Fields()
			for i := 0; i < fields.Len(); i++ {
				if emitsNull(fields.Get(i)) {
					names = append(names, fields.Get(i).JSONName())
				}
			}
			key := goType{pkg, string(md.Name())}
			if seen[key] {
				if _, ok := out[key]; ok || len(names) > 0 {
					out[key] = nil
				}
				return
			}
			seen[key] = true
			if len(names) > 0 {
				out[key] = names
			}
		})
		return true
	})
	return out, err
}

// emitsNull mirrors the gateway's rule (wirejson.go planOf): a singular
// field with presence, outside a real oneof, marked emit_null.
func emitsNull(fd protoreflect.FieldDescriptor) bool {
	if fd.IsList() || fd.IsMap() || !fd.HasPresence() {
		return false
	}
	if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
		return false
	}
	opts, _ := fd.Options().(*descriptorpb.FieldOptions)
	return opts != nil && proto.GetExtension(opts, optionsv1.E_EmitNull).(bool)
}

func rangeMessages(mds protoreflect.MessageDescriptors, f func(protoreflect.MessageDescriptor)) {
	for i := 0; i < mds.Len(); i++ {
		md := mds.Get(i)
		if md.IsMapEntry() {
			continue
		}
		f(md)
		rangeMessages(md.Messages(), f)
	}
}

// object is a JSON object that keeps the order of its members.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) get(k string) any {
	if o == nil {
		return nil
	}
	return o.vals[k]
}

func (o *object) keysOrNil() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) remove(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			return
		}
	}
}

// walk calls f on every object of v, parents first.
func walk(v any, f func(*object)) {
	switch v := v.(type) {
	case *object:
		f(v)
		for _, k := range v.keys {
			walk(v.vals[k], f)
		}
	case []any:
		for _, e := range v {
			walk(e, f)
		}
	}
}

func decode(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decode(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := o.vals[k]; dup {
				return nil, fmt.Errorf("duplicate member %q", k)
			}
			o.set(k, v)
		}
		_, err = dec.Token() // '}'
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := decode(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err = dec.Token() // ']'
		return a, err
	}
	return tok, nil
}

// encode writes v compactly, objects in their order; json.Indent lays
// it out as the generator does.
func encode(w *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case *object:
		w.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := encode(w, k); err != nil {
				return err
			}
			w.WriteByte(':')
			if err := encode(w, v.vals[k]); err != nil {
				return err
			}
		}
		w.WriteByte('}')
		return nil
	case []any:
		w.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := encode(w, e); err != nil {
				return err
			}
		}
		w.WriteByte(']')
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Write(b)
	return nil
}
