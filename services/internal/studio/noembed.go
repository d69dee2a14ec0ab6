//go:build nostudio

package studio

import "embed"

// dist is empty in a binary built with the tag nostudio: the binary-size
// budget test builds one to measure what the studio adds.
var dist embed.FS

const embedded = false
