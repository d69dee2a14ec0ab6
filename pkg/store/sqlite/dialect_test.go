package sqlite

import (
	"testing"
	"time"
)

func TestListsAreJSONArrays(t *testing.T) {
	d := dialect{}
	for _, c := range []struct {
		got  any
		want string
	}{
		{d.Int64List(nil), `[]`},
		{d.Int64List([]int64{1, -2, 30}), `[1,-2,30]`},
		{d.StringList(nil), `[]`},
		{d.StringList([]string{"a", `"b"`}), `["a","\"b\""]`},
	} {
		if c.got != c.want {
			t.Errorf("list = %v, want %s", c.got, c.want)
		}
	}
}

func TestTimeIsUnixMicroseconds(t *testing.T) {
	d := dialect{}
	want := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	var got time.Time
	if err := d.TimeDest(&got).(interface{ Scan(any) error }).Scan(d.TimeArg(want)); err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) || got.Location() != time.UTC {
		t.Fatalf("time round trip = %v, want %v", got, want)
	}
}
