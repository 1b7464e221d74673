package policy

import "strings"

// The reference grammar of rewrite.ParseRef as RE2 regular expressions,
// which both CEL (matches, find) and Kyverno's JMESPath functions
// (regex_match, regex_replace_all) evaluate with Go's regexp package. They
// are written without backslashes ([.] for a dot, [[] for a bracket) so
// that they need no escaping in CEL, JMESPath or YAML strings.
const (
	reLabel  = `[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?`
	reDomain = reLabel + `(?:[.]` + reLabel + `)*`
	rePort   = `(?::[0-9]+)?`
	// reComponent is a repository path component (validComponent).
	reComponent = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
	rePath      = reComponent + `(?:/` + reComponent + `)*`
	reTag       = `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`
	reDigest    = `(?:sha256:[0-9a-f]{64}|sha384:[0-9a-f]{96}|sha512:[0-9a-f]{128})`
	// reSuffix is what follows the repository: ":tag", "@digest" or
	// ":tag@digest", or nothing.
	reSuffix = `(?::` + reTag + `)?(?:@` + reDigest + `)?`
)

// reIPv6 is an IPv6 address as netip.ParseAddr accepts one without a zone
// (RFC 4291 text forms, with an embedded IPv4 address of decimal octets
// without leading zeros): rewrite accepts a bracketed IP literal only when
// it is an IPv6 address.
var reIPv6 = func() string {
	h := `[0-9a-fA-F]{1,4}`
	dec := `(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`
	ls32 := `(?:` + h + `:` + h + `|` + dec + `(?:[.]` + dec + `){3})`
	hs := func(n int) string { // n groups "h:" exactly
		return strings.Repeat(h+":", n)
	}
	upTo := func(n int) string { // at most n+1 groups before "::", or none
		if n == 0 {
			return `(?:` + h + `)?`
		}
		return `(?:(?:` + h + `:){0,` + itoa(n) + `}` + h + `)?`
	}
	alts := []string{
		hs(6) + ls32,
		`::` + hs(5) + ls32,
		upTo(0) + `::` + hs(4) + ls32,
		upTo(1) + `::` + hs(3) + ls32,
		upTo(2) + `::` + hs(2) + ls32,
		upTo(3) + `::` + h + `:` + ls32,
		upTo(4) + `::` + ls32,
		upTo(5) + `::` + h,
		upTo(6) + `::`,
	}
	return `(?:` + strings.Join(alts, `|`) + `)`
}()

func itoa(n int) string { return string(rune('0' + n)) }

// Anchored expressions the policies use.
var (
	// reHostSlash is a registry host followed by "/", the way an image
	// reference spells it (checkHost): a domain name or a bracketed IPv6
	// address, with an optional port. reHost6Slash is the bracketed case
	// alone, so that CEL evaluates the long IPv6 expression only for
	// references that start with "[".
	reHostSlash  = `^` + reDomain + rePort + `/$`
	reHost6Slash = `^[[]` + reIPv6 + `[]]` + rePort + `/$`
	// reRest is what follows the registry host: the repository path and
	// the suffix.
	reRest = `^` + rePath + reSuffix + `$`
	// reHostPart finds the registry host of a reference with its "/": the
	// first path component when it is "localhost" or holds a '.' or ':'
	// (ParseRef's rule), or nothing.
	reHostPart = `^(?:localhost|[^/@]*[.:][^/@]*)/`
	// reRepoPart finds the repository as written, host included: all up to
	// the tag or digest.
	reRepoPart = `^(?:[^/@]*/)?[^:@]*`
)

// reValid matches exactly the references ParseRef accepts whose path has
// at most 255 characters... but for the path length, which no RE2
// expression states briefly: the Kyverno policy checks it apart. A first
// component that holds a '.' or ':', or is "localhost", must be a valid
// registry host; any other first component is a path component.
var reValid = `^(?:(?:` + reHostLike + `)/` + rePath + `|` + reComponent + `|` + reFirstNoDot + `(?:/` + reComponent + `)+)` + reSuffix + `$`

const (
	// reFirstNoDot is a path component without a '.': one that ParseRef
	// never reads as a registry host.
	reFirstNoDot = `[a-z0-9]+(?:(?:_|__|-+)[a-z0-9]+)*`
)

// reHostLike is a valid registry host that ParseRef reads as one: with a
// '.', a port, "localhost", or an IPv6 address.
var reHostLike = reLabel + `(?:[.]` + reLabel + `)+` + rePort +
	`|` + reLabel + `:[0-9]+` +
	`|localhost` +
	`|[[]` + reIPv6 + `[]]` + rePort
