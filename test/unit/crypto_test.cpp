#include <doctest/doctest.h>

#include "protocol/base/crypto.hpp"

using namespace llmx;

TEST_CASE("crypto: digests and the HMAC match the standard test vectors") {
  CHECK(crypto::hex(crypto::sha1("abc")) == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(crypto::sha1_hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  CHECK(crypto::sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  CHECK(crypto::sha1_hex(std::string(1000, 'a')) == "291e9a6c66994949b57ba5e650361e98fc36b1ba");
  CHECK(crypto::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(crypto::hex(crypto::sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(crypto::hex(crypto::sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // RFC 4231, test case 2.
  CHECK(crypto::hex(crypto::hmac_sha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_CASE("crypto: random bytes differ from call to call and fill what is asked") {
  std::string a(32, '\0'), b(32, '\0');
  crypto::random_bytes(a.data(), a.size());
  crypto::random_bytes(b.data(), b.size());
  CHECK(a != b);
  CHECK(a != std::string(32, '\0'));
}

TEST_CASE("crypto: constant-time equality is equality") {
  CHECK(crypto::equal_constant_time("secret", "secret"));
  CHECK_FALSE(crypto::equal_constant_time("secret", "secreT"));
  CHECK_FALSE(crypto::equal_constant_time("secret", "secret!"));
  CHECK(crypto::equal_constant_time("", ""));
  CHECK(crypto::hex(std::string("\x00\xff\x10", 3)) == "00ff10");
}
