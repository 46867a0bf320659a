// CAF 0.17 serialization for reflected structs: one generic `inspect` derived from each struct's
// field list, so every message type can cross a process boundary through CAF's middleman without
// a second description. Handles the wrappers CAF 0.17 does not know (std::optional, Nullable,
// OneOf, named enums, RawJson) by encoding them as flag/index + value.
#pragma once

#include <caf/error.hpp>
#include <caf/sec.hpp>
#include <caf/meta/type_name.hpp>

#include "protocol/base/reflect.hpp"

namespace llmx::caf_bridge {

template <class Inspector>
constexpr bool is_void_inspector = std::is_void_v<typename Inspector::result_type>;

template <class Inspector, class T>
caf::error value(Inspector& f, T& x);

// Vectors whose elements CAF cannot handle itself (anything but numbers and strings).
template <class T>
struct is_complex_vector : std::false_type {};
template <class T, class A>
struct is_complex_vector<std::vector<T, A>>
    : std::bool_constant<!std::is_arithmetic_v<T> && !std::is_same_v<T, std::string>> {};

template <class Inspector, class... Ts>
caf::error call(Inspector& f, Ts&&... xs) {
  if constexpr (is_void_inspector<Inspector>) {
    f(std::forward<Ts>(xs)...);
    return caf::none;
  } else {
    return f(std::forward<Ts>(xs)...);
  }
}

template <class Inspector, Reflected T>
caf::error reflected(Inspector& f, T& x) {
  caf::error err;
  T::fields(x, [&](std::string_view, auto& m, Field = Field::required) {
    if (!err) err = value(f, m);
  });
  return err;
}

template <class Inspector, class T>
caf::error value(Inspector& f, T& x) {
  if constexpr (is_optional<T>::value || is_nullable<T>::value) {
    bool has = x.has_value();
    if (auto err = call(f, has)) return err;
    if constexpr (Inspector::writes_state) {
      if (has)
        x.emplace();
      else
        x.reset();
    }
    if (has) return value(f, *x);
    return caf::none;
  } else if constexpr (is_one_of<T>::value) {
    uint32_t index = static_cast<uint32_t>(x.value.index());
    if (auto err = call(f, index)) return err;
    if constexpr (Inspector::writes_state) {
      // Re-create the alternative with this index before loading into it.
      using V = decltype(x.value);
      if (index >= std::variant_size_v<V>) return caf::make_error(caf::sec::invalid_argument);
      [&]<size_t... Is>(std::index_sequence<Is...>) {
        ((Is == index ? (void)(x.value = V{std::in_place_index<Is>}) : (void)0), ...);
      }(std::make_index_sequence<std::variant_size_v<V>>{});
    }
    return std::visit([&](auto& alt) { return reflected(f, alt); }, x.value);
  } else if constexpr (std::is_enum_v<T>) {
    auto raw = static_cast<int32_t>(x);
    if (auto err = call(f, raw)) return err;
    if constexpr (Inspector::writes_state) x = static_cast<T>(raw);
    return caf::none;
  } else if constexpr (is_raw_json_v<T>) {
    return call(f, x.text);
  } else if constexpr (std::is_same_v<T, SharedString>) {
    if constexpr (Inspector::writes_state) {
      std::string text;
      if (auto err = call(f, text)) return err;
      x = SharedString(std::move(text));
      return caf::none;
    } else {
      return call(f, const_cast<std::string&>(x.str()));  // saving only reads it
    }
  } else if constexpr (is_complex_vector<T>::value) {
    uint64_t n = x.size();
    if (auto err = call(f, n)) return err;
    if constexpr (Inspector::writes_state) x.resize(n);
    for (auto& e : x)
      if (auto err = value(f, e)) return err;
    return caf::none;
  } else if constexpr (is_string_map<T>::value) {
    uint64_t n = x.size();
    if (auto err = call(f, n)) return err;
    if constexpr (Inspector::writes_state) {
      x.clear();
      for (uint64_t i = 0; i < n; ++i) {
        std::string k;
        typename T::mapped_type v{};
        if (auto err = call(f, k)) return err;
        if (auto err = value(f, v)) return err;
        x.emplace(std::move(k), std::move(v));
      }
    } else {
      for (auto& [k, v] : x) {
        auto key = k;
        if (auto err = call(f, key)) return err;
        if (auto err = value(f, v)) return err;
      }
    }
    return caf::none;
  } else if constexpr (Reflected<T>) {
    return reflected(f, x);
  } else {
    return call(f, x);
  }
}

}  // namespace llmx::caf_bridge

namespace llmx {

// Found by ADL for every reflected struct in namespace llmx.
template <class Inspector, Reflected T>
typename Inspector::result_type inspect(Inspector& f, T& x) {
  if constexpr (caf_bridge::is_void_inspector<Inspector>) {
    caf_bridge::reflected(f, x);
  } else {
    return caf_bridge::reflected(f, x);
  }
}

}  // namespace llmx

namespace llmx::mcp {
// The MCP types that cross actor boundaries (tasks) are found by ADL here too.
using llmx::inspect;
}  // namespace llmx::mcp

namespace llmx::models {
// What providers serve (the model registry's answers) crosses actor boundaries too.
using llmx::inspect;
}  // namespace llmx::models
