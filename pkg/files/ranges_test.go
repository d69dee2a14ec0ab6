package files_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/files"
)

// TestParseRangeCoalesces: overlapping and touching ranges become one, in
// file order, so 16 copies of the whole file are one range of the file, not
// 16 times its bytes.
func TestParseRangeCoalesces(t *testing.T) {
	sixteen := "bytes=" + strings.TrimSuffix(strings.Repeat("0-99,", files.MaxRanges), ",")
	for _, tc := range []struct {
		header string
		want   []files.ByteRange
	}{
		{sixteen, []files.ByteRange{{Start: 0, Length: 100}}},
		{"bytes=0-49,10-20,-60", []files.ByteRange{{Start: 0, Length: 100}}},
		{"bytes=50-59,0-9,10-19", []files.ByteRange{{Start: 0, Length: 20}, {Start: 50, Length: 10}}},
		{"bytes=90-,-5,0-0", []files.ByteRange{{Start: 0, Length: 1}, {Start: 90, Length: 10}}},
		{"bytes=0-9,11-19", []files.ByteRange{{Start: 0, Length: 10}, {Start: 11, Length: 9}}},
	} {
		got, err := files.ParseRange(tc.header, 100)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseRange(%q) = %v, %v; want %v", tc.header, got, err, tc.want)
		}
	}
	var total int64
	rs, _ := files.ParseRange(sixteen, 100)
	for _, r := range rs {
		total += r.Length
	}
	if total != 100 {
		t.Errorf("16 overlapping whole-file ranges send %d bytes of a 100-byte file", total)
	}
}
