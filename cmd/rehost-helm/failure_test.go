package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// TestWriteFailure: a registry that answered HTTPS in plain HTTP, however
// deep in the error chain, is told as a fact on standard output; other
// failures write nothing there.
func TestWriteFailure(t *testing.T) {
	plain := fmt.Errorf("chart oci://r/x: %w", &url.Error{Op: "Get", URL: "https://r/v2/", Err: http.ErrSchemeMismatch})
	for _, tt := range []struct {
		err  error
		want string
	}{
		{plain, `{"format":1,"plainHTTP":true}` + "\n"},
		{fmt.Errorf("chart oci://r/x: not found"), ""},
	} {
		var b bytes.Buffer
		writeFailure(&b, tt.err)
		if b.String() != tt.want {
			t.Errorf("%v: %q, want %q", tt.err, b.String(), tt.want)
		}
	}
}
