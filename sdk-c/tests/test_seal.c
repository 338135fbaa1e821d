/* The primitives that seal requestState, against published test vectors. */
#include "tn_private.h"

#include "check.h"

#include <stdlib.h>
#include <string.h>

static void hex(const unsigned char *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

int main(void)
{
    unsigned char sum[32];
    char text[65];

    /* FIPS 180-2, appendix B.1 and B.2. */
    tn__sha256("abc", 3, sum);
    hex(sum, 32, text);
    CHECK_STR(text, "ba7816bf8f01cfea414140de5dae2223"
                    "b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    tn__sha256(two, strlen(two), sum);
    hex(sum, 32, text);
    CHECK_STR(text, "248d6a61d20638b8e5c026930c3e6039"
                    "a33ce45964ff2167f6ecedd419db06c1");

    /* RFC 4231, test cases 2 and 6 (a key longer than a block). */
    const char *data = "what do ya want for nothing?";
    tn__hmac_sha256((const unsigned char *)"Jefe", 4, data, strlen(data), sum);
    hex(sum, 32, text);
    CHECK_STR(text, "5bdcc146bf60754e6a042426089575c7"
                    "5a003f089d2739839dec58b964ec3843");
    unsigned char key[131];
    memset(key, 0xaa, sizeof key);
    const char *big = "Test Using Larger Than Block-Size Key - Hash Key First";
    tn__hmac_sha256(key, sizeof key, big, strlen(big), sum);
    hex(sum, 32, text);
    CHECK_STR(text, "60e431591ee0b67f0d8a26aacbf5b77f"
                    "8e0bc6213728c5140546040f0ee37f54");

    /* RFC 4648 section 10, in the URL alphabet without padding. */
    const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *coded[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE",
                           "Zm9vYmFy"};
    for (int i = 0; i < 7; i++) {
        char *b = tn__b64url((const unsigned char *)plain[i], strlen(plain[i]));
        CHECK_STR(b, coded[i]);
        size_t n = 0;
        unsigned char *back = tn__unb64url(b, strlen(b), &n);
        CHECK(back && n == strlen(plain[i]) && !memcmp(back, plain[i], n));
        free(back);
        free(b);
    }
    unsigned char bytes[2] = {0xfb, 0xff};
    char *b = tn__b64url(bytes, 2);
    CHECK_STR(b, "-_8");
    free(b);
    size_t n = 0;
    CHECK(tn__unb64url("a+b", 3, &n) == NULL);
    CHECK_DONE();
}
