package yamlnode

import (
	"regexp"
	"strconv"
	"strings"
)

// errorLine is how yaml.v3 starts the message of a syntax error.
var errorLine = regexp.MustCompile(`^yaml: line (\d+): `)

// ErrorLine splits the message of a yaml.v3 syntax error, "yaml: line N:
// problem", into N and the problem; ok is false when the message names no
// line (yaml.v3 names none for the document's first line), and msg is then
// the message without "yaml: ". yaml.v3 counts the lines of scanner
// errors from 1 and those of some parser errors from 0: pkg/manifest
// adds one for those where it reports a line of the input stream;
// pkg/rendered, and pkg/manifest's check of its own output, take N as it
// is.
func ErrorLine(err error) (line int, msg string, ok bool) {
	s := err.Error()
	m := errorLine.FindStringSubmatch(s)
	if m == nil {
		return 0, strings.TrimPrefix(s, "yaml: "), false
	}
	line, _ = strconv.Atoi(m[1])
	return line, s[len(m[0]):], true
}
