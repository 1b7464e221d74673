//go:build race

package main

// raceEnabled: the race detector is on. It makes scanning every byte of a
// large input some hundred times slower: tests of large inputs take
// smaller ones then (see TestBoundedMessages).
const raceEnabled = true
