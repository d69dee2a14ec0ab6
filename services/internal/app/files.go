package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/cmsplatform/cms/pkg/files"
)

// FilesConfig bounds uploads (README "Files and uploads"). Env vars
// CMS_FILES_<KEY>, e.g. CMS_FILES_MAX_CHUNK_BYTES.
type FilesConfig struct {
	// MaxChunkBytes caps one upload chunk: 413 beyond it.
	MaxChunkBytes int64 `yaml:"maxChunkBytes"`
	// MaxFileBytes caps a whole uploaded file: 422 beyond it.
	MaxFileBytes int64 `yaml:"maxFileBytes"`
	// UploadTTL: an upload idle this long is removed.
	UploadTTL time.Duration `yaml:"uploadTtl"`
	// ThumbnailSize is the longer side of a thumbnail requested without
	// a size.
	ThumbnailSize int `yaml:"thumbnailSize"`
	// MaxThumbnailSize caps a requested thumbnail size: 400 beyond it.
	MaxThumbnailSize int `yaml:"maxThumbnailSize"`
	// MaxImagePixels caps the pixels an image may declare to get a
	// thumbnail: 422 beyond it, before decoding.
	MaxImagePixels int64 `yaml:"maxImagePixels"`
	// ThumbnailParallel is how many thumbnails a process generates at once.
	ThumbnailParallel int `yaml:"thumbnailParallel"`
	// ThumbnailParallelPerUser is how many of them one user generates at
	// once; its other requests wait for its own slot.
	ThumbnailParallelPerUser int `yaml:"thumbnailParallelPerUser"`
	// MaxOpenUploadsPerUser and MaxOpenUploadBytesPerUser cap one user's
	// open (uncommitted) uploads and the bytes in them: 429 beyond;
	// negative: no cap. Administrators are not capped.
	MaxOpenUploadsPerUser     int   `yaml:"maxOpenUploadsPerUser"`
	MaxOpenUploadBytesPerUser int64 `yaml:"maxOpenUploadBytesPerUser"`
}

// DefaultFilesConfig is 32 MiB chunks, 16 GiB files, uploads kept 24
// hours; thumbnails 256 px by default, at most 2048 px, of images up to 40
// megapixels, 2 generated at once, 1 per user; 100 open uploads and
// 16 GiB in them per user.
func DefaultFilesConfig() FilesConfig {
	return FilesConfig{MaxChunkBytes: files.DefaultMaxChunkBytes, MaxFileBytes: files.DefaultMaxFileBytes,
		UploadTTL: files.DefaultUploadTTL, ThumbnailSize: files.DefaultThumbnailSize,
		MaxThumbnailSize: files.DefaultMaxThumbnailSize, MaxImagePixels: files.DefaultMaxImagePixels,
		ThumbnailParallel: files.DefaultThumbnailParallel, ThumbnailParallelPerUser: files.DefaultThumbnailParallelPerUser,
		MaxOpenUploadsPerUser: files.DefaultMaxOpenUploadsPerUser, MaxOpenUploadBytesPerUser: files.DefaultMaxOpenUploadBytesPerUser}
}

// NewFiles returns the files domain over the blob component (nil without
// one: the file operations then answer 501).
func NewFiles(cfg Config, comps *Components, log *slog.Logger) *files.Service {
	if comps.Blobs == nil {
		return nil
	}
	return files.New(comps.Blobs, files.Options{MaxChunkBytes: cfg.Files.MaxChunkBytes,
		MaxFileBytes: cfg.Files.MaxFileBytes, UploadTTL: cfg.Files.UploadTTL, Logger: log.With("component", "files"),
		MaxOpenUploadsPerUser: cfg.Files.MaxOpenUploadsPerUser, MaxOpenUploadBytesPerUser: cfg.Files.MaxOpenUploadBytesPerUser,
		Thumbnails: files.ThumbnailOptions{DefaultSize: cfg.Files.ThumbnailSize, MaxSize: cfg.Files.MaxThumbnailSize,
			MaxPixels: cfg.Files.MaxImagePixels, Parallel: cfg.Files.ThumbnailParallel,
			ParallelPerUser: cfg.Files.ThumbnailParallelPerUser}})
}

// expireUploads removes abandoned uploads every UploadTTL/4 (at least once
// a minute, at most once an hour) until ctx ends.
func expireUploads(svc *files.Service, log *slog.Logger) func(context.Context) error {
	every := min(max(svc.Limits().UploadTTL/4, time.Minute), time.Hour)
	return periodically(every, func(ctx context.Context) {
		n, err := svc.ExpireUploads(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("expiring abandoned uploads", "err", err)
		case n > 0:
			log.Info("expired abandoned uploads", "count", n)
		}
	})
}
