#!/bin/sh
# Installs the SDK into a temporary prefix, then builds a bundle in a
# directory outside the checkout the way a user would, with pkg-config, both
# against the shared library and statically, and checks each answers a call.
set -eu
cd "$(dirname "$0")/.."
checkout=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
make -s install PREFIX="$prefix" >/dev/null

mkdir "$work/bundle"
cat > "$work/bundle/main.c" <<'C'
#include <tn.h>

static json_t *twice(tn_call_t *call, json_t *args, void *user)
{
    (void)call, (void)user;
    return tn_result_textf("%lld",
        2 * (long long)json_integer_value(json_object_get(args, "n")));
}

int main(void)
{
    tn_server_t *server = tn_server_new("outside", TN_VERSION);
    tn_tool_t tool = {.name = "twice", .handler = twice,
        .input_schema = "{\"type\":\"object\",\"properties\":"
                        "{\"n\":{\"type\":\"integer\"}},\"required\":[\"n\"]}"};
    if (!server || tn_server_add_tool(server, &tool, NULL) != 0)
        return 1;
    int rc = tn_server_run(server);
    tn_server_free(server);
    return rc != 0;
}
C

# Where the dynamic loader is told to look, and how a binary's libraries are listed.
case $(uname -s) in
Darwin) libvar=DYLD_LIBRARY_PATH shared_lib=libtn.1.dylib list_libs="otool -L" ;;
*) libvar=LD_LIBRARY_PATH shared_lib=libtn.so.1 list_libs=ldd ;;
esac

# jansson.pc's folder stays on the path: Homebrew's or MacPorts' is not pkg-config's default.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
cd "$work/bundle"
want='{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"42"}]}}'
request='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"twice","arguments":{"n":21}}}'

# The README's two link lines, as it gives them: each must be there word for word.
readme_installed='    cc -std=c11 main.c $(pkg-config --cflags --libs tn) -Wl,-rpath,"$(pkg-config --variable=libdir tn)" -o hello'
readme_checkout='    cc -std=c11 -I"$SDK/include" $(pkg-config --cflags jansson) main.c "$SDK/build/libtn.a" \'
for line in "$readme_installed" "$readme_checkout"; do
    grep -qxF "$line" "$checkout/README.md" || { echo "sdk-c/README.md no longer says: $line" >&2; exit 1; }
done

# Installed, against the shared library found by its rpath alone (the loader's path
# variable unset, as a bundle started by toolnode has it).
# shellcheck disable=SC2046  # pkg-config's output is meant to be split
cc -std=c11 main.c $(pkg-config --cflags --libs tn) -Wl,-rpath,"$(pkg-config --variable=libdir tn)" -o hello
got=$(echo "$request" | env -u "$libvar" ./hello)
[ "$got" = "$want" ] || { echo "shared build answered: $got" >&2; exit 1; }
env -u "$libvar" $list_libs ./hello | grep -q "$prefix/lib/$shared_lib" || { echo "shared build did not link $shared_lib" >&2; exit 1; }

# From the checkout, against its static library.
SDK=$checkout
# shellcheck disable=SC2046
cc -std=c11 -I"$SDK/include" $(pkg-config --cflags jansson) main.c "$SDK/build/libtn.a" \
    $(pkg-config --libs jansson) -pthread -o hello
got=$(echo "$request" | ./hello)
[ "$got" = "$want" ] || { echo "the checkout's static build answered: $got" >&2; exit 1; }

# shellcheck disable=SC2046
${CC:-cc} -std=c11 -Wall -Wextra -Werror -o static main.c $(pkg-config --cflags tn) \
    "$prefix/lib/libtn.a" $(pkg-config --libs jansson) -pthread
got=$(echo "$request" | ./static)
[ "$got" = "$want" ] || { echo "static build answered: $got" >&2; exit 1; }
echo "install: header, libtn.a, libtn.so and tn.pc under a prefix; a bundle outside the checkout builds and answers"
