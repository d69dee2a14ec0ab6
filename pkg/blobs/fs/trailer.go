package fs

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cmsplatform/cms/pkg/blobs"
)

const (
	magic       = "CMSBLOB1"
	trailerTail = 4 + len(magic) // length + magic
	maxMetaLen  = 64 << 10
)

// errCorrupt marks a blob file whose trailer cannot be read.
var errCorrupt = errors.New("corrupt blob file")

// fileMeta is the JSON metadata in a blob file's trailer.
type fileMeta struct {
	Key         string    `json:"key"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	ContentType string    `json:"content_type,omitempty"`
	Modified    time.Time `json:"modified"`
}

func writeTrailer(w io.Writer, info blobs.Info) error {
	js, err := json.Marshal(fileMeta(info))
	if err != nil {
		return err
	}
	buf := make([]byte, 0, len(js)+trailerTail)
	buf = append(buf, js...)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(js)))
	buf = append(buf, magic...)
	_, err = w.Write(buf)
	return err
}

// readTrailer reads the metadata of the blob file f, which must belong to
// key (any key when key is empty).
func readTrailer(f *os.File, key string) (blobs.Info, error) {
	st, err := f.Stat()
	if err != nil {
		return blobs.Info{}, err
	}
	size := st.Size()
	if size < int64(trailerTail) {
		return blobs.Info{}, fmt.Errorf("%w: %d bytes", errCorrupt, size)
	}
	tail := make([]byte, trailerTail)
	if _, err := f.ReadAt(tail, size-int64(trailerTail)); err != nil {
		return blobs.Info{}, err
	}
	if string(tail[4:]) != magic {
		return blobs.Info{}, fmt.Errorf("%w: bad magic", errCorrupt)
	}
	n := int64(binary.BigEndian.Uint32(tail[:4]))
	if n > maxMetaLen || n > size-int64(trailerTail) {
		return blobs.Info{}, fmt.Errorf("%w: metadata length %d", errCorrupt, n)
	}
	js := make([]byte, n)
	if _, err := f.ReadAt(js, size-int64(trailerTail)-n); err != nil {
		return blobs.Info{}, err
	}
	var m fileMeta
	if err := json.Unmarshal(js, &m); err != nil {
		return blobs.Info{}, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if (key != "" && m.Key != key) || m.Size != size-int64(trailerTail)-n {
		return blobs.Info{}, fmt.Errorf("%w: metadata for %q, %d bytes", errCorrupt, m.Key, m.Size)
	}
	return blobs.Info(m), nil
}
