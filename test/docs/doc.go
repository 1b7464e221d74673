// Package docs tests the documentation: README.md and docs/*.md.
//
// Every ```go block is a whole Go file, built in a package of its own inside
// this module, which requires every rehost module; a fragment is allowed
// only after a <!-- fragment: PATH ExampleName --> comment naming an Example
// function that compiles the same code, in a file the document links to.
// Every ```go.mod block is tried as a consumer would try it: outside the
// workspace, with its replace paths "../rehost" pointed at this checkout,
// `go mod tidy` and `go build` of the Go block that follows it. Every
// relative link and #anchor must resolve, and docs/README.md must link
// every page of docs/.
package docs
