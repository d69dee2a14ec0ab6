package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cmsplatform/cms/pkg/auth"
	"github.com/cmsplatform/cms/pkg/blobs"
)

// Job inputs are files a client uploads before creating the job that
// reads them (CreateJobRequest.inputFile.token). They are uploaded in
// chunks: the first creates the input and returns its token, each
// further one is appended. They live in the blob store under
// jobinput/<token>; a chunk is streamed (the previous content and the new
// chunk are copied into the new version, never held in memory) and the
// whole input is capped at Limits.MaxInputBytes (ErrInputTooLarge, the
// input stays as it was before the chunk). A token is bound to the user
// who started the input (jobinput/<token>.owner holds the name): for
// anyone else it is unknown, whether they append to, cancel or import it.

func inputKey(token string) (string, error) {
	if len(token) != 32 {
		return "", invalidf("job input token %q is malformed", token)
	}
	if _, err := hex.DecodeString(token); err != nil {
		return "", invalidf("job input token %q is malformed", token)
	}
	return "jobinput/" + token, nil
}

func ownerKey(key string) string { return key + ".owner" }

// ownInput reports whether the input at key is the caller's: its owner
// record names them, or it has none (inputs started before tokens were
// bound). A missing input is blobs.ErrNotFound.
func (s *Service) ownInput(ctx context.Context, key string) error {
	rc, _, err := s.blobs.Get(ctx, ownerKey(key))
	if errors.Is(err, blobs.ErrNotFound) {
		_, err = s.blobs.Stat(ctx, key)
		return err
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	name, err := io.ReadAll(io.LimitReader(rc, 4<<10))
	if err != nil {
		return err
	}
	if string(name) != auth.UserName(ctx) {
		return blobs.ErrNotFound
	}
	return nil
}

// StartInput stores the first chunk of a new job input.
func (s *Service) StartInput(ctx context.Context, chunk io.Reader) (token string, size int64, err error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token = hex.EncodeToString(b[:])
	key, _ := inputKey(token)
	if _, err := s.blobs.Put(ctx, ownerKey(key), strings.NewReader(auth.UserName(ctx)), blobs.Meta{ContentType: "text/plain"}); err != nil {
		return "", 0, err
	}
	info, err := s.blobs.Put(ctx, key, s.capped(chunk, 0), blobs.Meta{ContentType: "application/octet-stream"})
	if err != nil {
		_ = s.blobs.Delete(ctx, ownerKey(key))
		return "", 0, s.inputError(err)
	}
	return token, info.Size, nil
}

// ContinueInput appends a chunk to the job input token and returns the
// input's size. An unknown token is ErrInvalid.
func (s *Service) ContinueInput(ctx context.Context, token string, chunk io.Reader) (int64, error) {
	key, err := inputKey(token)
	if err != nil {
		return 0, err
	}
	if err := s.ownInput(ctx, key); errors.Is(err, blobs.ErrNotFound) {
		return 0, invalidf("no job input with token %s", token)
	} else if err != nil {
		return 0, err
	}
	old, info, err := s.blobs.Get(ctx, key)
	if errors.Is(err, blobs.ErrNotFound) {
		return 0, invalidf("no job input with token %s", token)
	}
	if err != nil {
		return 0, err
	}
	defer old.Close()
	nInfo, err := s.blobs.Put(ctx, key, io.MultiReader(old, s.capped(chunk, info.Size)), blobs.Meta{ContentType: "application/octet-stream"})
	if err != nil {
		return 0, s.inputError(err)
	}
	return nInfo.Size, nil
}

// CancelInput removes the job input token (a missing one, or another
// user's, is no error: nothing of it is removed).
func (s *Service) CancelInput(ctx context.Context, token string) error {
	key, err := inputKey(token)
	if err != nil {
		return err
	}
	if err := s.ownInput(ctx, key); errors.Is(err, blobs.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if err := s.blobs.Delete(ctx, key); err != nil {
		return err
	}
	return s.blobs.Delete(ctx, ownerKey(key))
}

func (s *Service) checkInputToken(ctx context.Context, token string) error {
	key, err := inputKey(token)
	if err != nil {
		return err
	}
	if err := s.ownInput(ctx, key); errors.Is(err, blobs.ErrNotFound) {
		return invalidf("inputFile: no job input with token %s", token)
	} else if err != nil {
		return err
	}
	return nil
}

// inputError turns the cap of capped into ErrInputTooLarge (422, as
// NovaDB answers "the file size is larger than expected"; a single request
// beyond maxUploadBytes is the gateway's 413).
func (s *Service) inputError(err error) error {
	if errors.Is(err, errInputCap) {
		return fmt.Errorf("%w: a job input holds at most %d bytes", ErrInputTooLarge, s.lim.MaxInputBytes)
	}
	return err
}

// errInputCap is what capReader fails with.
var errInputCap = errors.New("job input limit reached")

// capped reads r and fails with errInputCap once already+read would pass
// the input limit.
func (s *Service) capped(r io.Reader, already int64) io.Reader {
	return &capReader{r: r, left: s.lim.MaxInputBytes - already}
}

type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return 0, errInputCap
	}
	return n, err
}
