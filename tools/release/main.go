// Command release does the parts of a rehost release that need Go's own
// module code or go-containerregistry (docs/release.md; the Makefile's
// release targets run it):
//
//	release prep  -version vX.Y.Z [-root DIR] [-released "DIRS"]
//	release pin   -version vX.Y.Z [-root DIR] [-released "DIRS"]
//	release check -version vX.Y.Z [-root DIR] [-released "DIRS"] [-rules-only]
//	release tags  -version vX.Y.Z [-released "DIRS"]
//	release proxy [-version vX.Y.Z] -out DIR [-root DIR] [-released "DIRS"]
//	release image -command CMD -version V -revision SHA -created UNIX -source URL
//	              -binary linux/amd64=PATH ... [-layout DIR] [-push REF] [-insecure]
//
// prep writes the release state of every go.mod: each released module
// requires the others at the version, with no replace directive, and its
// go.sum holds their hashes as this tree makes them (test modules keep
// their replace directives); pin is its go.mod edits alone, without
// go mod tidy. check verifies that state: every released
// module requires the others at exactly the version, has no replace or
// exclude directive, and is tidy on its own (GOWORK=off) against a module
// proxy directory made from this tree; then a consumer module that
// requires the core and pkg/mirror with require lines only builds and
// runs, and go install .../cmd/rehost@VERSION works and prints the
// version. tags prints the git tags of a release, proxy writes the module
// proxy directory (at the version the released modules require each other
// at, without -version), and image builds the image of a command, rehost-fn
// or rehost (an OCI index for linux platforms, written as an OCI layout and
// pushed to a registry).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// defaultReleased are the released module directories (the Makefile's
// RELEASED).
const defaultReleased = ". pkg/mirror pkg/krmfn pkg/helm cmd/rehost cmd/rehost-fn cmd/rehost-helm"

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
}

// platformsFlag collects -binary PLATFORM=PATH.
type platformsFlag map[string]string

func (p platformsFlag) String() string { return fmt.Sprint(map[string]string(p)) }
func (p platformsFlag) Set(s string) error {
	plat, path, ok := strings.Cut(s, "=")
	if !ok || plat == "" || path == "" {
		return fmt.Errorf("want PLATFORM=PATH, got %q", s)
	}
	p[plat] = path
	return nil
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: release prep|pin|check|tags|proxy|image [flags] (see go doc)")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet(sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.String("version", "", "the release `version` (vX.Y.Z)")
	root := fs.String("root", ".", "the checkout's root `directory`")
	released := fs.String("released", defaultReleased, "the released module `directories`, space-separated")
	out := fs.String("out", "", "proxy: the module proxy `directory` to write")
	rulesOnly := fs.Bool("rules-only", false, "check: only the go.mod rules, not the builds against the module proxy")
	// image
	command := fs.String("command", "", "image: the `command` whose image to build (rehost-fn, rehost)")
	revision := fs.String("revision", "", "image: the commit")
	created := fs.Int64("created", 0, "image: the creation time, `seconds` since 1970 (the commit time)")
	source := fs.String("source", "https://github.com/rehost/rehost", "image: the source repository `URL`")
	layoutDir := fs.String("layout", "", "image: write the image as an OCI layout into this `directory`")
	push := fs.String("push", "", "image: push the image to this `reference`")
	insecure := fs.Bool("insecure", false, "image: plain HTTP to the registry")
	binaries := platformsFlag{}
	fs.Var(binaries, "binary", "image: the command's binary for a platform, `PLATFORM=PATH` (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected arguments %q", sub, fs.Args())
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	r := &repo{root: abs, released: strings.Fields(*released)}
	tmp := func() (string, func(), error) {
		d, err := os.MkdirTemp("", "rehost-release-")
		return d, func() { os.RemoveAll(d) }, err
	}

	switch sub {
	case "prep":
		d, done, err := tmp()
		if err != nil {
			return err
		}
		defer done()
		if err := prep(r, *version, d, stderr); err != nil {
			return fmt.Errorf("release-prep %s: %w\n(the go.mod and go.sum files may be partly written: `git checkout -- '*go.mod' '*go.sum'` starts again)", *version, err)
		}
		fmt.Fprintf(stdout, "The go.mod and go.sum files are in the release state of %s. Next: review and commit them, then make release-check VERSION=%s.\n", *version, *version)
	case "pin":
		if err := checkVersion(*version); err != nil {
			return err
		}
		changed, err := r.pin(*version)
		if err != nil {
			return err
		}
		for _, f := range changed {
			fmt.Fprintln(stdout, f)
		}
	case "check":
		if *rulesOnly {
			if err := checkVersion(*version); err != nil {
				return err
			}
			probs, err := r.problems(*version)
			if err != nil {
				return err
			}
			if len(probs) > 0 {
				return fmt.Errorf("release-check %s: the released modules are %w of %s:\n\t%s\nrun `make release-prep VERSION=%s` to write it (then review and commit)",
					*version, errNotReleaseState, *version, strings.Join(probs, "\n\t"), *version)
			}
			return nil
		}
		d, done, err := tmp()
		if err != nil {
			return err
		}
		defer done()
		if err := check(r, *version, d, stderr); err != nil {
			return fmt.Errorf("release-check %s: %w", *version, err)
		}
		fmt.Fprintf(stdout, "release-check %s: ok\n", *version)
	case "tags":
		if err := checkVersion(*version); err != nil {
			return err
		}
		for _, d := range r.released {
			fmt.Fprintln(stdout, tag(d, *version))
		}
	case "proxy":
		if *out == "" {
			return errors.New("proxy: give -out DIR")
		}
		all, err := r.modules()
		if err != nil {
			return err
		}
		rel, err := r.releasedModules(all)
		if err != nil {
			return err
		}
		if *version == "" {
			// The version the released modules require each other at.
			if *version, err = pinnedVersion(rel); err != nil {
				return err
			}
		}
		if err := checkVersion(*version); err != nil {
			return err
		}
		t := r.commitTime()
		for _, m := range rel {
			if err := r.writeProxy(*out, m, *version, t); err != nil {
				return err
			}
		}
	case "image":
		if *command == "" || *version == "" || *revision == "" || *created == 0 {
			return errors.New("image: give -command, -version, -revision and -created")
		}
		s := &imageSpec{command: *command, binaries: binaries, version: *version, revision: *revision, source: *source, created: time.Unix(*created, 0)}
		d, err := writeImage(s, *layoutDir, *push, *insecure)
		if err != nil {
			return err
		}
		where := *layoutDir
		if *push != "" {
			where = *push
		}
		fmt.Fprintf(stdout, "%s@%s\n", where, d)
	default:
		return fmt.Errorf("unknown subcommand %q: want prep, pin, check, tags, proxy or image", sub)
	}
	return nil
}
