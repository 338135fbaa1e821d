package argcheck

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/message"
)

// reason words a failure for the one who made the call. The validator's own wording is
// kept where it already reads as a sentence ("missing property 'x'"); bounds, which it
// writes as "minimum: got -1, want 0", are said in full.
func reason(k jsonschema.ErrorKind, p *message.Printer) string {
	switch k := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("is %s %s, must be %s", article(k.Got), k.Got, strings.Join(withArticles(k.Want), " or "))
	case *kind.Minimum:
		return fmt.Sprintf("is %s, must be at least %s", num(k.Got), num(k.Want))
	case *kind.Maximum:
		return fmt.Sprintf("is %s, must be at most %s", num(k.Got), num(k.Want))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("is %s, must be greater than %s", num(k.Got), num(k.Want))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("is %s, must be less than %s", num(k.Got), num(k.Want))
	case *kind.MultipleOf:
		return fmt.Sprintf("is %s, must be a multiple of %s", num(k.Got), num(k.Want))
	case *kind.MinLength:
		return fmt.Sprintf("has %d characters, must have at least %d", k.Got, k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("has %d characters, must have at most %d", k.Got, k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("has %d items, must have at least %d", k.Got, k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("has %d items, must have at most %d", k.Got, k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("has %d members, must have at least %d", k.Got, k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("has %d members, must have at most %d", k.Got, k.Want)
	case *kind.AdditionalProperties:
		return fmt.Sprintf("has %s, which the tool does not take", quoteAll("member", k.Properties))
	case *kind.FalseSchema:
		return "is not allowed here"
	}
	return k.LocalizedString(p)
}

func num(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return fmt.Sprint(f)
}

func article(t string) string {
	switch t {
	case "array", "integer", "object":
		return "an"
	case "null":
		return ""
	}
	return "a"
}

func withArticles(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = strings.TrimSpace(article(t) + " " + t)
	}
	return out
}

func quoteAll(noun string, names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	if len(q) == 1 {
		return noun + " " + q[0]
	}
	return noun + "s " + strings.Join(q, ", ")
}
