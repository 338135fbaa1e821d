package oauth_test

import (
	"context"
	"log"
	"net/http"

	"github.com/toolnode/toolnode/runtime/internal/oauth"
)

// The HTTP front with OAuth: the metadata document unauthenticated, the MCP endpoint
// behind the middleware, the token's scopes at hand in the handler.
func ExampleResourceServer_Middleware() {
	rs, err := oauth.New(context.Background(), oauth.Config{
		Issuer:      "https://id.example.com/",
		ResourceURL: "https://mcp.example.com/mcp",
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	for _, p := range rs.MetadataPaths() {
		mux.Handle(p, rs.MetadataHandler())
	}
	mux.Handle("/mcp", rs.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := oauth.TokenFromContext(r.Context())
		_ = tok.Scopes // select the access entries for these
	})))
	log.Fatal(http.ListenAndServe("127.0.0.1:7777", mux))
}
