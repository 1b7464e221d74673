// Command yamldecode is the baseline of the peer comparison
// (scripts/bench-peers.sh): it decodes every document of the given files
// into a yaml.Node with bare yaml.v3 (go.yaml.in/yaml/v3, the one kyaml
// uses) on one goroutine, and prints the number of documents.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"
)

func main() {
	n := 0
	for _, path := range os.Args[1:] {
		m, err := decode(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "yamldecode:", err)
			os.Exit(1)
		}
		n += m
	}
	fmt.Println(n)
}

func decode(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	dec := yaml.NewDecoder(bufio.NewReaderSize(f, 64<<10))
	n := 0
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("%s: document %d: %w", path, n+1, err)
		}
		n++
	}
}
