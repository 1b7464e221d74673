package manifest

import (
	"errors"
	"sort"

	"go.yaml.in/yaml/v3"
)

// Anchors and aliases let one node stand at several places of a document:
// "image: *name" names the node anchored at "metadata: {name: &name nginx}".
// A rewrite must change the value at image fields only, so an edit of a
// node that aliases connect to other places is planned place by place:
//
//   - every place of the node is an image field: the node is edited, and
//     its aliases follow it;
//   - the anchored node itself is an image field, some aliases are not: the
//     node is edited, and those aliases are replaced by the old value;
//   - the anchored node is not an image field: it stays, and each alias at
//     an image field is replaced by the new value.
//
// A place reached along several paths, because a map or list above it is
// aliased (a container reused with "*c", merged with "<<: *c"), is edited
// only when every such path is an image field; otherwise the rewrite is an
// error naming the field, never a change elsewhere.

// aliasIndex is what a document's aliases connect: the aliases of each
// anchored node, and how many paths from the root reach each place, with
// aliases and merge keys resolved as the finder resolves them.
type aliasIndex struct {
	root    *yaml.Node
	aliases map[*yaml.Node][]*yaml.Node
	// in lists the maps, lists and documents whose content holds a place
	// (merge keys resolved).
	in    map[*yaml.Node][]*yaml.Node
	paths map[*yaml.Node]int
	busy  map[*yaml.Node]bool
}

// maxPaths caps the count of paths to a place (alias bombs multiply them).
const maxPaths = 1 << 30

// indexAliases indexes root, or returns nil when it holds no alias.
func indexAliases(root *yaml.Node) *aliasIndex {
	ix := &aliasIndex{root: root, aliases: map[*yaml.Node][]*yaml.Node{}, in: map[*yaml.Node][]*yaml.Node{}, paths: map[*yaml.Node]int{}, busy: map[*yaml.Node]bool{}}
	var collections []*yaml.Node
	stack := []*yaml.Node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch n.Kind {
		case yaml.AliasNode:
			if n.Alias != nil {
				ix.aliases[n.Alias] = append(ix.aliases[n.Alias], n)
			}
		case yaml.DocumentNode, yaml.SequenceNode, yaml.MappingNode:
			collections = append(collections, n)
		}
		stack = append(stack, n.Content...)
	}
	if len(ix.aliases) == 0 {
		return nil
	}
	merged := map[*yaml.Node][]*yaml.Node{}
	for _, c := range collections {
		content := c.Content
		if c.Kind == yaml.MappingNode {
			content = mergedValues(c, merged, nil)
		}
		for _, p := range content {
			ix.in[p] = append(ix.in[p], c)
		}
	}
	return ix
}

// pathsTo is the number of paths from the root to place p: the sum, over
// the collections holding p, of the paths to each place of the collection
// (where it stands, and each alias naming it).
func (ix *aliasIndex) pathsTo(p *yaml.Node) int {
	if p == ix.root {
		return 1
	}
	if n, ok := ix.paths[p]; ok {
		return n
	}
	if ix.busy[p] {
		return 0 // a merge cycle adds no path
	}
	ix.busy[p] = true
	n := 0
	for _, c := range ix.in[p] {
		n = min(n+ix.pathsTo(c), maxPaths)
		for _, a := range ix.aliases[c] {
			n = min(n+ix.pathsTo(a), maxPaths)
		}
	}
	delete(ix.busy, p)
	ix.paths[p] = n
	return n
}

// mergedValues returns the value places of mapping m with its merge keys
// resolved: its own values, then those of each merged mapping whose key m
// does not hold already, as get resolves them. It is computed once per
// mapping (memo); a mapping merged into itself adds nothing.
func mergedValues(m *yaml.Node, memo map[*yaml.Node][]*yaml.Node, busy map[*yaml.Node]bool) []*yaml.Node {
	if v, ok := memo[m]; ok {
		return v
	}
	if busy[m] {
		return nil
	}
	if busy == nil {
		busy = map[*yaml.Node]bool{}
	}
	busy[m] = true
	defer delete(busy, m)
	var out []*yaml.Node
	have := map[string]bool{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Value == "<<" && k.Tag == "!!merge" {
			merges = append(merges, m.Content[i+1])
			continue
		}
		have[k.Value] = true
		out = append(out, m.Content[i+1])
	}
	for _, mv := range merges {
		srcs := []*yaml.Node{mv}
		if r := resolve(mv); r.Kind == yaml.SequenceNode {
			srcs = r.Content
		}
		for _, src := range srcs {
			src = resolve(src)
			if src.Kind != yaml.MappingNode {
				continue
			}
			for i := 0; i+1 < len(src.Content); i += 2 {
				if k := src.Content[i]; k.Value != "<<" && !have[k.Value] {
					have[k.Value] = true
					out = append(out, src.Content[i+1])
				}
			}
			// What src merges in turn.
			for _, v := range mergedValues(src, memo, busy) {
				if !containsNode(out, v) && !ownValue(src, v) {
					out = append(out, v)
				}
			}
		}
	}
	memo[m] = out
	return out
}

func ownValue(m, v *yaml.Node) bool {
	for i := 1; i < len(m.Content); i += 2 {
		if m.Content[i] == v {
			return true
		}
	}
	return false
}

func containsNode(ns []*yaml.Node, n *yaml.Node) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}

// errShared is the error of an image field whose node an alias also puts
// at a field that is not an image field.
var errShared = errors.New("the value is shared through a YAML anchor with a field that is not an image field, and rewriting it would change that field too: write the value out in place of the alias")

// planEdits returns the edits of a document's mapped references, planned
// so that no value outside an image field changes (see above). A reference
// whose edit cannot be planned so is an error, or a warning for an
// embedded or guessed reference, which is then left as written (a guessed
// one is marked left).
func planEdits(root *yaml.Node, ms []mapped) (edits []edit, warns, errs []error) {
	ix := indexAliases(root)
	if ix == nil {
		return planPlain(ms), nil, nil
	}
	var order []*yaml.Node
	byNode := map[*yaml.Node][]int{}
	var inserts []edit
	for i, m := range ms {
		if m.edit != nil && m.edit.insert != nil {
			inserts = append(inserts, *m.edit) // a field added to a map
			continue
		}
		if m.edit != nil && m.edit.value != "" {
			if byNode[m.field.Node] == nil {
				order = append(order, m.field.Node)
			}
			byNode[m.field.Node] = append(byNode[m.field.Node], i)
		}
	}
	edits = inserts
	// The paths of image fields (edited or not) at each place.
	imagePaths := map[*yaml.Node]map[string]bool{}
	for _, m := range ms {
		if m.edit == nil {
			continue
		}
		if imagePaths[m.field.place()] == nil {
			imagePaths[m.field.place()] = map[string]bool{}
		}
		imagePaths[m.field.place()][m.field.Path] = true
	}
	// shared reports whether place p is also reached along a path that is
	// not an image field; it records the error or warning of ms[i].
	shared := func(p *yaml.Node, i int) bool {
		if ix.pathsTo(p) <= len(imagePaths[p]) {
			return false
		}
		err := &Error{Location: ms[i].occ.Location, Err: errShared}
		switch {
		case ms[i].field.Type == TypeEmbedded:
			warns = append(warns, &Error{Location: ms[i].occ.Location, Err: errors.New("embedded image reference left as written: " + errShared.Error())})
		case ms[i].field.Guessed:
			warns = append(warns, &Error{Location: ms[i].occ.Location, Err: errors.New("guessed image left as written: " + errShared.Error())})
			ms[i].left = true
		default:
			errs = append(errs, err)
		}
		return true
	}
	for _, n := range order {
		idx := byNode[n]
		var own []edit
		for _, i := range idx {
			own = append(own, *ms[i].edit)
		}
		if imagePaths[n] != nil { // the anchored (or only) place is an image field
			ok := true
			for _, i := range idx {
				if ms[i].field.place() == n && shared(n, i) {
					ok = false
					break
				}
			}
			if !ok {
				// Not edited: no guessed reference of the node is
				// rewritten (the first one's warning says why).
				for _, i := range idx {
					if ms[i].field.Guessed {
						ms[i].left = true
					}
				}
				continue
			}
			edits = append(edits, own...)
			for _, a := range ix.aliases[n] {
				if imagePaths[a] == nil {
					edits = append(edits, edit{node: a, value: n.Value, alias: true})
				}
			}
		}
		if len(ix.aliases[n]) == 0 {
			continue
		}
		// The aliases at image fields: with the node edited they follow it;
		// otherwise each is replaced by the new value.
		value := expectedValues(own)[n]
		for _, a := range ix.aliases[n] {
			if imagePaths[a] == nil {
				continue
			}
			i := idx[0]
			for _, j := range idx {
				if ms[j].field.place() == a {
					i = j
				}
			}
			if shared(a, i) || imagePaths[n] != nil {
				continue
			}
			edits = append(edits, edit{node: a, value: value, alias: true, embedded: ms[i].field.Type == TypeEmbedded})
		}
	}
	return edits, warns, errs
}

// planPlain plans the edits of a document without aliases: the fields to
// add, then the edits of each node together, nodes in the order of their
// first edit. It allocates the edits and one index per node, nothing per
// edit, so that a document of many references stays cheap.
func planPlain(ms []mapped) []edit {
	first := make(map[*yaml.Node]int, len(ms)) // a node's first edit in ms
	idx := make([]int, 0, len(ms))
	n := 0
	for i, m := range ms {
		switch {
		case m.edit != nil && m.edit.insert != nil:
			n++
		case m.edit != nil && m.edit.value != "":
			if _, ok := first[m.field.Node]; !ok {
				first[m.field.Node] = i
			}
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return first[ms[idx[a]].field.Node] < first[ms[idx[b]].field.Node] })
	edits := make([]edit, 0, n+len(idx))
	for _, m := range ms {
		if m.edit != nil && m.edit.insert != nil {
			edits = append(edits, *m.edit)
		}
	}
	for _, i := range idx {
		edits = append(edits, *ms[i].edit)
	}
	return edits
}
