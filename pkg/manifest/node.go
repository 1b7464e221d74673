package manifest

import (
	"errors"
	"fmt"

	"github.com/rehost/rehost/pkg/rewrite"
	"go.yaml.in/yaml/v3"
)

// RewriteNode rewrites, in place, the image fields of one Kubernetes
// object that the caller has parsed: doc is the object's mapping node (what
// kyaml's RNode.YNode() returns; a DocumentNode is accepted too). Same
// finder, same mapping, same errors as Rewrite; the images go to the
// Rewriter's image set. Embedded references are collected, and rewritten
// inside their strings with Config.RewriteEmbedded. Every other node keeps
// its value, style and comments.
//
// file names the object's source in errors and occurrences; lines says
// whether the nodes' positions are lines of that file (false: errors name
// the file without a line). This is the seam for pipelines that parse for
// themselves: the kio filter of package krmfn is this call per RNode.
func (rw *Rewriter) RewriteNode(doc *yaml.Node, file string, lines bool) error {
	if rw.listOnly {
		return fmt.Errorf("%s: %w", file, ErrListOnly)
	}
	if doc != nil && doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	fd := rw.finder.findAll(doc, true, !rw.noGuess, rw.envRefs.load())
	where := func(f Field) rewrite.Location {
		loc := rewrite.Location{File: file, Kind: f.Kind, Namespace: f.Namespace, Name: f.Name, Field: f.Path}
		if lines {
			loc.Line, loc.Column = f.place().Line, f.place().Column
		}
		return loc
	}
	ms, res := rw.mapAll(fd.fields, fd.emb, where)
	rw.mapCharts(fd.charts, fd.chartSkips, where, &ms, &res)
	res.notes = rw.notes(fd.notes, where)
	res.warns = append(res.warns, skipWarnings(fd.skipped, where)...)
	res.warns = append(res.warns, duplicateWarnings(doc, fd.fields, fd.emb, fd.charts, file, func(n *yaml.Node) int {
		if lines {
			return n.Line
		}
		return 0
	})...)
	if len(res.errs) == 0 {
		edits, warns, errs := planEdits(doc, ms)
		res.warns, res.errs = append(res.warns, warns...), append(res.errs, errs...)
		if len(errs) == 0 {
			for _, m := range ms {
				if m.edit != nil && m.edit.value != "" && m.edit.insert == nil && (m.field.Default || m.edit.node.Tag == "!!null") {
					m.edit.node.Tag = "!!str" // an empty setting set
				}
			}
			applyEdits(edits)
		}
	}
	rw.finish(ms, &res)
	return errors.Join(rw.record(res)...)
}

// applyEdits sets the new values on the edited nodes and adds the fields
// to add; an edited alias becomes a scalar in the style of the node it
// named.
func applyEdits(edits []edit) {
	var values []edit
	for _, e := range edits {
		if e.insert != nil {
			addNodes(e)
			continue
		}
		values = append(values, e)
	}
	for n, v := range expectedValues(values) {
		if n.Kind == yaml.AliasNode {
			like := n.Alias
			*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: like.Style &^ (yaml.LiteralStyle | yaml.FoldedStyle), Line: n.Line, Column: n.Column}
		}
		n.Value = v
	}
}
