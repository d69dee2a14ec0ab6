package content

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cmsplatform/cms/pkg/errkind"
)

// AttrFileHash is a binary proxy object's file hash (the MD5 of a committed
// upload in GUID form; see pkg/files).
const AttrFileHash = 11000

// ErrUnknownFile is a write naming a file hash no committed upload has.
var ErrUnknownFile = errkind.New(errkind.Unprocessable, "no file with this hash")

// FileCheck reports whether a file with the hash value (as written to
// attribute 11000) is stored; an unparsable hash is simply unknown.
type FileCheck func(ctx context.Context, hash string) (bool, error)

// WithFileCheck makes writes refuse (422) an attribute 11000 value naming
// a file that is not stored, so a binary proxy object always links a
// committed upload. Without it the hash is not checked.
func WithFileCheck(fn FileCheck) Option {
	return func(s *Service) { s.fileCheck = fn }
}

// checkFileRefs runs the file check over the string values of attribute
// 11000 in the input, before any transaction is opened.
func (s *Service) checkFileRefs(ctx context.Context, in []ObjectInput) error {
	if s.fileCheck == nil {
		return nil
	}
	for i, o := range in {
		for _, v := range o.Values {
			var hash string
			if v.Attribute != AttrFileHash || json.Unmarshal(v.JSON, &hash) != nil || hash == "" {
				continue
			}
			ok, err := s.fileCheck(ctx, hash)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%w: objects[%d]: attribute %d names %q, which no committed upload has", ErrUnknownFile, i, AttrFileHash, shorten([]byte(hash)))
			}
		}
	}
	return nil
}
