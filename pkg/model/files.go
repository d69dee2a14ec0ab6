package model

import "strings"

// # Files of binary proxy objects
//
// A binary proxy object (BPO) names its file with a hash (attribute 11000,
// externalBinaryMD5) and an extension (11005, externalBinaryFileExtension).
// NovaDB's Delivery answers carry three more props for it, which this
// platform derives when the object does not store them (BinaryProps):
// externalBinaryFileName (11001), externalBinaryMediaType (11002, a
// reference to the media type object of the extension) and
// externalBinaryThumbnail (11003, the reference thumbnails are served by).
// pkg/files serves files with ContentType and makes thumbnails of the
// extensions ThumbnailExtension accepts; pkg/content bootstraps MediaTypes.

// The attributes of a BPO's file (docs/api-reference.md §9.3). 11000 and
// 11005 are NovaDB's; 11001-11003 carry the ApiIdentifiers of NovaDB's
// Delivery props, their ids are our choice.
const (
	AttrFileHash      int64 = 11000
	AttrFileName      int64 = 11001
	AttrFileMediaType int64 = 11002
	AttrFileThumbnail int64 = 11003
	AttrFileExtension int64 = 11005
)

// TypeMediaType is the type of media type objects (typeMediaType).
const TypeMediaType int64 = 100

// MediaType is a bootstrapped media type object (of TypeMediaType): its
// display name is the MIME type, Exts the lower-case extensions (with the
// dot) served with it.
type MediaType struct {
	ID   int64
	MIME string
	Exts []string
}

// MediaTypeOctetStream is the media type of every extension MediaTypes
// does not list.
const MediaTypeOctetStream int64 = 10900

// MediaTypes is the built-in table, the same on every host (not read from
// the host's MIME database). Ids are fixed (10900-10999; ours, NovaDB's
// are per installation), so a media type keeps its id on every branch and
// installation of this platform.
var MediaTypes = []MediaType{
	{MediaTypeOctetStream, "application/octet-stream", nil},
	{10901, "image/jpeg", []string{".jpg", ".jpeg"}},
	{10902, "image/png", []string{".png"}},
	{10903, "image/gif", []string{".gif"}},
	{10904, "image/webp", []string{".webp"}},
	{10905, "image/svg+xml", []string{".svg"}},
	{10906, "image/x-icon", []string{".ico"}},
	{10907, "image/bmp", []string{".bmp"}},
	{10908, "image/tiff", []string{".tif", ".tiff"}},
	{10909, "image/avif", []string{".avif"}},
	{10910, "application/pdf", []string{".pdf"}},
	{10911, "application/zip", []string{".zip"}},
	{10912, "application/gzip", []string{".gz"}},
	{10913, "application/json", []string{".json"}},
	{10914, "application/xml", []string{".xml"}},
	{10915, "text/javascript", []string{".js"}},
	{10916, "text/css", []string{".css"}},
	{10917, "text/html", []string{".html", ".htm"}},
	{10918, "text/plain", []string{".txt"}},
	{10919, "text/csv", []string{".csv"}},
	{10920, "text/markdown", []string{".md"}},
	{10921, "audio/mpeg", []string{".mp3"}},
	{10922, "audio/wav", []string{".wav"}},
	{10923, "audio/ogg", []string{".ogg"}},
	{10924, "audio/mp4", []string{".m4a"}},
	{10925, "video/mp4", []string{".mp4"}},
	{10926, "video/webm", []string{".webm"}},
	{10927, "video/quicktime", []string{".mov"}},
	{10928, "text/vtt", []string{".vtt"}},
	{10929, "font/woff", []string{".woff"}},
	{10930, "font/woff2", []string{".woff2"}},
	{10931, "font/ttf", []string{".ttf"}},
	{10932, "font/otf", []string{".otf"}},
	{10933, "application/msword", []string{".doc"}},
	{10934, "application/vnd.ms-excel", []string{".xls"}},
	{10935, "application/vnd.ms-powerpoint", []string{".ppt"}},
	{10936, "application/vnd.openxmlformats-officedocument.wordprocessingml.document", []string{".docx"}},
	{10937, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", []string{".xlsx"}},
	{10938, "application/vnd.openxmlformats-officedocument.presentationml.presentation", []string{".pptx"}},
}

var mediaTypeByExt = func() map[string]MediaType {
	m := map[string]MediaType{}
	for _, t := range MediaTypes {
		for _, e := range t.Exts {
			m[e] = t
		}
	}
	return m
}()

// normalExt is ext lower case with its dot.
func normalExt(ext string) string {
	ext = strings.ToLower(strings.TrimSpace(ext))
	if ext != "" && !strings.HasPrefix(ext, ".") {
		ext = "." + ext
	}
	return ext
}

// MediaTypeOf is the media type of a file extension (with or without the
// dot, any case); application/octet-stream when unknown.
func MediaTypeOf(ext string) MediaType {
	if t, ok := mediaTypeByExt[normalExt(ext)]; ok {
		return t
	}
	return MediaTypes[0]
}

// ContentType is the MIME type files with the extension are served as.
func ContentType(ext string) string { return MediaTypeOf(ext).MIME }

// thumbnailExts are the extensions with a thumbnail (images pkg/files
// decodes).
var thumbnailExts = map[string]bool{".jpg": true, ".jpeg": true, ".jpe": true, ".png": true, ".gif": true, ".webp": true}

// ThumbnailExtension reports whether files with the extension have a
// thumbnail.
func ThumbnailExtension(ext string) bool { return thumbnailExts[normalExt(ext)] }

// BinaryFile is what a BPO stores of its file; "" = not stored.
type BinaryFile struct {
	ID   int64  // the object's id
	Hash string // 11000
	Ext  string // 11005
	Name string // 11001
	// DisplayName is the object's display name ("" when it has none).
	DisplayName string
}

// BinaryProps are the derived file props of a BPO (BinaryFile.Hash set).
type BinaryProps struct {
	// FileName is the stored name (as uploaded), else the display name
	// (with the extension appended unless it ends with it), else
	// <hash><ext>; '/', '\' and control characters become '_'.
	FileName string
	// MediaType is the media type object of the extension.
	MediaType int64
	// Thumbnail is the object itself when its file has a thumbnail (the id
	// the thumbnail is served by: Delivery's /branches/{b}/thumbnails/{id}
	// and /binaries/{id}); 0 = none.
	Thumbnail int64
}

// DeriveBinaryProps returns f's derived props; ok is false when f names no
// file (no hash).
func DeriveBinaryProps(f BinaryFile) (BinaryProps, bool) {
	if strings.TrimSpace(f.Hash) == "" {
		return BinaryProps{}, false
	}
	ext := strings.TrimSpace(f.Ext)
	if ext != "" && !strings.HasPrefix(ext, ".") {
		ext = "." + ext
	}
	name := strings.TrimSpace(f.Name)
	if name == "" {
		name = strings.TrimSpace(f.DisplayName)
		if name == "" {
			name = strings.TrimSpace(f.Hash)
		}
		if ext != "" && !strings.HasSuffix(strings.ToLower(name), strings.ToLower(ext)) {
			name += ext
		}
	}
	p := BinaryProps{FileName: safeFileName(name), MediaType: MediaTypeOf(ext).ID}
	if ThumbnailExtension(ext) {
		p.Thumbnail = f.ID
	}
	return p, true
}

// safeFileName replaces path separators and control characters by '_'.
func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '_'
		}
		return r
	}, s)
}
