package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// issuerMetadata is the part of an authorization server's metadata (RFC 8414, or OpenID
// Connect Discovery 1.0) the resource server needs.
type issuerMetadata struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
	// What token exchange needs (see Exchanger).
	TokenEndpoint string   `json:"token_endpoint"`
	GrantTypes    []string `json:"grant_types_supported"`
	AuthMethods   []string `json:"token_endpoint_auth_methods_supported"`
}

// maxDocument bounds what is read of a metadata or key set document: both are small, and
// a provider that sends megabytes is broken.
const maxDocument = 1 << 20

// metadataURLs lists where the issuer's metadata may be, in the order the MCP
// authorization spec asks clients to try them: RFC 8414 (path inserted after the
// well-known prefix), then OpenID Connect Discovery (path inserted, then appended).
func metadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("issuer %q is not an absolute URL", issuer)
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	at := func(p string) string {
		v := *u
		v.RawPath, v.Path, v.RawQuery, v.Fragment = "", p, "", ""
		return v.String()
	}
	if path == "" {
		return []string{
			at("/.well-known/oauth-authorization-server"),
			at("/.well-known/openid-configuration"),
		}, nil
	}
	return []string{
		at("/.well-known/oauth-authorization-server" + path),
		at("/.well-known/openid-configuration" + path),
		at(path + "/.well-known/openid-configuration"),
	}, nil
}

// discover fetches the issuer's metadata from the first well-known location that has it
// and checks that it names the same issuer (RFC 8414 §3.3, OIDC Discovery §4.3), which
// stops a document served for one issuer from vouching for keys of another.
func discover(ctx context.Context, client *http.Client, issuer string) (*issuerMetadata, error) {
	urls, err := metadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, u := range urls {
		var md issuerMetadata
		if err := getJSON(ctx, client, u, &md); err != nil {
			errs = append(errs, err)
			continue
		}
		if md.Issuer != issuer {
			return nil, fmt.Errorf("metadata at %s names issuer %q, not %q: set the issuer exactly as the provider spells it (trailing slash included)", u, md.Issuer, issuer)
		}
		if md.JWKSURI == "" {
			return nil, fmt.Errorf("metadata at %s has no jwks_uri", u)
		}
		return &md, nil
	}
	return nil, fmt.Errorf("discover issuer %q: %w", issuer, errors.Join(errs...))
}

// getJSON GETs u and decodes its JSON body into v.
func getJSON(ctx context.Context, client *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("get %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("get %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return fmt.Errorf("get %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: %s", u, resp.Status)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("get %s: decode: %w", u, err)
	}
	return nil
}
