// Generic JSON encoding and decoding of reflected structs (see reflect.hpp). Structs with unusual
// wire shapes provide their own `write_json(Writer&, const T&)` / `read_json(Element, T&)`
// overloads, found by ADL, which take precedence over the generic path.
#pragma once

#include <fmt/format.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/base/json_writer.hpp"
#include "protocol/base/reflect.hpp"

namespace llmx::json {

template <class T>
void write_value(Writer& w, const T& x);
template <class T>
void read_value(Element e, T& x);

template <class T, size_t... Is>
bool read_one_of(Object o, std::string_view tag, T& x, std::index_sequence<Is...>);

template <class T>
concept HasCustomWrite = requires(Writer& w, const T& x) { write_json(w, x); };
template <class T>
concept HasCustomRead = requires(Element e, T& x) { read_json(e, x); };

// Writes the fields of a reflected struct into an already opened object.
template <Reflected T>
void write_fields(Writer& w, const T& x) {
  T::fields(x, [&w](std::string_view name, const auto& m, Field = Field::required) {
    using M = std::decay_t<decltype(m)>;
    if constexpr (is_optional<M>::value) {
      if (!m) return;
      w.plain_key(name);
      write_value(w, *m);
    } else if constexpr (is_nullable<M>::value) {
      w.plain_key(name);
      if (m)
        write_value(w, *m);
      else
        w.null();
    } else {
      w.plain_key(name);
      write_value(w, m);
    }
  });
}

template <class T>
void write_value(Writer& w, const T& x) {
  if constexpr (HasCustomWrite<T>) {
    write_json(w, x);
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>) {
    w.string(x);
  } else if constexpr (std::is_same_v<T, SharedString>) {
    w.string(x.str());
  } else if constexpr (std::is_same_v<T, bool>) {
    w.boolean(x);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    w.number(static_cast<int64_t>(x));
  } else if constexpr (std::is_integral_v<T>) {
    w.number(static_cast<uint64_t>(x));
  } else if constexpr (std::is_floating_point_v<T>) {
    w.number(static_cast<double>(x));
  } else if constexpr (is_raw_json_v<T>) {
    w.raw(x.text.empty() ? std::string_view("null") : std::string_view(x.text));
  } else if constexpr (EnumWithNames<T>) {
    w.string(enum_name(x));
  } else if constexpr (is_optional<T>::value || is_nullable<T>::value) {
    if (x)
      write_value(w, *x);
    else
      w.null();
  } else if constexpr (is_vector<T>::value) {
    w.begin_array();
    for (const auto& e : x) write_value(w, e);
    w.end_array();
  } else if constexpr (is_string_map<T>::value) {
    w.begin_object();
    for (const auto& [k, v] : x) {
      w.key(k);
      write_value(w, v);
    }
    w.end_object();
  } else if constexpr (is_tagged<T>::value) {
    std::visit(
        [&w](const auto& alt) {
          using A = std::decay_t<decltype(alt)>;
          w.begin_object();
          w.plain_key(A::kind);
          w.begin_object();
          write_fields(w, alt);
          w.end_object();
          w.end_object();
        },
        x.value);
  } else if constexpr (is_one_of<T>::value) {
    std::visit(
        [&w](const auto& alt) {
          using A = std::decay_t<decltype(alt)>;
          w.begin_object();
          w.plain_key("type").string(A::kind);
          write_fields(w, alt);
          w.end_object();
        },
        x.value);
  } else if constexpr (Reflected<T>) {
    w.begin_object();
    write_fields(w, x);
    w.end_object();
  } else {
    static_assert(sizeof(T) == 0, "no JSON encoding for this type");
  }
}

template <class T>
std::string to_json(const T& x) {
  Writer w;
  write_value(w, x);
  return w.take();
}

// --- decoding -----------------------------------------------------------------------------------

[[noreturn]] inline void type_error(Element e, std::string_view expected) {
  throw DecodeError(fmt::format("invalid type: expected {}, got {}", expected, type_name(e)));
}

// Re-throws a nested decode error with the field name prepended to its path.
[[noreturn]] inline void rethrow_in_field(std::string_view field, const DecodeError& err) {
  throw err.within(field);
}

template <Reflected T>
void read_fields(Object o, T& x) {
  T::fields(x, [&o](std::string_view name, auto& m, Field flag = Field::required) {
    using M = std::decay_t<decltype(m)>;
    auto r = o.at_key(name);
    bool absent = r.error() != simdjson::SUCCESS;
    if (absent || r.value_unsafe().is_null()) {
      if constexpr (is_optional<M>::value || is_nullable<M>::value) {
        m.reset();
        return;
      } else if constexpr (is_raw_json_v<M>) {
        m.text = "null";
        return;
      } else {
        if (flag == Field::defaulted) return;
        if (absent) throw DecodeError(fmt::format("missing field `{}`", name));
      }
    }
    try {
      if constexpr (is_optional<M>::value || is_nullable<M>::value) {
        m.emplace();
        read_value(r.value_unsafe(), *m);
      } else {
        read_value(r.value_unsafe(), m);
      }
    } catch (const DecodeError& err) {
      rethrow_in_field(name, err);
    }
  });
}

template <class T>
void read_value(Element e, T& x) {
  if constexpr (HasCustomRead<T>) {
    read_json(e, x);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!e.is_string()) type_error(e, "string");
    x = std::string(e.get_string().value_unsafe());
  } else if constexpr (std::is_same_v<T, SharedString>) {
    if (!e.is_string()) type_error(e, "string");
    x = SharedString(std::string(e.get_string().value_unsafe()));
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!e.is_bool()) type_error(e, "boolean");
    x = e.get_bool().value_unsafe();
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    if (!e.is_int64()) type_error(e, "integer");
    x = static_cast<T>(e.get_int64().value_unsafe());
  } else if constexpr (std::is_integral_v<T>) {
    if (!e.is_uint64()) type_error(e, "unsigned integer");
    x = static_cast<T>(e.get_uint64().value_unsafe());
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!e.is_number()) type_error(e, "number");
    x = static_cast<T>(e.get_double().value_unsafe());
  } else if constexpr (is_raw_json_v<T>) {
    x.text = to_text(e);
  } else if constexpr (EnumWithNames<T>) {
    if (!e.is_string()) type_error(e, "string");
    std::string_view s = e.get_string().value_unsafe();
    auto v = enum_from_name<T>(s);
    if (!v) {
      std::string allowed;
      for (const auto& [_, n] : EnumTraits<T>::values) {
        if (!allowed.empty()) allowed += ", ";
        allowed += fmt::format("`{}`", n);
      }
      throw DecodeError(fmt::format("unknown variant: `{}`, expected one of {}", s, allowed));
    }
    x = *v;
  } else if constexpr (is_optional<T>::value || is_nullable<T>::value) {
    if (e.is_null()) {
      x.reset();
    } else {
      x.emplace();
      read_value(e, *x);
    }
  } else if constexpr (is_vector<T>::value) {
    if (!e.is_array()) type_error(e, "array");
    x.clear();
    size_t i = 0;
    for (auto arr = e.get_array().value_unsafe(); Element item : arr) {
      try {
        read_value(item, x.emplace_back());
      } catch (const DecodeError& err) {
        rethrow_in_field(std::to_string(i), err);
      }
      ++i;
    }
  } else if constexpr (is_string_map<T>::value) {
    if (!e.is_object()) type_error(e, "object");
    x.clear();
    for (auto obj = e.get_object().value_unsafe(); auto [k, v] : obj) {
      try {
        read_value(v, x[std::string(k)]);
      } catch (const DecodeError& err) {
        rethrow_in_field(k, err);
      }
    }
  } else if constexpr (is_tagged<T>::value) {
    if (!e.is_object()) type_error(e, "object");
    Object o = e.get_object().value_unsafe();
    if (o.size() != 1) throw DecodeError("invalid type: expected an object with exactly one key");
    auto [tag, inner] = *o.begin();
    if (!inner.is_object()) type_error(inner, "object");
    bool found = read_one_of(inner.get_object().value_unsafe(), tag, x,
                             std::make_index_sequence<std::variant_size_v<decltype(x.value)>>{});
    if (!found) throw DecodeError(fmt::format("unknown variant `{}`", tag));
  } else if constexpr (is_one_of<T>::value) {
    if (!e.is_object()) type_error(e, "object");
    Object o = e.get_object().value_unsafe();
    auto tag = get_string(o, "type");
    if (!tag) throw DecodeError("missing field `type`");
    bool found = read_one_of(o, *tag, x, std::make_index_sequence<std::variant_size_v<decltype(x.value)>>{});
    if (!found) throw DecodeError(fmt::format("unknown variant `{}` for `type`", *tag));
  } else if constexpr (Reflected<T>) {
    if (!e.is_object()) type_error(e, "object");
    read_fields(e.get_object().value_unsafe(), x);
  } else {
    static_assert(sizeof(T) == 0, "no JSON decoding for this type");
  }
}

template <class T, size_t... Is>
bool read_one_of(Object o, std::string_view tag, T& x, std::index_sequence<Is...>) {
  bool found = false;
  auto try_one = [&]<size_t I>() {
    using A = std::variant_alternative_t<I, decltype(x.value)>;
    if (found || A::kind != tag) return;
    A alt{};
    read_fields(o, alt);
    x.value = std::move(alt);
    found = true;
  };
  (try_one.template operator()<Is>(), ...);
  return found;
}

template <class T>
T from_json(Element e) {
  T x{};
  read_value(e, x);
  return x;
}

// Parses text and decodes it; throws DecodeError.
template <class T>
T parse_as(std::string_view text) {
  Parser p;
  return from_json<T>(p.parse(text));
}

}  // namespace llmx::json
