#!/bin/sh
# The C SDK's ABI, run by make test (make test-abi, from sdk-c/):
# - abidiff compares build/$SONAME against abi/libtn.abi, the ABI of the last
#   release: an incompatible change fails unless the soname moved;
# - the library exports what tn.h declares (tn_ and a letter), nothing else;
# - io.c (framing and writing) is a leaf: it calls nothing else of the
#   library.
set -u
lib=build/${SONAME:?SONAME is the library to check, e.g. libtn.so.1}
fail=0

if [ "$(uname -s)" = Darwin ]; then
    echo "abi: abidiff reads ELF only; not checked on macOS"
else
    if ! command -v abidiff >/dev/null; then
        echo "abi: abidiff is missing (Debian: abigail-tools, which make test installs)" >&2
        exit 1
    fi
    # The verdict leaves out functions added (compatible); the report shows them.
    abidiff --no-added-syms --suppressions abi/libtn.suppr abi/libtn.abi "$lib" \
        >build/abidiff.txt
    rc=$?
    was=$(sed -n 's/.*soname=.\([^"'"'"']*\).*/\1/p' abi/libtn.abi | head -n 1)
    if [ $((rc & 3)) -ne 0 ]; then
        echo "abi: abidiff could not compare (exit $rc):" >&2
        cat build/abidiff.txt >&2
        fail=1
    elif [ $rc -ne 0 ] && [ "$was" = "$SONAME" ]; then
        echo "abi: $lib breaks the ABI of the last release ($was) without a new soname:" >&2
        cat build/abidiff.txt >&2
        echo "abi: keep the ABI (append to the structs, add functions) or raise ABI_MAJOR in sdk-c/Makefile" >&2
        fail=1
    elif [ $rc -ne 0 ]; then
        echo "abi: incompatible with the last release ($was), and the soname moved to $SONAME: run make abi-baseline when releasing"
    elif ! abidiff --suppressions abi/libtn.suppr abi/libtn.abi "$lib" >build/abidiff.txt; then
        echo "abi: compatible with the last release ($was), with additions:"
        cat build/abidiff.txt
    else
        echo "abi: $lib has the ABI of the last release ($was)"
    fi

    extra=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sed 's/@.*//' |
        grep -v '^tn_[a-z]' || true)
    if [ -n "$extra" ]; then
        echo "abi: $lib exports what tn.h does not declare:" $extra >&2
        fail=1
    fi
fi

calls=$(nm -u build/obj/io.o | awk '{print $2}' | grep '^tn_' || true)
if [ -n "$calls" ]; then
    echo "abi: io.c must be a leaf, and calls" $calls >&2
    fail=1
fi
exit $fail
