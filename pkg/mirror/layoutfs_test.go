package mirror

import (
	"crypto/sha256"
	"errors"
	"io"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestVerifyingReaderWithholds: a blob whose digest does not match gives
// none of its last bytes. A reader that asks for exactly the declared
// size (an HTTP request of that Content-Length) never reads to the end
// of file; had it been given the whole body, the registry could answer
// before the transport reports the error (TestChartLayoutHostile failed
// that way about one run in twenty).
func TestVerifyingReaderWithholds(t *testing.T) {
	data := strings.Repeat("x", 551)
	good, _, _ := v1.SHA256(strings.NewReader(data))
	bad, _, _ := v1.SHA256(strings.NewReader(data + "y"))
	open := func(want v1.Hash) *verifyingReader {
		return &verifyingReader{f: io.NopCloser(nil), r: io.LimitReader(strings.NewReader(data), int64(len(data))+1), h: sha256.New(), want: want, size: int64(len(data)), name: "blob"}
	}
	for _, chunk := range []int{len(data), 100} {
		r := open(bad)
		var got int
		var err error
		for err == nil {
			var n int
			n, err = r.Read(make([]byte, chunk))
			got += n
		}
		if !errors.Is(err, ErrDigestMismatch) || got >= len(data) {
			t.Errorf("reading %d at a time: %d bytes given, %v; want fewer than %d and ErrDigestMismatch", chunk, got, err, len(data))
		}
		r = open(good)
		b, err := io.ReadAll(io.LimitReader(r, int64(len(data))))
		if err != nil || string(b) != data {
			t.Errorf("reading %d at a time, the right blob: %d bytes, %v", chunk, len(b), err)
		}
	}
}
