// Single place that includes cpp-httplib. Debian builds libcpp-httplib.so with OpenSSL, zlib and
// brotli support (see its pkg-config Cflags); some classes (e.g. httplib::Request) change layout
// with those macros, so they must match the library to keep the ABI consistent.
#pragma once

#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_OPENSSL_SUPPORT
#endif
#ifndef CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#endif
#ifndef CPPHTTPLIB_BROTLI_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#endif

#include <httplib.h>
