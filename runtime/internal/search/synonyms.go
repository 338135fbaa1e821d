package search

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// Synonyms are groups of words and phrases that mean one thing to a tool's users: a bundle
// names its jargon beside their words ("tstzspan, period, time span"), and every tool of
// the bundle holding one member of a group is also found by the others. A phrase is kept
// whole too: a tool's name part is covered by a query only when a member phrase is all in
// it (a query saying "temporal float" covers tfloat; one saying "temporal" alone does not).
//
// The zero value has no groups. A Synonyms is read-only once built, safe for concurrent use.
type Synonyms struct {
	// groups holds, for each term, the groups it belongs to; a group is its members,
	// each member the terms of one phrase.
	groups map[string][][][]string
}

// MaxSynonymGroups and MaxSynonymMembers bound a synonyms file: a small vocabulary, not a
// thesaurus. A longer file is refused.
const (
	MaxSynonymGroups  = 2000
	MaxSynonymMembers = 32
)

// MaxSynonymsBytes bounds a synonyms file's size.
const MaxSynonymsBytes = 256 << 10

// LoadSynonyms reads and parses the synonyms file at path (ParseSynonyms).
func LoadSynonyms(path string) (*Synonyms, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("synonyms: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSynonymsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("synonyms %s: %w", path, err)
	}
	if len(b) > MaxSynonymsBytes {
		return nil, fmt.Errorf("synonyms %s: larger than %d bytes", path, MaxSynonymsBytes)
	}
	s, err := ParseSynonyms(string(b))
	if err != nil {
		return nil, fmt.Errorf("synonyms %s: %w", path, err)
	}
	return s, nil
}

// ParseSynonyms reads a synonyms file: one group a line, its members separated by commas;
// blank lines and lines starting with # are skipped. A member is a word or a phrase, read as
// Tokens reads text (so "time span" and "time-span" are one member).
func ParseSynonyms(text string) (*Synonyms, error) {
	s := &Synonyms{groups: map[string][][][]string{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	line, n := 0, 0
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		var group [][]string
		for _, m := range strings.Split(l, ",") {
			if terms := Tokens(m); len(terms) > 0 {
				group = append(group, terms)
			}
		}
		if len(group) < 2 {
			return nil, fmt.Errorf("line %d: a group needs two members or more, separated by commas", line)
		}
		if len(group) > MaxSynonymMembers {
			return nil, fmt.Errorf("line %d: %d members, at most %d", line, len(group), MaxSynonymMembers)
		}
		if n++; n > MaxSynonymGroups {
			return nil, fmt.Errorf("more than %d groups", MaxSynonymGroups)
		}
		s.add(group)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return s, nil
}

func (s *Synonyms) add(group [][]string) {
	seen := map[string]bool{}
	for _, member := range group {
		for _, t := range member {
			if !seen[t] {
				seen[t] = true
				s.groups[t] = append(s.groups[t], group)
			}
		}
	}
}

// of returns the groups holding term, none for a nil Synonyms.
func (s *Synonyms) of(term string) [][][]string {
	if s == nil {
		return nil
	}
	return s.groups[term]
}

// expansion returns the terms the groups of term add to a tool holding it (term itself left
// out), and the phrases that cover it when a query holds all their terms.
func (s *Synonyms) expansion(term string) (words []string, phrases [][]string) {
	for _, g := range s.of(term) {
		for _, member := range g {
			if len(member) == 1 && member[0] == term {
				continue
			}
			phrases = append(phrases, member)
			for _, t := range member {
				if t != term {
					words = append(words, t)
				}
			}
		}
	}
	return words, phrases
}

// common are the node's own synonyms, for words any catalog uses: what a user says beside
// what a tool's author wrote. Bundles add their own (the manifest's "synonyms" file).
var common = mustSynonyms(`
greet, hello, hi, welcome, salute
sleep, pause, wait, delay
audio, sound, voice, clip
image, picture, photo
error, fail, failure, exception
log, logging
sampling, completion, language model
elicitation, ask the user, input from the user
progress, progress notification
speed, velocity, pace
length, distance travelled, how far
distance, metres, meters, km, kilometres, kilometers, miles, apart
nearest, closest, nearest approach
near, close, closer, nearer, nearby, close to
timestamp, moment, noon, midnight, o'clock
heading, azimuth, bearing, direction, course
maximum, max, largest, highest, greatest, biggest, peak, top
minimum, min, smallest, lowest, least
first, start, initial, beginning, earliest
last, end, final, latest
average, mean, avg
count, how many, number of
remove, exclude, drop, without, delete
keep, restrict, limit to, only
daily, per day, each day
hourly, per hour, each hour
split, cut, divide into, break into, chunks, pieces
convert, cast, turn into
`)

func mustSynonyms(text string) *Synonyms {
	s, err := ParseSynonyms(text)
	if err != nil {
		panic(err)
	}
	return s
}
