package krmfn

import (
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Input is one stream of resources for Standalone: a file, or stdin.
type Input struct {
	// Name names the stream in results: a file path, "<stdin>".
	Name string
	// Reader holds a YAML stream of resources (a List or ResourceList is
	// unwrapped).
	Reader io.Reader
}

// Standalone runs the function outside an orchestrator, as "rehost-fn
// CONFIG FILE..." does: fc is the functionConfig (nil for the defaults),
// inputs the resources. Each input is read as a YAML stream of its own, so
// a file that does not start with "---" never runs into the last document
// of the file before it (kyaml's fn/framework/command joins the files into
// one stream, which turns the second file's keys into duplicate keys of
// the first file's last document and hides its images).
//
// The results name the input of each resource (Result.File.Path) unless
// the resource carries a config.kubernetes.io/path annotation of its own;
// lines in messages (collisions, duplicate keys) are lines of the input.
// On success the rewritten resources are written to w as a plain YAML
// stream, in input order, and Standalone returns the results (info and
// warnings) and nil. When any result is an error, nothing is written and
// the error results are returned as the error (a framework.Results).
func Standalone(fc *yaml.RNode, inputs []Input, w io.Writer) (framework.Results, error) {
	rl := &framework.ResourceList{FunctionConfig: fc}
	// set holds the items whose path annotation Standalone set: cleared
	// before writing, so the output carries only the resources' own.
	set := map[*yaml.RNode]bool{}
	for _, in := range inputs {
		nodes, err := readStream(in)
		if err != nil {
			return nil, err
		}
		for i, n := range nodes {
			if p, _, _ := kioutil.GetFileAnnotations(n); p == "" {
				if err := n.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, in.Name)); err != nil {
					return nil, fmt.Errorf("%s: document %d: %w", in.Name, i+1, err)
				}
				set[n] = true
			}
		}
		rl.Items = append(rl.Items, nodes...)
	}
	if err := (Processor{}).Process(rl); err != nil {
		return rl.Results, err
	}
	for _, n := range rl.Items {
		if set[n] {
			if err := n.PipeE(yaml.ClearAnnotation(kioutil.PathAnnotation)); err != nil {
				return rl.Results, err
			}
			if err := yaml.ClearEmptyAnnotations(n); err != nil {
				return rl.Results, err
			}
		}
	}
	return rl.Results, kio.ByteWriter{Writer: w}.Write(rl.Items)
}

// readStream decodes the documents of one input as one YAML stream, so
// that node positions are lines of the input (kyaml's ByteReader decodes
// each document on its own, positions counted from the document's start).
// Empty documents are skipped; a List stays a List (the finder walks its
// items).
func readStream(in Input) ([]*yaml.RNode, error) {
	dec := yaml.NewDecoder(in.Reader)
	var out []*yaml.RNode
	for {
		doc := &yaml.Node{}
		err := dec.Decode(doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		if yaml.IsYNodeEmptyDoc(doc) || yaml.IsMissingOrNull(yaml.NewRNode(doc)) {
			continue
		}
		out = append(out, yaml.NewRNode(doc))
	}
}
