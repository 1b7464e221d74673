package yamlnode

import (
	"regexp"
	"strconv"
	"strings"
)

// errorLine is how yaml.v3 starts the message of a syntax error.
var errorLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parserProblems are yaml.v3's parser (not scanner) errors: for them it
// reports a 0-based line, where scanner errors get a 1-based one; either is
// the line where the enclosing construct starts when it has one, else where
// the problem was found (go.yaml.in/yaml/v3 decode.go, parser.fail).
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'": true, "did not find expected ',' or '}'": true,
	"did not find expected '-' indicator": true, "did not find expected key": true,
	"did not find expected node content": true, "did not find expected <document start>": true,
	"found duplicate %TAG directive": true, "found duplicate %YAML directive": true,
	"found incompatible YAML document": true, "found undefined tag handle": true,
}

// ErrorLine splits the message of a yaml.v3 syntax error, "yaml: line N:
// problem", into the 1-based line of the input it points at and the
// problem (yaml.v3 counts the lines of scanner errors from 1 and those of
// parser errors from 0: those get one more). ok is false when the message
// names no line (yaml.v3 names none for the document's first line): line
// is then 1, and msg the message without "yaml: ".
func ErrorLine(err error) (line int, msg string, ok bool) {
	s := err.Error()
	m := errorLine.FindStringSubmatch(s)
	if m == nil {
		return 1, strings.TrimPrefix(s, "yaml: "), false
	}
	line, _ = strconv.Atoi(m[1])
	msg = s[len(m[0]):]
	if parserProblems[msg] {
		line++
	}
	return line, msg, true
}
