// One description per wire struct, used by every encoder: a struct lists its fields once in a
// static `fields` function and gets JSON encoding, JSON decoding, CAF serialization (so it can
// cross actor and process boundaries) and, later, schema export from that single list.
//
//   struct Foo {
//     std::string name;
//     std::optional<int64_t> size;               // omitted when empty, optional on input
//     template <class Self, class V> static void fields(Self& s, V&& v) {
//       v("name", s.name);
//       v("size", s.size);
//     }
//   };
//
// Field wrappers and their JSON meaning:
//   T                 always written; required on input (pass Field::defaulted to make it optional)
//   SharedString      a string (its copies share one buffer: ids repeated in streamed events)
//   std::optional<T>  omitted when empty; may be absent or null on input
//   Nullable<T>       written as null when empty; may be absent or null on input
//   RawJson           any JSON value, kept as compact text
//   JsonOf<T>         JSON text already encoded from a T (passed through like RawJson); the
//                     schema describes it as a T, so pre-encoded fields stay typed in the export
//   OneOf<Ts...>      internally tagged union: {"type": T::kind, ...T's fields}
//   Tagged<Ts...>     externally tagged union: {"<T::kind>": {...T's fields}}
//   enums             strings, through EnumTraits<E>
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "protocol/base/shared_string.hpp"

namespace llmx {

// Flags a field may carry as the third argument of the visitor.
enum class Field : uint8_t {
  required = 0,
  defaulted = 1,  // missing on input keeps the default value; always written
};

template <class T>
struct Nullable : std::optional<T> {
  using std::optional<T>::optional;
  Nullable() = default;
  Nullable(const std::optional<T>& o) : std::optional<T>(o) {}
  template <class U>
    requires std::is_assignable_v<std::optional<T>&, U &&>
  Nullable& operator=(U&& u) {
    std::optional<T>::operator=(std::forward<U>(u));
    return *this;
  }
};

// Any JSON value, stored as compact JSON text ("null" by default).
struct RawJson {
  std::string text = "null";
  bool is_null() const { return text == "null"; }
  friend bool operator==(const RawJson&, const RawJson&) = default;
};

// Compact JSON text that holds an encoded T. Used where the value is produced as JSON once and
// passed through (event replays, recursive types), while the exported schema still says T.
template <class T>
struct JsonOf : RawJson {
  using schema_type = T;
  JsonOf() = default;
  explicit JsonOf(std::string encoded) : RawJson{std::move(encoded)} {}
};

// RawJson and every JsonOf<T>: JSON text kept as it is.
template <class T>
inline constexpr bool is_raw_json_v = std::is_base_of_v<RawJson, T>;

// An internally tagged union. Each alternative declares `static constexpr std::string_view kind`.
template <class... Ts>
struct OneOf {
  std::variant<Ts...> value;
  OneOf() = default;
  template <class T>
    requires(std::is_constructible_v<std::variant<Ts...>, T &&> &&
             !std::is_same_v<std::decay_t<T>, OneOf>)
  OneOf(T&& x) : value(std::forward<T>(x)) {}

  template <class T>
  bool is() const {
    return std::holds_alternative<T>(value);
  }
  template <class T>
  const T* get_if() const {
    return std::get_if<T>(&value);
  }
  template <class T>
  T* get_if() {
    return std::get_if<T>(&value);
  }
  std::string_view kind() const {
    return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::kind; }, value);
  }
};

// An externally tagged union: {"<T::kind>": {...T's fields}} (FileChange, TurnItem).
template <class... Ts>
struct Tagged : OneOf<Ts...> {
  using OneOf<Ts...>::OneOf;
  Tagged() = default;
};

// Enum <-> string table. Specialise with `static constexpr std::array values` of pairs.
template <class E>
struct EnumTraits;

template <class E>
std::string_view enum_name(E e) {
  for (const auto& [v, n] : EnumTraits<E>::values)
    if (v == e) return n;
  return "";
}

template <class E>
std::optional<E> enum_from_name(std::string_view s) {
  for (const auto& [v, n] : EnumTraits<E>::values)
    if (n == s) return v;
  return std::nullopt;
}

// --- declaring reflected structs ----------------------------------------------------------------

// The field list of a struct: LLMX_FIELDS(v("name", s.name); v("size", s.size)).
#define LLMX_FIELDS(...)            \
  template <class S, class V>       \
  static void fields(S& s, V&& v) { \
    __VA_ARGS__;                    \
  }
#define LLMX_NO_FIELDS        \
  template <class S, class V> \
  static void fields(S&, V&&) {}

// A union alternative with its tag: LLMX_TAGGED(Name, "tag", members...; LLMX_FIELDS(...)).
#define LLMX_TAGGED(Name, tag, ...)                \
  struct Name {                                   \
    static constexpr std::string_view kind = tag; \
    __VA_ARGS__                                   \
  };

// The common alternative with a single string field.
#define LLMX_TAGGED_STRING(Name, tag, field)      \
  struct Name {                                   \
    static constexpr std::string_view kind = tag; \
    std::string field;                            \
    LLMX_FIELDS(v(#field, s.field))               \
  };

// --- type categories ----------------------------------------------------------------------------

struct NoopFieldVisitor {
  template <class M>
  void operator()(std::string_view, M&, Field = Field::required) const {}
};

template <class T>
concept Reflected = requires(T& t) { T::fields(t, NoopFieldVisitor{}); };

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct is_nullable : std::false_type {};
template <class T>
struct is_nullable<Nullable<T>> : std::true_type {};

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

template <class T>
struct is_string_map : std::false_type {};
template <class T, class C, class A>
struct is_string_map<std::map<std::string, T, C, A>> : std::true_type {};

template <class T>
struct is_one_of : std::false_type {};
template <class... Ts>
struct is_one_of<OneOf<Ts...>> : std::true_type {};
template <class... Ts>
struct is_one_of<Tagged<Ts...>> : std::true_type {};

template <class T>
struct is_tagged : std::false_type {};
template <class... Ts>
struct is_tagged<Tagged<Ts...>> : std::true_type {};

template <class T>
concept EnumWithNames = std::is_enum_v<T> && requires { EnumTraits<T>::values; };

}  // namespace llmx
