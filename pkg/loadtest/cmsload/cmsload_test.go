package cmsload

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseMix(t *testing.T) {
	got, err := ParseMix(DefaultMix)
	want := []Weight{{OpDeliveryGet, 60}, {OpDeliveryList, 25}, {OpIndexSearch, 10}, {OpManagementWrite, 5}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseMix(default) = %v, %v", got, err)
	}
	got, err = ParseMix(" delivery-get = 1 , index-search=0,")
	if err != nil || !reflect.DeepEqual(got, []Weight{{OpDeliveryGet, 1}, {OpIndexSearch, 0}}) {
		t.Errorf("ParseMix with spaces = %v, %v", got, err)
	}
	for _, bad := range []string{"", "delivery-get", "delivery-get=x", "delivery-get=-1", "nope=1",
		"delivery-get=1,delivery-get=2", "index-search=0"} {
		if _, err := ParseMix(bad); !errors.Is(err, ErrMix) {
			t.Errorf("ParseMix(%q) = %v, want ErrMix", bad, err)
		}
	}
}

func TestParseCreate(t *testing.T) {
	for _, body := range []string{
		`{"transaction":{"id":12001,"branchRef":4},"createdObjectIds":[3000010,3000011]}`,
		`{"transaction":{"id":"12001","branchRef":4},"createdObjectIds":[3000010,3000011]}`,
	} {
		r, err := parseCreate([]byte(body))
		if err != nil || r.TransactionID != 12001 || !reflect.DeepEqual(r.CreatedObjectIDs, []int{3000010, 3000011}) {
			t.Errorf("parseCreate(%s) = %+v, %v", body, r, err)
		}
	}
	if _, err := parseCreate([]byte(`{"createdObjectIds":[1]}`)); err == nil {
		t.Error("parseCreate without a transaction: no error")
	}
}
