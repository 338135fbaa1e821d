// Package cut shortens a tool result's text to a budget of bytes at a boundary that keeps
// it what it was: JSON stays valid JSON (whole array items and object members, the open
// containers closed), other text keeps whole lines, else whole items of a list ("a, b, c"),
// else whole words, and never splits a UTF-8 character. Hosts cut what they show a model
// anyway (Claude Code at 25,000 tokens); a cut made here says what it left out.
package cut

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// How names the boundary a cut was made at.
type How string

// The boundaries a cut is made at, best first.
const (
	// JSON keeps whole array items and object members and closes the containers left
	// open: the kept text is valid JSON, a prefix of the whole's items.
	JSON How = "json"
	// Lines keeps whole lines.
	Lines How = "lines"
	// Items keeps whole items of a list separated by ", " or ",".
	Items How = "items"
	// Words keeps whole words (cut at a space, tab or newline).
	Words How = "words"
	// Runes keeps whole UTF-8 characters: a text with no other boundary in budget.
	Runes How = "characters"
)

// A Cut is a text shortened to a budget.
type Cut struct {
	// Text is what is kept: Whole[:Offset] plus, for JSON, the closers of the containers
	// left open.
	Text string
	// Offset is where the part left out begins in the whole: reading the whole from there
	// gives the rest.
	Offset int
	// How is the boundary the cut was made at.
	How How
	// ItemsKept and ItemsLeft count, for JSON, the array items and object members kept and
	// left out at the level the cut was made; zero for other cuts.
	ItemsKept, ItemsLeft int
}

// minJSONShare is the least share of the budget a JSON cut must keep to be chosen: a JSON
// text that is one huge string ({"result": "..."}) would keep only {}, and its text cut at
// a list boundary tells the reader more.
const minJSONShare = 2

// Text cuts s to at most budget bytes (budget >= 0) at the best boundary, and reports
// false when s fits and is not cut.
func Text(s string, budget int) (Cut, bool) {
	if len(s) <= budget {
		return Cut{Text: s, Offset: len(s)}, false
	}
	if budget < 0 {
		budget = 0
	}
	if c, ok := jsonCut(s, budget); ok && len(c.Text)*minJSONShare >= budget {
		return c, true
	}
	return textCut(s, budget), true
}

// textCut cuts s, longer than budget, at its last line break in budget; else its last list
// separator; else its last space; else its last character start.
func textCut(s string, budget int) Cut {
	head := s[:budget]
	// A boundary in the first half would throw away more than it keeps: look for the next
	// kind of boundary then.
	half := budget / 2
	if i := strings.LastIndexByte(head, '\n'); i >= half && i > 0 {
		return Cut{Text: s[:i+1], Offset: i + 1, How: Lines}
	}
	if i := strings.LastIndexByte(head, ','); i >= half && i > 0 {
		end := i + 1
		if end < len(s) && s[end] == ' ' && end < budget {
			end++
		}
		return Cut{Text: s[:end], Offset: end, How: Items}
	}
	if i := strings.LastIndexAny(head, " \t"); i >= half && i > 0 {
		return Cut{Text: s[:i+1], Offset: i + 1, How: Words}
	}
	end := RuneStart(s, budget)
	return Cut{Text: s[:end], Offset: end, How: Runes}
}

// RuneStart is the greatest i <= at that begins a UTF-8 character of s (or is len(s)), so
// that s[:i] and s[i:] split no character. Ranges of a text snapped down this way still tile
// it: the end of one is the start of the next.
func RuneStart(s string, at int) int {
	if at >= len(s) {
		return len(s)
	}
	if at <= 0 {
		return 0
	}
	for i := at; i >= 0 && at-i < utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return at
}

// jsonCut cuts the JSON text s after a whole array item or object member such that the kept
// text, with the closers of the containers then open, fits budget: at the outermost level
// where such a cut keeps at least half the budget (whole items of the list a result is,
// rather than half an item), else the longest. It reports false when s is not JSON, or is
// a scalar, or no container fits.
func jsonCut(s string, budget int) (Cut, bool) {
	if !json.Valid([]byte(s)) {
		return Cut{}, false
	}
	var (
		stack  []byte                // closers of the open containers, innermost last
		counts []int                 // items seen in each open container
		best   = map[int]candidate{} // by depth: the longest cut there
	)
	// consider records a cut at end (after a whole item, or just after an opening
	// bracket) if it fits; the text is made once the cut is chosen.
	consider := func(end int) {
		if end+len(stack) > budget {
			return
		}
		c := best[len(stack)]
		c.Offset, c.ItemsKept = end, counts[len(counts)-1]
		c.Text = c.Text[:0]
		if cap(c.Text) < len(stack) {
			c.Text = make([]byte, 0, 16)
		}
		for i := len(stack) - 1; i >= 0; i-- {
			c.Text = append(c.Text, stack[i])
		}
		best[len(stack)] = c
	}
	for i := 0; i < len(s) && i <= budget; {
		c := s[i]
		switch {
		case c == '{' || c == '[':
			if c == '{' {
				stack = append(stack, '}')
			} else {
				stack = append(stack, ']')
			}
			counts = append(counts, 0)
			i++
			consider(i)
		case c == '}' || c == ']':
			stack, counts = stack[:len(stack)-1], counts[:len(counts)-1]
			i++
			countItem(counts)
		case c == '"':
			i = skipString(s, i)
			if len(stack) > 0 && stack[len(stack)-1] == '}' && isKey(s, i) {
				continue // a member's name: its value follows
			}
			countItem(counts)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':':
			i++
		default: // a number, true, false or null
			for i < len(s) && !strings.ContainsRune(" \t\n\r,]}", rune(s[i])) {
				i++
			}
			countItem(counts)
		}
		if len(stack) > 0 && i > 0 && endsItem(s, i) {
			consider(i)
		}
	}
	if len(best) == 0 {
		return Cut{}, false
	}
	var chosen candidate
	for depth := 1; len(best) > 0; depth++ {
		c, ok := best[depth]
		if !ok {
			continue
		}
		delete(best, depth)
		if c.Offset > chosen.Offset {
			chosen = c
		}
		if (c.Offset+len(c.Text))*minJSONShare >= budget {
			chosen = c
			break
		}
	}
	return Cut{Text: s[:chosen.Offset] + string(chosen.Text), Offset: chosen.Offset, How: JSON,
		ItemsKept: chosen.ItemsKept, ItemsLeft: countLeft(s, chosen.Offset, len(chosen.Text))}, true
}

// candidate is a JSON cut not yet made: the whole's first Offset bytes, then Text (the
// closers of the containers open there).
type candidate struct {
	Offset, ItemsKept int
	Text              []byte
}

// countItem counts a value that has just ended as an item of its container.
func countItem(counts []int) {
	if len(counts) > 0 {
		counts[len(counts)-1]++
	}
}

// endsItem reports whether a value of a container ends just before i.
func endsItem(s string, i int) bool {
	c := s[i-1]
	return c == '"' || c == '}' || c == ']' || c == 'e' || c == 'l' || c >= '0' && c <= '9' || c == '.'
}

// isKey reports whether the string that ended at i is an object member's name: a colon
// follows it.
func isKey(s string, i int) bool {
	for ; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

// skipString returns the index after the JSON string that begins at i.
func skipString(s string, i int) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(s)
}

// countLeft counts the items left out of the container the cut at offset closed (depth
// open containers beyond it): the values that follow at that level until it closes.
func countLeft(s string, offset, depth int) int {
	if depth == 0 {
		return 0
	}
	level, left := 0, 0
	for i := offset; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			end := skipString(s, i)
			if level == 0 && !isKey(s, end) {
				left++
			}
			i = end
			continue
		case c == '{' || c == '[':
			if level == 0 {
				left++
			}
			level++
		case c == '}' || c == ']':
			if level == 0 {
				return left
			}
			level--
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':':
		default:
			if level == 0 {
				left++
			}
			for i+1 < len(s) && !strings.ContainsRune(" \t\n\r,]}", rune(s[i+1])) {
				i++
			}
		}
		i++
	}
	return left
}
