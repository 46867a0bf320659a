// JSON Schema (draft-07) and TypeScript declarations derived from the same field lists the JSON
// codec encodes with (reflect.hpp, json_codec.hpp), so the exported schema cannot drift from the
// wire. The walk over a type produces a small schema tree (`Node`); both outputs are rendered
// from that tree.
//
// What becomes a named definition ($ref / its own .ts file): registered types (Registry::add),
// reflected structs, named enums and types with a schema hook. OneOf / Tagged unions are aliases
// without a name of their own, so they are written inline unless registered.
//
// Types with a custom `write_json` describe themselves next to their encoder with a hook found
// by ADL:   schema::Node json_schema(const T*, schema::Context&);   (see SandboxPolicy in
// policy.cpp); the Context lets a hook refer to other types with node_of<U>(c).
//
// The schema describes what we encode. `required` lists the keys the decoder insists on, so it
// also tells a client what it may leave out; decoder tolerances (DECISIONS P8) are not described.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "protocol/base/reflect.hpp"

namespace llmx::schema {

// Where a type is exported: DIR/ (framing, core model), DIR/v1/ or DIR/v2/ (protocol.md §4.8).
// In the bundle and in TypeScript only v2 is a separate namespace; root and v1 share one.
enum class Dir { root, v1, v2 };

struct Property;

// A JSON Schema subset, enough for every wire type and for TypeScript.
struct Node {
  enum class Kind { any, string, integer, number, boolean, null, array, map, object, ref, enums, constant, one_of, any_of };
  Kind kind = Kind::any;
  bool nullable = false;     // value may also be null (Nullable<T>)
  bool non_negative = false; // unsigned integers
  bool inline_type = false;  // a hook's type is written in place instead of as a definition
  std::string title;
  std::string description;
  std::string format;                  // "int64", "uint32", "double", "byte"...
  std::vector<Property> properties;    // object
  std::vector<Node> items;             // array: items[0]; map: items[0] = value schema
  std::vector<Node> alternatives;      // one_of / any_of
  std::vector<std::string> values;     // enums; constant: values[0]
  std::string ref;                     // ref: definition name
  bool ref_v2 = false;                 // ref: the definition lives under definitions.v2
};

struct Property {
  std::string name;
  Node schema;
  bool required = true;  // the decoder rejects the message without it
  bool omitted = false;  // the encoder leaves the key out when empty (std::optional): TS `name?:`
};

// --- building blocks, also for hooks and hand-written entries -----------------------------------

Node any();
Node string(std::string format = {});
Node integer(bool is_unsigned = false, std::string format = "int64");
Node number();
Node boolean();
Node null();
Node array(Node items);
Node map(Node values);
Node object(std::vector<Property> props, std::string title = {});
Node enum_strings(std::vector<std::string> values);
Node constant(std::string value);
Node one_of(std::vector<Node> alternatives);
Node any_of(std::vector<Node> alternatives);
Node nullable(Node n);
Node ref(std::string name, Dir dir = Dir::root);
Property prop(std::string name, Node schema, bool required = true);
Property optional_prop(std::string name, Node schema);  // omitted when empty

// "task_complete" / "thread/start" / "UserMessage" -> "TaskComplete" / "ThreadStart" / "UserMessage".
std::string pascal_case(std::string_view s);

// --- the definitions collected during a walk ----------------------------------------------------

struct Definition {
  std::string name;
  Dir dir = Dir::root;
  Node node;
};

class Context {
 public:
  // Names fixed by registration, by C++ type.
  using Names = std::map<std::type_index, std::pair<std::string, Dir>>;
  explicit Context(const Names* names = nullptr) : names_(names) {}

  std::optional<std::pair<std::string, Dir>> registered(std::type_index t) const;
  // A $ref to the definition (name, dir), building it with `body` on first use. Throws
  // std::logic_error when two different types claim the same name.
  Node define(std::optional<std::type_index> owner, const std::string& name, Dir dir,
              const std::function<Node()>& body);
  const Definition* find(const std::string& name, bool v2) const;
  // Every definition, sorted by (v2, name).
  std::vector<const Definition*> all() const;

 private:
  struct Slot {
    Definition def;
    std::optional<std::type_index> owner;
  };
  const Names* names_;
  std::map<std::pair<bool, std::string>, Slot> defs_;
};

// --- the walk -----------------------------------------------------------------------------------

template <class T>
concept HasSchemaHook = requires(const T* p, Context& c) {
  { json_schema(p, c) } -> std::same_as<Node>;
};

namespace detail {

std::string short_name(std::string_view pretty_function);
bool in_v2_namespace(std::string_view pretty_function);

template <class T>
std::string_view pretty() {
  return __PRETTY_FUNCTION__;
}

}  // namespace detail

// The name a type gets when nobody registered it: its C++ name without namespaces.
template <class T>
std::string type_name() {
  return detail::short_name(detail::pretty<T>());
}

template <class T>
Node node_of(Context& c);
template <class T>
Node body_of(Context& c, const std::string& name);

// The object of a reflected struct's fields, optionally preceded by the union tag property.
template <Reflected T>
Node fields_object(Context& c, std::optional<std::string_view> tag = std::nullopt, std::string title = {}) {
  std::vector<Property> props;
  if (tag) props.push_back(prop("type", constant(std::string(*tag))));
  T x{};
  T::fields(x, [&](std::string_view name, auto& m, Field flag = Field::required) {
    using M = std::decay_t<decltype(m)>;
    Property p;
    p.name = std::string(name);
    if constexpr (is_optional<M>::value) {
      p.schema = node_of<typename M::value_type>(c);
      p.required = false;
      p.omitted = true;
    } else {
      p.schema = node_of<M>(c);
      p.required = !is_nullable<M>::value && !is_raw_json_v<M> && flag != Field::defaulted;
    }
    props.push_back(std::move(p));
  });
  return object(std::move(props), std::move(title));
}

// Titles of union variants: "TaskComplete" + "EventMsg"; the struct's own name when unnamed.
template <class A>
std::string variant_title(const std::string& union_name) {
  return union_name.empty() ? type_name<A>() : pascal_case(A::kind) + union_name;
}

template <class T>
Node body_of(Context& c, const std::string& name) {
  if constexpr (HasSchemaHook<T>) {
    return json_schema(static_cast<const T*>(nullptr), c);
  } else if constexpr (EnumWithNames<T>) {
    std::vector<std::string> vals;
    for (const auto& [_, n] : EnumTraits<T>::values) vals.emplace_back(n);
    return enum_strings(std::move(vals));
  } else if constexpr (is_tagged<T>::value) {
    // {"<kind>": {...fields}}
    return [&]<class... As>(std::variant<As...>*) {
      return one_of({object({prop(std::string(As::kind), fields_object<As>(c))}, variant_title<As>(name))...});
    }(static_cast<decltype(T::value)*>(nullptr));
  } else if constexpr (is_one_of<T>::value) {
    // {"type": "<kind>", ...fields}
    return [&]<class... As>(std::variant<As...>*) {
      return one_of({fields_object<As>(c, As::kind, variant_title<As>(name))...});
    }(static_cast<decltype(T::value)*>(nullptr));
  } else if constexpr (Reflected<T>) {
    return fields_object<T>(c);
  } else {
    static_assert(sizeof(T) == 0, "no schema for this type: give it a json_schema(const T*) hook");
  }
}

// The schema of a value of type T: a $ref for named types, the schema itself otherwise.
template <class T>
Node node_of(Context& c) {
  if constexpr (is_optional<T>::value || is_nullable<T>::value) {
    return nullable(node_of<typename T::value_type>(c));
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view> ||
                       std::is_same_v<T, SharedString>) {
    return string();
  } else if constexpr (std::is_same_v<T, bool>) {
    return boolean();
  } else if constexpr (std::is_integral_v<T>) {
    return integer(std::is_unsigned_v<T>, (std::is_unsigned_v<T> ? "uint" : "int") + std::to_string(sizeof(T) * 8));
  } else if constexpr (std::is_floating_point_v<T>) {
    return number();
  } else if constexpr (std::is_same_v<T, RawJson>) {
    return any();
  } else if constexpr (is_raw_json_v<T>) {
    return node_of<typename T::schema_type>(c);  // JsonOf<T>: pre-encoded, described as a T
  } else if constexpr (is_vector<T>::value) {
    return array(node_of<typename T::value_type>(c));
  } else if constexpr (is_string_map<T>::value) {
    return map(node_of<typename T::mapped_type>(c));
  } else {
    std::type_index id(typeid(T));
    auto named = c.registered(id);
    if (!named) {
      if constexpr (HasSchemaHook<T>) {
        Node n = json_schema(static_cast<const T*>(nullptr), c);
        if (n.inline_type) return n;
      } else if constexpr (is_one_of<T>::value) {
        return body_of<T>(c, "");  // an unregistered union alias: inline
      }
      named.emplace(type_name<T>(), detail::in_v2_namespace(detail::pretty<T>()) ? Dir::v2 : Dir::root);
    }
    std::string name = named->first;
    return c.define(id, name, named->second, [&c, name] { return body_of<T>(c, name); });
  }
}

// --- the registry of exported types -------------------------------------------------------------

class Registry {
 public:
  // Exports T under `name` (its own file, and the name every $ref to T uses).
  template <class T>
  Registry& add(std::string name, Dir dir) {
    names_[std::type_index(typeid(T))] = {name, dir};
    entries_.push_back({name, dir, [name](Context& c) { return body_of<T>(c, name); }, std::type_index(typeid(T))});
    return *this;
  }
  // A hand-written schema (framing types that are not reflected structs).
  Registry& add_node(std::string name, Dir dir, Node node);

  // A variant of a method union ("ClientRequest", "ServerNotification"...), exported at DIR/:
  // {"method": <method>, "id": RequestId, "params": P} (requests need RequestId registered).
  template <class P>
  Registry& request(const std::string& union_name, std::string method) {
    return add_method(union_name, std::move(method), true, [](Context& c) { return node_of<P>(c); });
  }
  template <class P>
  Registry& notification(const std::string& union_name, std::string method) {
    return add_method(union_name, std::move(method), false, [](Context& c) { return node_of<P>(c); });
  }
  // Methods without params: `params` absent or null.
  Registry& request(const std::string& union_name, std::string method);
  Registry& notification(const std::string& union_name, std::string method);

  struct Entry {
    std::string name;
    Dir dir;
    std::function<Node(Context&)> build;
    std::optional<std::type_index> owner;
  };
  struct Method {
    std::string method;
    bool is_request;
    std::function<Node(Context&)> params;  // empty: no params
  };
  const std::vector<Entry>& entries() const { return entries_; }
  const Context::Names& names() const { return names_; }

 private:
  Registry& add_method(const std::string& union_name, std::string method, bool is_request,
                       std::function<Node(Context&)> params);
  std::vector<Entry> entries_;
  Context::Names names_;
  std::map<std::string, std::shared_ptr<std::vector<Method>>> methods_;  // shared with the union's builder
};

// --- rendering ----------------------------------------------------------------------------------

// The compact JSON Schema of a node (no definitions); "$ref"s point into "#/definitions[/v2]".
std::string node_json(const Node& n);
// Re-indents compact JSON with two spaces (key order kept).
std::string pretty_json(std::string_view compact);
// A standalone draft-07 document: the node's keywords, a title, and every definition it reaches.
std::string document_json(const Context& c, const std::string& title, const Node& root);
// The TypeScript type expression of a node ("Array<string> | null").
std::string ts_type(const Node& n);
// One .ts file: header, imports of the referenced definitions, `export type Name = ...;`.
std::string ts_file(const std::string& name, Dir dir, const Node& n);

// A standalone, pretty-printed JSON Schema of T with its definitions. Unions need a `name` for
// their synthesized variant titles; other types default to their C++ name.
template <class T>
std::string json_schema_of(std::string name = {}) {
  Context c;
  Node root = body_of<T>(c, name);
  return pretty_json(document_json(c, name.empty() ? type_name<T>() : name, root));
}

// `export type <Name> = ...;` for T (without header and imports).
template <class T>
std::string typescript_of(std::string name = {}) {
  Context c;
  Node root = body_of<T>(c, name);
  return "export type " + (name.empty() ? type_name<T>() : name) + " = " + ts_type(root) + ";";
}

// --- output of a whole registry -----------------------------------------------------------------

struct OutputFile {
  std::string path;  // relative to the output directory
  std::string content;
};

// Generates every definition of the registry; throws std::logic_error on name clashes and on
// $refs that lead nowhere.
struct Generated {
  Context context;
  std::vector<Definition> exported;  // the registered entries, in registration order
};
Generated generate(const Registry& r);

// The bundle {"$schema", "title": "LlmxAppServerProtocol", "type": "object", "definitions"}.
std::string bundle_json(const Registry& r);
// Per-type schema files (root: X.json, v1/X.json, v2/X.json) plus the bundle.
std::vector<OutputFile> json_schema_files(const Registry& r);
// One .ts file per definition (v2 ones under v2/), index.ts in each directory.
std::vector<OutputFile> typescript_files(const Registry& r);
// Writes files under out_dir, creating directories.
void write_files(const std::string& out_dir, const std::vector<OutputFile>& files);

inline constexpr std::string_view kBundleFile = "llmx_app_server_protocol.schemas.json";
inline constexpr std::string_view kTsHeader = "// GENERATED CODE! DO NOT MODIFY BY HAND!\n\n";

}  // namespace llmx::schema
