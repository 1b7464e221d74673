// Package bytesize formats and parses sizes in bytes for messages and
// flags: "64 MiB", "400 MB", "1048576".
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Format is n in binary units: "512 B", "1.5 KiB", "64 MiB".
func Format(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + string("KMGTPE"[exp]) + "iB"
}

// Fixed is n in binary units with one decimal always: "512 B", "1.0 KiB",
// "67.3 MiB", as mirror's progress and its messages show sizes.
func Fixed(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

var units = map[string]int64{
	"": 1, "b": 1,
	"ki": 1 << 10, "kib": 1 << 10, "kb": 1000,
	"mi": 1 << 20, "mib": 1 << 20, "mb": 1000 * 1000,
	"gi": 1 << 30, "gib": 1 << 30, "gb": 1000 * 1000 * 1000,
	"ti": 1 << 40, "tib": 1 << 40, "tb": 1000 * 1000 * 1000 * 1000,
}

// Parse reads a size: a number of bytes, or a number (decimals allowed)
// with a unit, binary (Ki, KiB, Mi, MiB, Gi, GiB, Ti, TiB) or decimal (kB,
// MB, GB, TB), in any case, with or without a space: "64MiB", "1.5 GiB",
// "700MB", "1048576". A bare K, M, G or T is refused: it could mean either
// unit, and a medium's size (a 4.7 GB DVD) is decimal where a memory
// limit is binary.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := units[unit]
	if len(unit) == 1 && strings.Contains("kmgt", unit) {
		u := strings.ToUpper(unit)
		return 0, fmt.Errorf("size %q: unit %s: say %sB (powers of 1000) or %siB (powers of 1024)", s, u, u, u)
	}
	if num == "" || !ok {
		return 0, fmt.Errorf("size %q: want a number of bytes, or a number with a unit such as KiB, MiB, GiB, MB or GB", s)
	}
	if mult == 1 || !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err == nil && n <= math.MaxInt64/mult {
			return n * mult, nil
		}
		if mult == 1 {
			return 0, fmt.Errorf("size %q: want a whole number of bytes below 2^63", s)
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: want a number below 2^63 bytes", s)
	}
	return int64(f * float64(mult)), nil
}

// Value is a flag value (it implements pflag.Value and flag.Value) that
// reads a size with Parse into *N and prints it with Format.
type Value struct{ N *int64 }

func (v Value) String() string {
	if v.N == nil {
		return ""
	}
	return Format(*v.N)
}

func (v Value) Set(s string) error {
	n, err := Parse(s)
	if err != nil {
		return err
	}
	*v.N = n
	return nil
}

// Type names the value in a flag's usage.
func (v Value) Type() string { return "size" }
