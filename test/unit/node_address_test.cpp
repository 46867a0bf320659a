// Node addresses (issue 15): `host:port` parsing and the loopback rule that decides whether a
// node or a front may go without TLS.
#include <doctest/doctest.h>

#include "actors/node.hpp"

using namespace llmx;

TEST_CASE("node address: host:port, bracketed IPv6, and what is refused") {
  auto a = parse_node_address("127.0.0.1:7000");
  REQUIRE(a);
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == 7000);
  CHECK(a->text() == "127.0.0.1:7000");
  auto v6 = parse_node_address("[::1]:0");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(v6->port == 0);
  CHECK(v6->text() == "[::1]:0");
  for (const char* bad : {"", "127.0.0.1", ":7000", "host:", "host:70000", "host:7x", "::1:7000", "[::1]7000", "h:-1"})
    CHECK_MESSAGE(!parse_node_address(bad), bad);
}

TEST_CASE("node address: only loopback addresses go without TLS, never a name that merely looks like one") {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "localhost"}) CHECK_MESSAGE(is_loopback_host(host), host);
  for (const char* host : {"127.evil.example", "128.0.0.1", "0.0.0.0", "10.0.0.1", "::", "::ffff:8.8.8.8", "example.com", ""})
    CHECK_MESSAGE(!is_loopback_host(host), host);
}
