package main

import (
	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/viper"
)

func filesFromViper(v *viper.Viper) app.FilesConfig {
	return app.FilesConfig{
		MaxChunkBytes:             v.GetInt64("files.maxChunkBytes"),
		MaxFileBytes:              v.GetInt64("files.maxFileBytes"),
		UploadTTL:                 v.GetDuration("files.uploadTtl"),
		ThumbnailSize:             v.GetInt("files.thumbnailSize"),
		MaxThumbnailSize:          v.GetInt("files.maxThumbnailSize"),
		MaxImagePixels:            v.GetInt64("files.maxImagePixels"),
		ThumbnailParallel:         v.GetInt("files.thumbnailParallel"),
		ThumbnailParallelPerUser:  v.GetInt("files.thumbnailParallelPerUser"),
		MaxOpenUploadsPerUser:     v.GetInt("files.maxOpenUploadsPerUser"),
		MaxOpenUploadBytesPerUser: v.GetInt64("files.maxOpenUploadBytesPerUser"),
	}
}
