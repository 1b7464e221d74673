package manifest

import (
	"go.yaml.in/yaml/v3"
)

// proofBatch proves the tokens of many documents at once, for Prepare: a
// probe of the pairs of tokens of one document (verifyTokens), one or two
// images, costs what reading any YAML costs to start, which is most of
// it, and as much as a sixth of processing a document. As verifyTokens
// goes, the batch checks the pairs the run's prover has read before and
// records the others (read); prove then reads those of all its documents
// in one probe per context, block and flow, as each document's own
// probes would read them (a probe is a sequence of one-line scalar
// tokens, each read on its own), and tells which documents failed.
type proofBatch struct {
	run   *prover
	items []batchItem
	docs  int // documents started
}

// batchItem is a pair of tokens to read, of document doc, and how they
// must read.
type batchItem struct {
	doc  int
	pair tokenPair
	want tokenReading
}

// next starts the next document: the tokens recorded from now on are its.
func (b *proofBatch) next() { b.docs++ }

func (b *proofBatch) lookup(k tokenPair) (tokenReading, bool) { return b.run.lookup(k) }

// read records the pairs of reps for prove, which reads them.
func (b *proofBatch) read(reps []replacement, flow bool, want map[*yaml.Node]string) error {
	for _, r := range reps {
		b.items = append(b.items, batchItem{doc: b.docs - 1, pair: tokenPair{flow, r.old, r.new}, want: expectedReading(r, want)})
	}
	return nil
}

// prove reads the pairs recorded and returns, for each document started,
// whether its tokens read as they must: the documents that did not are
// to be processed again, each proved on its own. When the probe of the
// batch does not read as one scalar per token (a token that does not
// read on its own spoils the reading of the others), each document's
// pairs are read on their own. The batch is then empty.
func (b *proofBatch) prove() []bool {
	ok := make([]bool, b.docs)
	for i := range ok {
		ok[i] = true
	}
	if !b.readAll(b.items, ok) {
		start := 0
		for i := 1; i <= len(b.items); i++ {
			if i == len(b.items) || b.items[i].doc != b.items[start].doc {
				if !b.readAll(b.items[start:i], ok) {
					ok[b.items[start].doc] = false
				}
				start = i
			}
		}
	}
	b.items, b.docs = b.items[:0], 0
	return ok
}

// readAll reads items, in a block probe and a flow probe, stores in the
// run's prover each reading that is what it must be, and marks the
// documents whose readings differ from that in ok. It returns false, marking
// nothing, when a probe does not read as one scalar per token.
func (b *proofBatch) readAll(items []batchItem, ok []bool) bool {
	var inBlock, inFlow []batchItem
	for _, it := range items {
		if it.pair.flow {
			inFlow = append(inFlow, it)
		} else {
			inBlock = append(inBlock, it)
		}
	}
	readings := make([]tokenReading, 0, len(items))
	for _, group := range [][]batchItem{inBlock, inFlow} {
		if len(group) == 0 {
			continue
		}
		pairs := make([]tokenPair, len(group))
		for i, it := range group {
			pairs[i] = it.pair
		}
		read, _ := probeItems(probe(pairs), len(group))
		if read == nil {
			return false
		}
		for i := range group {
			rd, isScalar := readPair(read[2*i], read[2*i+1])
			if !isScalar {
				return false
			}
			readings = append(readings, rd)
		}
	}
	// Only a reading that proves its document is remembered: the rewrite
	// proves a document that failed alone, as it would without a draft.
	for i, it := range append(inBlock, inFlow...) {
		if readings[i] != it.want {
			ok[it.doc] = false
			continue
		}
		b.run.store(it.pair, readings[i])
	}
	return true
}
