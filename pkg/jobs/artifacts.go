package jobs

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/blobs"
)

// OpenLog opens what the job has logged so far (written by its runner
// every RunnerOptions.CheckEvery while it runs); a job that logged
// nothing yet has an empty log.
func (s *Service) OpenLog(ctx context.Context, j Job) (io.ReadCloser, error) {
	rc, _, err := s.blobs.Get(ctx, logKey(j.ID))
	if errors.Is(err, blobs.ErrNotFound) {
		return io.NopCloser(strings.NewReader("")), nil
	}
	return rc, err
}

// Range is one byte range of an HTTP Range header; Length < 0 reads to
// the end.
type Range struct {
	Offset, Length int64
	// Suffix: the last Length bytes (bytes=-N).
	Suffix bool
}

// ParseRange reads a single-range "bytes=" header ("" = none). Several
// ranges or another unit are not served as ranges (nil, nil: the whole
// artifact, as RFC 9110 allows); a malformed range is ErrInvalid.
func ParseRange(h string) (*Range, error) {
	spec, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return nil, nil
	}
	first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return nil, invalidf("range %q is malformed", h)
	}
	if first == "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n <= 0 {
			return nil, invalidf("range %q is malformed", h)
		}
		return &Range{Length: n, Suffix: true}, nil
	}
	off, err := strconv.ParseInt(first, 10, 64)
	if err != nil || off < 0 {
		return nil, invalidf("range %q is malformed", h)
	}
	if last == "" {
		return &Range{Offset: off, Length: -1}, nil
	}
	end, err := strconv.ParseInt(last, 10, 64)
	if err != nil || end < off {
		return nil, invalidf("range %q is malformed", h)
	}
	return &Range{Offset: off, Length: end - off + 1}, nil
}

// Artifact is an opened artifact (or a range of it).
type Artifact struct {
	io.ReadCloser
	Path        string
	ContentType string
	Size        int64 // of the whole artifact
	// Offset and Length describe the part being read (the whole: 0, Size).
	Offset, Length int64
}

// ErrRangeNotSatisfiable is a range that starts past the artifact's end (416).
var ErrRangeNotSatisfiable = errors.New("jobs: range not satisfiable")

// OpenArtifact opens artifact rel of job j, or the range r of it. A path
// that is no clean relative path is ErrInvalid; an artifact the job does
// not have is ErrNotFound.
func (s *Service) OpenArtifact(ctx context.Context, j Job, rel string, r *Range) (Artifact, error) {
	clean, err := CleanArtifactPath(rel)
	if err != nil {
		return Artifact{}, err
	}
	if !slices.Contains(j.Artifacts, clean) {
		return Artifact{}, notFoundf("job %d has no artifact %s", j.ID, clean)
	}
	key := artifactKey(j.ID, clean)
	info, err := s.blobs.Stat(ctx, key)
	if errors.Is(err, blobs.ErrNotFound) {
		return Artifact{}, notFoundf("job %d has no artifact %s", j.ID, clean)
	}
	if err != nil {
		return Artifact{}, err
	}
	off, length := int64(0), int64(-1)
	if r != nil {
		off, length = r.Offset, r.Length
		if r.Suffix {
			off, length = max(0, info.Size-r.Length), -1
		}
		if off >= info.Size && !(r.Suffix && info.Size == 0) {
			return Artifact{Size: info.Size}, fmt.Errorf("%w: artifact %s has %d bytes", ErrRangeNotSatisfiable, clean, info.Size)
		}
	}
	rc, info, err := s.blobs.GetRange(ctx, key, off, length)
	if errors.Is(err, blobs.ErrInvalidRange) {
		return Artifact{Size: info.Size}, fmt.Errorf("%w: artifact %s has %d bytes", ErrRangeNotSatisfiable, clean, info.Size)
	}
	if err != nil {
		return Artifact{}, err
	}
	n, _ := blobs.RangeLen(info.Size, off, length)
	return Artifact{ReadCloser: rc, Path: clean, ContentType: info.ContentType, Size: info.Size, Offset: off, Length: n}, nil
}

// WriteZip streams every artifact of job j into a ZIP archive on w, one
// after the other (nothing is assembled in memory).
func (s *Service) WriteZip(ctx context.Context, j Job, w io.Writer) error {
	zw := zip.NewWriter(w)
	for _, p := range j.Artifacts {
		rc, info, err := s.blobs.Get(ctx, artifactKey(j.ID, p))
		if errors.Is(err, blobs.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: p, Method: zip.Deflate, Modified: info.Modified})
		if err == nil {
			_, err = io.Copy(fw, rc)
		}
		rc.Close()
		if err != nil {
			return fmt.Errorf("zip %s: %w", p, err)
		}
	}
	return zw.Close()
}
