# Where jansson is, for the C SDK and the C bundles built on it: pkg-config says, so that
# the jansson of Homebrew (/opt/homebrew on Apple silicon) or MacPorts (/opt/local) is found
# as well as Debian's. Without pkg-config, or without jansson.pc, the compiler's own paths.
# Included by sdk-c/Makefile, examples/c, testdata/conformance/c and bundles/meos.
PKG_CONFIG ?= pkg-config
UNAME_S    ?= $(shell uname -s)
JANSSON_CFLAGS ?= $(shell $(PKG_CONFIG) --cflags jansson 2>/dev/null)
JANSSON_LIBS   ?= $(or $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null),-ljansson)
