package delivery

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
)

// etagOf hashes the rendered object (its ETag left empty).
func etagOf(o Object) string {
	o.Meta.ETag = ""
	b, err := json.Marshal(o)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}
