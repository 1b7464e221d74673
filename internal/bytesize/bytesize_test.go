package bytesize

import "testing"

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 64 << 20: "64 MiB",
		400 * 1000 * 1000: "381.5 MiB", 5 << 30: "5 GiB", 1 << 62: "4 EiB",
	} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFixed(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB",
		70_567_000: "67.3 MiB", 1 << 62: "4.0 EiB", 1<<63 - 1: "8.0 EiB",
	} {
		if got := Fixed(n); got != want {
			t.Errorf("Fixed(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	for s, want := range map[string]int64{
		"1048576": 1 << 20, "0": 0, "64MiB": 64 << 20, "64 MiB": 64 << 20, "64mi": 64 << 20, "4095MiB": 4095 << 20, "700mb": 700e6, "1TB": 1e12,
		"1.5GiB": 3 << 29, "400MB": 400e6, "10kB": 10000, "2KiB": 2048, "7B": 7, " 1 GB ": 1e9,
	} {
		got, err := Parse(s)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v, want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "MiB", "64XB", "-1", "1.5", "9223372036854775808", "99999999999TiB", "1e3", "64M", "4G", "2k", "1T", "700 parsecs"} {
		if got, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", s, got)
		}
	}
}

func TestValue(t *testing.T) {
	n := int64(64 << 20)
	v := Value{&n}
	if v.String() != "64 MiB" || v.Type() != "size" {
		t.Errorf("String %q, Type %q", v.String(), v.Type())
	}
	if err := v.Set("1GiB"); err != nil || n != 1<<30 {
		t.Errorf("Set 1GiB: %d, %v", n, err)
	}
	if err := v.Set("lots"); err == nil || n != 1<<30 {
		t.Errorf("Set lots: %d, %v", n, err)
	}
}
