package serve

import (
	"net/http"
	"slices"

	"github.com/toolnode/toolnode/runtime/internal/card"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// cardHandler serves the node's server card and AI Catalog, made from the bundles n fronts
// when each request comes. The endpoint on the card is --oauth-audience when set (the
// front's own public URL), else /mcp at the host the request reached. Behind a token, an
// access file or OAuth the card says a credential is needed and counts the bundles
// without naming them: who sees what is decided per client, and a card is public.
func cardHandler(n *node.Node, cfg Config) http.Handler {
	guarded := cfg.HTTPOptions.Token != "" || cfg.AccessFile != "" || cfg.OAuthIssuer != ""
	return card.Handler{
		Card: func(url string) card.Card {
			return card.Build(card.Info{Version: cfg.Version, URL: url, Bundles: BundleNames(n), Private: guarded, Auth: guarded}, mcp.AllVersions())
		},
		Endpoint: func(r *http.Request) string {
			if cfg.OAuthAudience != "" {
				return cfg.OAuthAudience
			}
			return card.EndpointOf(r, "/mcp")
		},
	}
}

// BundleNames names the bundles n fronts now, sorted.
func BundleNames(n *node.Node) []string {
	var names []string
	for _, st := range n.Status() {
		names = append(names, st.Name)
	}
	slices.Sort(names)
	return names
}
