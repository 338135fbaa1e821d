/* SHA-256 (FIPS 180-4), HMAC-SHA256 (RFC 2104) and unpadded base64url
 * (RFC 4648 section 5): what sealing a requestState needs, without linking
 * a crypto library into every bundle. */
#include "tn_private.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t h[8];
    uint64_t length; /* bytes hashed so far */
    unsigned char block[64];
    size_t used;
} sha256_t;

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(sha256_t *s, const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) +
                      ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) +
                      ((a & b) ^ (a & c) ^ (b & c));
        h = g, g = f, f = e, e = d + t1;
        d = c, c = b, b = a, a = t1 + t2;
    }
    s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
    s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

static void sha256_init(sha256_t *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                   0xa54ff53a, 0x510e527f, 0x9b05688c,
                                   0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->length = 0;
    s->used = 0;
}

static void sha256_add(sha256_t *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->length += n;
    while (n > 0) {
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->block + s->used, p, take);
        s->used += take, p += take, n -= take;
        if (s->used == 64) {
            compress(s, s->block);
            s->used = 0;
        }
    }
}

static void sha256_end(sha256_t *s, unsigned char out[32])
{
    uint64_t bits = s->length * 8;
    unsigned char pad = 0x80;
    sha256_add(s, &pad, 1);
    pad = 0;
    while (s->used != 56)
        sha256_add(s, &pad, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_add(s, len, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void tn__sha256(const void *data, size_t n, unsigned char out[32])
{
    sha256_t s;
    sha256_init(&s);
    sha256_add(&s, data, n);
    sha256_end(&s, out);
}

void tn__hmac_sha256(const unsigned char *key, size_t key_len,
                     const void *data, size_t n, unsigned char out[32])
{
    unsigned char k[64] = {0}, pad[64], inner[32];
    if (key_len > 64)
        tn__sha256(key, key_len, k);
    else
        memcpy(k, key, key_len);
    sha256_t s;
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x36;
    sha256_init(&s);
    sha256_add(&s, pad, 64);
    sha256_add(&s, data, n);
    sha256_end(&s, inner);
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x5c;
    sha256_init(&s);
    sha256_add(&s, pad, 64);
    sha256_add(&s, inner, 32);
    sha256_end(&s, out);
}

static const char B64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char B64_STD[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *tn__base64(const unsigned char *data, size_t n, int url)
{
    const char *alphabet = url ? B64 : B64_STD;
    char *out = malloc((n + 2) / 3 * 4 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)data[i + 1] << 8;
        if (i + 2 < n)
            v |= data[i + 2];
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
        if (i + 1 < n)
            out[o++] = alphabet[v >> 6 & 63];
        else if (!url)
            out[o++] = '=';
        if (i + 2 < n)
            out[o++] = alphabet[v & 63];
        else if (!url)
            out[o++] = '=';
    }
    out[o] = '\0';
    return out;
}

char *tn__b64url(const unsigned char *data, size_t n)
{
    return tn__base64(data, n, 1);
}

unsigned char *tn__unb64url(const char *text, size_t n, size_t *out_len)
{
    unsigned char *out = malloc(n / 4 * 3 + 3);
    if (!out)
        return NULL;
    uint32_t v = 0;
    int bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const char *c = memchr(B64, text[i], 64);
        if (!c || !text[i]) {
            free(out);
            return NULL;
        }
        v = v << 6 | (uint32_t)(c - B64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(v >> bits);
        }
    }
    *out_len = o;
    return out;
}
