# The MEOS bundle on macOS, included by the Makefile where `uname -s` is Darwin (and by its
# darwin-wheel target, which lays the macOS wheel out on any system for darwin_test.go).
#
# pymeos-cffi 1.3.0 has a macOS wheel for Apple silicon only (macosx_14_0_arm64: macOS 14
# or later); none for Intel Macs. delocate put libmeos and the libraries it needs (GEOS,
# PROJ, json-c, GSL...) in pymeos_cffi/.dylibs/, each naming the others by @loader_path,
# and gave libmeos a placeholder install name (/DLC/pymeos_cffi/.dylibs/libmeos.dylib).
# The binary is linked against the file, then pointed at it by @loader_path, so that it
# runs from wherever the bundle folder is; changing a load command voids the linker's
# signature, and Apple silicon runs signed code only: it is signed again, ad hoc.
WHEEL_PLATFORM = macosx_14_0_arm64
LIBS      = $(PYMEOS)/pymeos_cffi/.dylibs
LIBMEOS   = $(LIBS)/libmeos.dylib
LINK_MEOS = $(LIBMEOS)
POST_LINK = install_name_tool -change "$$(otool -D $(LIBMEOS) | tail -n 1)" \
  @loader_path/pymeos/pymeos_cffi/.dylibs/libmeos.dylib $@ && codesign --force --sign - $@
