package testenv

import (
	"bufio"
	"fmt"
	"io"
)

// ImportInput is a jobImportJson input of n objects of type typ, named
// "item 0" … "item n-1" (attribute 1000, language 201), generated while it
// is read: memory does not grow with n.
func ImportInput(n int, typ int64) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 64<<10)
		_, _ = fmt.Fprint(bw, `{"comment":"bulk","objects":[`)
		for i := 0; i < n; i++ {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			_, _ = fmt.Fprintf(bw, `{"meta":{"typeRef":%d},"values":[{"attribute":1000,"language":201,"variant":0,"value":"item %d"}]}`, typ, i)
		}
		_, _ = fmt.Fprint(bw, "]}")
		pw.CloseWithError(bw.Flush())
	}()
	return pr
}

// ImportInputBytes is ImportInput read whole.
func ImportInputBytes(n int, typ int64) []byte {
	b, _ := io.ReadAll(ImportInput(n, typ))
	return b
}
