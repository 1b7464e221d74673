// Package airgap finds the values overlay that makes a Helm chart render
// its images where rehost rewrite would send them, with no post-renderer:
// the search behind helm.AirgapValues and helm.Relocate. It renders only
// through the functions the caller gives ([Chart]), so it holds no Helm
// state of its own.
//
// # Terms
//
//   - An image field is a field of the chart's rendering that rehost
//     rewrite may change: a Pod-spec image, a composed reference, an
//     operator's registry setting, a named embedded reference (a
//     --*-image=REF argument, a *_IMAGE env value). Its value is the whole
//     string that holds the reference; its want the same string rewritten.
//   - A candidate is a key of the chart's values that may drive image
//     fields: a string leaf found in the repository part of a moving
//     image; an empty, null or absent key named like a registry or a
//     repository (also those the templates read but the values lack); the
//     key that would hold an operator's absent registry setting in a map
//     the template writes whole into the object (toYaml .Values.installation).
//   - A probe renders the chart with markers in place of candidates'
//     values: a unique token in front of a value (so that an image keeps
//     its shape), or a host name in place of an empty value. Where the
//     marker shows in an image field, the candidate drives that field.
//   - A slot is where a candidate's value sits in a field it drives: the
//     field's value split at the candidate's places, and the text it holds
//     there. A candidate's solo value is one value that makes every field
//     it drives come out rewritten, when there is one.
//   - An assignment sets candidates to values; the solver evaluates each
//     field under it from the slots, without rendering.
//
// # Algorithm
//
//  1. [New] renders the chart as given (the base rendering), rewrites
//     each document as rehost rewrite does, and lists the image fields and
//     their wants.
//  2. [Search.Solve] lists the candidates and probes them (prober).
//     Probes are batched: the candidates with a value are probed together
//     in one render, each with a marker of its own, and so are the empty
//     or absent ones. A group whose render cannot be attributed (a field
//     rebuilt otherwise than by substitution, a document changed beyond
//     image fields, a failed render) is split in two, and the search goes
//     on in halves while the renders it saved pay for it, one candidate a
//     render otherwise. Candidates that behave alike (1,000 empty registry
//     keys that drive nothing, or each its own image) cost one render; a
//     few that fail cost a few renders each (about 2 log2 N).
//  3. The solver chooses keys by a deterministic greedy search over single
//     keys with their solo values and over natural assignments: keys that
//     build one reference together (a registry and a repository, a shared
//     registry and per-image repositories) set to the parts of the target
//     that their slots map to (a registry key gets the target registry, a
//     repository key "library/traefik"). Order of preference: the most
//     fields moved, natural values, fewer keys, global keys, shorter
//     values, then paths. Excluded images never move.
//  4. The chosen keys are checked by rendering with them: every document
//     must render as rewritten, except the fields no key moves, and may
//     differ otherwise only by echoes of the values set in a ConfigMap
//     (echo.go) or, for documents that change at every render (generated
//     certificates), not at all in their image fields. A failed check
//     drops the keys to blame and chooses again. When a render with the
//     relocated values fails the check of a chart family rehost knows
//     (Bitnami's image verification), that family's documented switch is
//     added (family.go).
//
// # Render bound
//
// For N candidates, at most N + 12 renders, and never more than
// Search.MaxRenders ([DefaultMaxRenders]): 1 as given; at most N +
// [ProbeSlack] for the probes (+1 with a family's switch); 1 to tell
// documents that change at every render; at most 4 checks (+1 with a
// family's switch). Candidates left unprobed at the ceiling, and keys
// whose checks keep failing, are reported with the images they drive,
// never guessed.
//
// # Values order
//
// The overlay goes after the user's values files and before the --set
// values, which Helm applies after every file: a --set value wins over
// the overlay, and the search renders in that order.
package airgap
