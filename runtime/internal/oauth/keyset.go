package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hashicorp/go-hclog"
)

// signingAlgs are the asymmetric JWS algorithms accepted on access tokens. Symmetric ones
// (HS*) are left out on purpose: with a published key set they would let anyone who read
// the JWKS mint tokens.
var signingAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// keySet is the issuer's JWKS, cached. It is fetched again when a token names a key id
// it does not hold (the provider rotated its keys), at most once per minRefresh so that
// tokens with made-up key ids cannot turn the node into a load generator against the
// provider; and when the copy is older than maxAge, so retired keys drop out.
//
// It implements oidc.KeySet: go-oidc checks the claims, this checks the signature, both
// through go-jose.
type keySet struct {
	url        string
	client     *http.Client
	minRefresh time.Duration
	maxAge     time.Duration
	now        func() time.Time
	log        hclog.Logger

	// fetch serialises fetches, so a burst of tokens signed with a new key makes one
	// request, not one each.
	fetch sync.Mutex

	mu          sync.RWMutex
	keys        jose.JSONWebKeySet
	fetched     time.Time // when keys were last replaced
	lastAttempt time.Time // when a fetch was last tried, successful or not
	lastUnknown time.Time // when a fetch for an unknown key id was last tried
}

// errUnknownKey says no key of the issuer's set matches the token's key id.
var errUnknownKey = errors.New("no key of the issuer's key set matches the token's key id")

// VerifySignature checks the JWS signature of raw against the issuer's keys and returns
// its payload.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(raw, signingAlgs)
	if err != nil {
		return nil, fmt.Errorf("parse token: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, fmt.Errorf("token has %d signatures, want 1", len(jws.Signatures))
	}
	kid := jws.Signatures[0].Header.KeyID

	keys, stale := k.lookup(kid)
	if len(keys) == 0 || stale {
		if err := k.refresh(ctx, len(keys) == 0); err != nil {
			k.log.Warn("refresh key set", "url", k.url, "error", err)
		}
		keys, _ = k.lookup(kid)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("key id %q: %w", kid, errUnknownKey)
	}
	for _, key := range keys {
		if payload, err := jws.Verify(key); err == nil {
			return payload, nil
		}
	}
	return nil, fmt.Errorf("token signature does not verify with key %q", kid)
}

// lookup returns the signing keys for kid (every signing key when kid is empty) and
// whether the cached set is older than maxAge.
func (k *keySet) lookup(kid string) ([]jose.JSONWebKey, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	stale := k.fetched.IsZero() || k.now().Sub(k.fetched) > k.maxAge
	var out []jose.JSONWebKey
	for _, key := range k.keys.Keys {
		if key.Use != "" && key.Use != "sig" {
			continue
		}
		if kid == "" || key.KeyID == kid {
			out = append(out, key)
		}
	}
	return out, stale
}

// refresh fetches the key set. A refresh for an unknown key id is skipped when the last
// such refresh was less than minRefresh ago; one for a stale set when another caller has
// just refreshed it or a fetch failed less than minRefresh ago. On failure the keys held
// so far stay in use: a provider that is briefly down should not lock every client out.
func (k *keySet) refresh(ctx context.Context, unknownKey bool) error {
	k.fetch.Lock()
	defer k.fetch.Unlock()
	k.mu.RLock()
	now := k.now()
	var skip bool
	if unknownKey {
		skip = !k.lastUnknown.IsZero() && now.Sub(k.lastUnknown) < k.minRefresh
	} else {
		skip = (!k.fetched.IsZero() && now.Sub(k.fetched) <= k.maxAge) ||
			(!k.lastAttempt.IsZero() && now.Sub(k.lastAttempt) < k.minRefresh)
	}
	k.mu.RUnlock()
	if skip {
		return nil
	}

	var set jose.JSONWebKeySet
	err := getJSON(ctx, k.client, k.url, &set)

	k.mu.Lock()
	defer k.mu.Unlock()
	k.lastAttempt = now
	if unknownKey {
		k.lastUnknown = now
	}
	if err != nil {
		return fmt.Errorf("fetch key set: %w", err)
	}
	k.keys = set
	k.fetched = now
	return nil
}
