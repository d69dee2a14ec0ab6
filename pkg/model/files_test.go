package model

import "testing"

// TestDeriveBinaryProps pins the derived file props of a BPO.
func TestDeriveBinaryProps(t *testing.T) {
	for _, c := range []struct {
		in   BinaryFile
		want BinaryProps
		ok   bool
	}{
		{BinaryFile{ID: 7, Hash: "h", Ext: ".png", DisplayName: "Team photo"}, BinaryProps{"Team photo.png", 10902, 7}, true},
		{BinaryFile{ID: 7, Hash: "h", Ext: "JPG", DisplayName: "a.jpg"}, BinaryProps{"a.jpg", 10901, 7}, true},
		{BinaryFile{ID: 7, Hash: "h", Ext: ".png", Name: "IMG_1.PNG", DisplayName: "x"}, BinaryProps{"IMG_1.PNG", 10902, 7}, true},
		{BinaryFile{ID: 8, Hash: "h", Ext: ".pdf", DisplayName: "a/b\\c\x01"}, BinaryProps{"a_b_c_.pdf", 10910, 0}, true},
		{BinaryFile{ID: 9, Hash: "0a-b", Ext: ".weird"}, BinaryProps{"0a-b.weird", MediaTypeOctetStream, 0}, true},
		{BinaryFile{ID: 9, Hash: "0a-b"}, BinaryProps{"0a-b", MediaTypeOctetStream, 0}, true},
		{BinaryFile{ID: 9, Ext: ".png", DisplayName: "no hash"}, BinaryProps{}, false},
	} {
		got, ok := DeriveBinaryProps(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("DeriveBinaryProps(%+v) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	seen := map[int64]bool{}
	for _, m := range MediaTypes {
		if seen[m.ID] || m.ID < 10900 || m.ID > 10999 {
			t.Errorf("media type id %d repeated or out of 10900-10999", m.ID)
		}
		seen[m.ID] = true
	}
	if ContentType(".JPEG") != "image/jpeg" || ContentType(".nope") != "application/octet-stream" || !ThumbnailExtension(".jpe") {
		t.Error("the extension table")
	}
}
