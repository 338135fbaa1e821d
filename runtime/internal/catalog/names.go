package catalog

import "github.com/toolnode/toolnode/sdk-go/app/provider"

// StrictNameMax is the longest name strict clients accept (GitHub Copilot CLI, Windsurf,
// and the model APIs): ^[a-zA-Z0-9_-]{1,64}$.
const StrictNameMax = provider.MaxName

// NameMap renders canonical names for strict clients and maps them back.
type NameMap struct {
	names *provider.Names
}

// Render returns the strict form of a canonical name.
func (m *NameMap) Render(name string) string {
	if r := m.names.Render(name); r != "" {
		return r
	}
	return name
}

// Canonical returns the canonical name of a strict one, and whether it is known.
func (m *NameMap) Canonical(strict string) (string, bool) {
	return m.names.Tool(strict)
}

// Strict returns the catalog's names rendered for strict clients by the rule the
// application libraries give model APIs (sdk-go/app/provider): dots and other characters
// become underscores, a leading digit or hyphen gets an underscore before it, and a name
// that would then be too long or would collide with another is shortened and given a
// stable hash of its canonical form. Computed once per catalog.
func (c *Catalog) Strict() *NameMap {
	c.strictOnce.Do(func() {
		names := make([]string, 0, len(c.entries))
		for _, e := range c.entries {
			names = append(names, e.Name)
		}
		c.strict = strictNames(names)
	})
	return c.strict
}

func strictNames(names []string) *NameMap {
	return &NameMap{names: provider.MapNames(names)}
}

// EstimateTokens estimates the tokens a model spends on n bytes of tool definitions: about
// four bytes a token, as the model APIs' tokenizers give for JSON and English text.
func EstimateTokens(n int) int { return (n + 3) / 4 }
