package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens splits text into the terms the index holds: words are cut at anything that is not
// a letter or a digit (so snake_case, dotted.names, kebab-case and spaces all separate
// words), at lower-to-upper case changes (camelCase, and the last capital of an acronym
// before a word: "HTTPServer" is "http server"), and between letters and digits ("utf8" is
// "utf 8"); then lowercased, stop words dropped and each word stemmed.
func Tokens(text string) []string {
	var out []string
	forEachWord(text, func(w string) {
		w = strings.ToLower(w)
		if stopWords[w] {
			return
		}
		out = append(out, stem(w))
	})
	return out
}

// forEachWord calls f with each word of text, unchanged in case.
func forEachWord(text string, f func(string)) {
	start := -1
	var prev rune
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				f(text[start:i])
				start = -1
			}
			prev = 0
			continue
		}
		if start >= 0 && boundary(prev, r, text[i+utf8.RuneLen(r):]) {
			f(text[start:i])
			start = i
		}
		if start < 0 {
			start = i
		}
		prev = r
	}
	if start >= 0 {
		f(text[start:])
	}
}

// boundary reports whether a word ends between prev and r, rest being the text after r.
func boundary(prev, r rune, rest string) bool {
	switch {
	case unicode.IsDigit(prev) != unicode.IsDigit(r):
		return true
	case unicode.IsLower(prev) && unicode.IsUpper(r):
		return true
	case unicode.IsUpper(prev) && unicode.IsUpper(r):
		// "HTTPServer": the S starts a word because a lower-case letter follows it.
		next, _ := utf8.DecodeRuneInString(rest)
		return unicode.IsLower(next)
	}
	return false
}

// stopWords carry no meaning for finding a tool; dropping them keeps a chatty query ("how
// do I get the ...") from matching every description.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been by can could do does did for
		from has have how i if in into is it its me my of on or our should so than that the
		their them then there these this those to was we what where which while who will
		with would you your want need please tell show give find get use tool out`) {
		m[w] = true
	}
	return m
}()

// stem maps inflected forms of an English word to one key: plurals ("points", "entries",
// "boxes"), -ed and -ing ("stopped", "stopping" and "stops" all become "stop"), and a final
// e ("locate", "located"). It is deliberately light: it never has to produce a real word,
// only the same key for the forms a user and a description would use.
func stem(w string) string {
	if len(w) <= 3 || !isASCIILower(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	for _, suf := range []string{"ing", "ed"} {
		// "speed" and "need" are not past tenses.
		if base := strings.TrimSuffix(w, suf); base != w && len(base) >= 3 && hasVowel(base) && !strings.HasSuffix(base, "e") {
			w = base
			break
		}
	}
	if n := len(w); n > 3 && w[n-1] == w[n-2] && !isVowel(w[n-1]) {
		w = w[:n-1] // "stopp" from "stopped", and "call" alike, so both forms meet
	}
	if n := len(w); n > 3 && w[n-1] == 'e' {
		w = w[:n-1]
	}
	if n := len(w); n > 3 && w[n-1] == 'y' && !isVowel(w[n-2]) {
		w = w[:n-1] + "i" // "simplify" and "simplified" meet at "simplifi"
	}
	return w
}

func isASCIILower(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

func isVowel(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }

func hasVowel(w string) bool {
	for i := 0; i < len(w); i++ {
		if isVowel(w[i]) || w[i] == 'y' {
			return true
		}
	}
	return false
}
