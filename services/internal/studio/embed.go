//go:build !nostudio

package studio

import "embed"

// dist is the studio's bundle (studio/build.mjs writes it; it is committed).
//
//go:embed dist
var dist embed.FS

const embedded = true
