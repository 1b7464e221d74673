package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rehost/rehost/pkg/mirror"
)

// Error is err's message for the command line: the typed errors of
// package mirror found in it are worded with the flags that fix them, in
// place (their message is replaced within the message of the errors that
// wrap them), or added at the end when their message is not found in it.
func Error(err error) string {
	if err == nil {
		return "<nil>"
	}
	msg := err.Error()
	var plain *mirror.PlainHTTPError
	if errors.As(err, &plain) {
		msg = reword(msg, plain.Error(), plainHTTP(plain))
	}
	var pinned *mirror.PinnedNarrowError
	if errors.As(err, &pinned) {
		msg = reword(msg, pinned.Error(), fmt.Sprintf("the target is pinned to %s, but --platform keeps %d of %d manifests and the index digest becomes %s", pinned.Pinned, pinned.Kept, pinned.Total, pinned.Digest))
	}
	var miss *mirror.NotInMirrorError
	if errors.As(err, &miss) {
		msg = reword(msg, miss.Error(), fmt.Sprintf("not in the source mirror (%s: %v), and its own registry is not asked (--source-mirror-only)", miss.Mirror, miss.Err))
	}
	var unv *mirror.UnverifiedError
	if errors.As(err, &unv) && !strings.Contains(msg, "--verify") {
		msg += " (--verify-key; --verify=warn copies it with a warning)"
	}
	return msg
}

// reword replaces the library's words lib with the command line's in
// msg, or adds them when msg does not hold lib (a message scrubbed of
// something that looked like a credential, say).
func reword(msg, lib, cli string) string {
	if strings.Contains(msg, lib) {
		return strings.Replace(msg, lib, cli, 1)
	}
	return msg + " (" + cli + ")"
}

// plainHTTP words a refused plain-HTTP registry with the flags that name
// it insecure: --insecure for the target, --insecure-source for a
// source. The words are those rehost has always printed.
func plainHTTP(e *mirror.PlainHTTPError) string {
	advice := fmt.Sprintf("(Options.Insecure; rehost mirror: --insecure for the target, --insecure-source %s for a source)", e.Host)
	if e.Err != nil {
		return fmt.Sprintf("%v: registry %s speaks plain HTTP, which is used only for hosts named insecure %s", e.Err, e.Host, advice)
	}
	return fmt.Sprintf("plain HTTP to %s refused: TLS is required unless the host is named insecure %s", e.Host, advice)
}

// noticeText words a notice: a loopback registry reached over plain
// HTTP names --insecure, the flag any other registry would need.
func noticeText(n mirror.Notice) string {
	if n.PlainHTTP != "" {
		return fmt.Sprintf("%s is reached over plain HTTP: it is a loopback address (any other registry needs TLS or --insecure)", n.PlainHTTP)
	}
	return n.Msg
}
