package node

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/toolnode/toolnode/runtime/internal/oauth"
	"github.com/toolnode/toolnode/runtime/internal/upstream"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Each user's own credentials upstream: a bundle whose manifest has "token_exchange" gets,
// with each request a caller makes of it, a token of that caller for the bundle's
// audience, which the node's Exchanger obtains from the caller's OAuth access token
// (Request.Token) and keeps per caller until shortly before it expires. The token goes in
// the request alone (a header of its HTTP request, or a member of its _meta), never in
// the bundle's connection or process, so that no other caller's request can carry it; it
// is an oauth.Secret, which no log line, error or audit record can print.

// errNoCallerToken is the refusal of a call that brings no OAuth access token to exchange.
var errNoCallerToken = errors.New("this call carries no OAuth access token: connect over HTTP to a node started with --oauth-issuer, with a token of that issuer")

// exchanging reports whether requests to b carry a token exchanged for their caller.
func exchanging(b *bundle) bool { return b.m.TokenExchange != nil }

// exchangeRequest is what the node asks the issuer for req's caller, for bundle b.
func (n *Node) exchangeRequest(b *bundle, req *Request) (oauth.ExchangeRequest, error) {
	if n.cfg.Exchanger == nil {
		return oauth.ExchangeRequest{}, fmt.Errorf("bundle %q calls its service as each caller (token_exchange), and this node exchanges no tokens: start it with --oauth-issuer and --oauth-client-id", b.name)
	}
	if req.Token == nil || req.Token.Raw == "" {
		return oauth.ExchangeRequest{}, fmt.Errorf("bundle %q calls its service as each caller (token_exchange): %w", b.name, errNoCallerToken)
	}
	x := b.m.TokenExchange
	return oauth.ExchangeRequest{Subject: req.Token.Subject, SubjectToken: req.Token.Raw, Audience: x.Audience, Scopes: x.Scopes}, nil
}

// exchange obtains the token of c's caller for b into c.upstream. A kept token is taken at
// once; a request to the issuer runs on a goroutine of its own, so that the caller's
// goroutine is never held up, and then goes on as next says.
func (n *Node) exchange(c *call, b *bundle, next func(error)) {
	xr, err := n.exchangeRequest(b, c.req)
	if err != nil {
		next(err)
		return
	}
	if tok, ok := n.cfg.Exchanger.Cached(xr); ok {
		c.upstream = tok
		next(nil)
		return
	}
	go func() {
		tok, err := n.cfg.Exchanger.Exchange(c.ctx, xr)
		if err != nil {
			next(fmt.Errorf("bundle %q calls its service as each caller, and the token for it (audience %q) could not be had: %w", b.name, xr.Audience, err))
			return
		}
		c.upstream = tok
		next(nil)
	}()
}

// carryToken puts the token exchanged for the call c in what send sends: a header of a url
// bundle's request, a member of a command bundle's _meta.
func carryToken(b *bundle, c *call, edit *upstream.Edit) {
	x := b.m.TokenExchange
	if x == nil || c.upstream == "" {
		return
	}
	if b.m.Remote() {
		edit.Header = http.Header{}
		edit.Header.Set(x.Header, x.HeaderValue(c.upstream.Reveal()))
		return
	}
	edit.Meta = append(edit.Meta, rawjson.Edit{Key: x.Meta, Value: rawjson.AppendString(nil, c.upstream.Reveal())})
}
