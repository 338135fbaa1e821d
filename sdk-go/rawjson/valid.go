package rawjson

// Valid reports whether b is one JSON value, as encoding/json.Valid reads it, whose arrays
// and objects nest at most maxDepth levels deep. Like encoding/json it does not check that
// strings hold UTF-8.
//
// It is the check a server makes of every line before reading members out of it, so it is
// made in one pass without allocating (up to 64 levels), crossing the insides of strings
// a byte at a time with no state to keep; encoding/json's scanner keeps a state machine for
// every byte and takes several times as long.
func Valid(b []byte, maxDepth int) bool {
	var stack [64]byte // '{' or '[' for each open container
	open := stack[:0]
	i := skipSpace(b, 0)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(open) >= maxDepth {
				return false
			}
			open = append(open, c)
			if i = skipSpace(b, i+1); i >= len(b) {
				return false
			}
			if b[i] == closer(c) {
				open = open[:len(open)-1]
				i++
				break // an empty container is a whole value
			}
			if c == '{' {
				if i = member(b, i); i < 0 {
					return false
				}
			}
			continue
		case c == '"':
			if i = str(b, i); i < 0 {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = number(b, i); i < 0 {
				return false
			}
		case c == 't':
			if i = word(b, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = word(b, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = word(b, i, "null"); i < 0 {
				return false
			}
		default:
			return false
		}
		// A value ended before b[i]: what follows it is a comma, the end of its
		// containers, or the end of the text.
		for {
			i = skipSpace(b, i)
			if len(open) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := open[len(open)-1]
			if b[i] == closer(top) {
				open = open[:len(open)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return false
			}
			if i = skipSpace(b, i+1); top == '{' {
				if i = member(b, i); i < 0 {
					return false
				}
			}
			break
		}
	}
}

// closer is the byte that closes the container c opens.
func closer(c byte) byte {
	if c == '{' {
		return '}'
	}
	return ']'
}

// member reads a member's name and colon at b[i] and returns the index of its value, or
// -1.
func member(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = str(b, i); i < 0 {
		return -1
	}
	if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// str returns the index after the string starting at b[i] == '"', or -1 when it is not a
// valid JSON string: unterminated, a control character, or a bad escape.
func str(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i++; i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// number returns the index after the number starting at b[i], or -1 when it is not a valid
// JSON number.
func number(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if j := digits(b, i); j > i {
			i = j
		} else {
			return -1
		}
	}
	return i
}

// digits returns the index of the first byte from b[i] on that is not a digit.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// word returns the index after the literal w at b[i], or -1.
func word(b []byte, i int, w string) int {
	if len(b)-i < len(w) || string(b[i:i+len(w)]) != w {
		return -1
	}
	return i + len(w)
}

// TooDeep reports whether the JSON text in b nests arrays and objects more than limit levels
// deep; brackets inside strings do not count. Of a text Valid refused, it tells whether its
// depth is why, whatever else is wrong with it.
func TooDeep(b []byte, limit int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			if i = SkipString(b, i) - 1; i < 0 {
				return false // unterminated: a parser says so
			}
		case '[', '{':
			if depth++; depth > limit {
				return true
			}
		case ']', '}':
			depth--
		}
	}
	return false
}
