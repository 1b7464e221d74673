package airgap

// slot is where a candidate is in the value of an image field it drives.
type slot struct {
	// parts is the field's value split where the key's value goes.
	parts []string
	// held is the key's value as the field holds it: its value, or for an
	// empty or absent key what the template writes without it; known is
	// false when the field cannot be split so (a template that writes
	// more than the key when the key is set).
	held  string
	known bool
}

// offsets returns the offsets of the key's occurrences in the field's value.
func (h slot) offsets() []int {
	var out []int
	pos := 0
	for i, p := range h.parts[:len(h.parts)-1] {
		if i > 0 {
			pos += len(h.held)
		}
		pos += len(p)
		out = append(out, pos)
	}
	return out
}
