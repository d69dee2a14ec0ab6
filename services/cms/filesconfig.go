package main

import (
	"github.com/cmsplatform/cms/services/internal/app"
	"github.com/spf13/viper"
)

// filesKeys are the keys of app.FilesConfig (README "Files and uploads").
var filesKeys = []string{"files.maxChunkBytes", "files.maxFileBytes", "files.uploadTtl"}

func setFilesDefaults(v *viper.Viper, d app.FilesConfig) {
	v.SetDefault("files.maxChunkBytes", d.MaxChunkBytes)
	v.SetDefault("files.maxFileBytes", d.MaxFileBytes)
	v.SetDefault("files.uploadTtl", d.UploadTTL)
}

func filesFromViper(v *viper.Viper) app.FilesConfig {
	return app.FilesConfig{
		MaxChunkBytes: v.GetInt64("files.maxChunkBytes"),
		MaxFileBytes:  v.GetInt64("files.maxFileBytes"),
		UploadTTL:     v.GetDuration("files.uploadTtl"),
	}
}
