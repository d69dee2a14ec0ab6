package delivery

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// TestRecordedResponsesRoundTrip decodes every recorded NovaDB Delivery
// response strictly (an unknown field fails) into our response messages and
// writes it back with the gateway's marshaler: the result must be the same
// JSON, key for key and type for type. This pins the wire shape the
// Delivery operations produce to the real responses.
func TestRecordedResponsesRoundTrip(t *testing.T) {
	files, err := filepath.Glob("testdata/mocks/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded responses found (%v)", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var probe map[string]json.RawMessage
			if err := json.Unmarshal(raw, &probe); err != nil {
				t.Fatal(err)
			}
			var msg proto.Message = &deliveryv1.ObjectResult{}
			if _, ok := probe["objs"]; ok {
				msg = &deliveryv1.ObjectList{}
			}
			if err := (protojson.UnmarshalOptions{}).Unmarshal(raw, msg); err != nil {
				t.Fatalf("the recorded response does not fit %T: %v", msg, err)
			}
			out, err := gateway.WireJSON{}.Marshal(msg)
			if err != nil {
				t.Fatal(err)
			}
			var want, got any
			_ = json.Unmarshal(raw, &want)
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("our output is not JSON: %v", err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("round trip differs: %s", firstDiff("", want, got))
			}
		})
	}
}

// firstDiff names the first path where a and b differ.
func firstDiff(path string, a, b any) string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return path + ": object vs " + reflect.TypeOf(b).String()
		}
		for k, v := range av {
			w, ok := bv[k]
			if !ok {
				return path + "." + k + ": missing in our output"
			}
			if !reflect.DeepEqual(v, w) {
				return firstDiff(path+"."+k, v, w)
			}
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				return path + "." + k + ": extra in our output"
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return path + ": array length or type differs"
		}
		for i := range av {
			if !reflect.DeepEqual(av[i], bv[i]) {
				return firstDiff(path+"["+strconv.Itoa(i)+"]", av[i], bv[i])
			}
		}
	}
	return path + ": recorded " + jsonString(a) + ", ours " + jsonString(b)
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		b = append(b[:200], "…"...)
	}
	return string(b)
}
