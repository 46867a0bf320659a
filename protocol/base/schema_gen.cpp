#include "protocol/base/schema_gen.hpp"

#include <algorithm>
#include <cctype>
#include <deque>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "protocol/base/json_reader.hpp"
#include "protocol/base/json_writer.hpp"

namespace llmx::schema {

// --- building blocks ----------------------------------------------------------------------------

namespace {
Node of_kind(Node::Kind k) {
  Node n;
  n.kind = k;
  return n;
}
}  // namespace

Node any() { return of_kind(Node::Kind::any); }
Node string(std::string format) {
  Node n = of_kind(Node::Kind::string);
  n.format = std::move(format);
  return n;
}
Node integer(bool is_unsigned, std::string format) {
  Node n = of_kind(Node::Kind::integer);
  n.non_negative = is_unsigned;
  n.format = std::move(format);
  return n;
}
Node number() {
  Node n = of_kind(Node::Kind::number);
  n.format = "double";
  return n;
}
Node boolean() { return of_kind(Node::Kind::boolean); }
Node null() { return of_kind(Node::Kind::null); }
Node array(Node items) {
  Node n = of_kind(Node::Kind::array);
  n.items.push_back(std::move(items));
  return n;
}
Node map(Node values) {
  Node n = of_kind(Node::Kind::map);
  n.items.push_back(std::move(values));
  return n;
}
Node object(std::vector<Property> props, std::string title) {
  Node n = of_kind(Node::Kind::object);
  n.properties = std::move(props);
  n.title = std::move(title);
  return n;
}
Node enum_strings(std::vector<std::string> values) {
  Node n = of_kind(Node::Kind::enums);
  n.values = std::move(values);
  return n;
}
Node constant(std::string value) {
  Node n = of_kind(Node::Kind::constant);
  n.values.push_back(std::move(value));
  return n;
}
Node one_of(std::vector<Node> alternatives) {
  Node n = of_kind(Node::Kind::one_of);
  n.alternatives = std::move(alternatives);
  return n;
}
Node any_of(std::vector<Node> alternatives) {
  Node n = of_kind(Node::Kind::any_of);
  n.alternatives = std::move(alternatives);
  return n;
}
Node nullable(Node n) {
  n.nullable = true;
  return n;
}
Node ref(std::string name, Dir dir) {
  Node n = of_kind(Node::Kind::ref);
  n.ref = std::move(name);
  n.ref_v2 = dir == Dir::v2;
  return n;
}
Property prop(std::string name, Node schema, bool required) {
  return Property{std::move(name), std::move(schema), required, false};
}
Property optional_prop(std::string name, Node schema) {
  return Property{std::move(name), std::move(schema), false, true};
}

std::string pascal_case(std::string_view s) {
  std::string out;
  bool upper = true;
  for (char ch : s) {
    if (ch == '_' || ch == '/' || ch == '-' || ch == '.' || ch == ' ') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    upper = false;
  }
  return out;
}

// --- names from __PRETTY_FUNCTION__ ---------------------------------------------------------------

namespace detail {

namespace {
// "... [with T = llmx::api::Foo; ...]" (GCC) or "... [T = llmx::api::Foo]" (Clang) -> the type.
std::string_view qualified(std::string_view pf) {
  auto at = pf.find("T = ");
  if (at == std::string_view::npos) return pf;
  pf.remove_prefix(at + 4);
  int depth = 0;
  for (size_t i = 0; i < pf.size(); ++i) {
    char ch = pf[i];
    if (ch == '<' || ch == '(') ++depth;
    if (ch == '>' || ch == ')') --depth;
    if (depth == 0 && (ch == ';' || ch == ']')) return pf.substr(0, i);
  }
  return pf;
}
}  // namespace

std::string short_name(std::string_view pretty_function) {
  std::string_view q = qualified(pretty_function);
  // The last component outside template arguments and "(anonymous namespace)".
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i + 1 < q.size(); ++i) {
    if (q[i] == '<' || q[i] == '(') ++depth;
    if (q[i] == '>' || q[i] == ')') --depth;
    if (depth == 0 && q[i] == ':' && q[i + 1] == ':') start = i + 2;
  }
  std::string out;
  for (char ch : q.substr(start)) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return out;
}

bool in_v2_namespace(std::string_view pretty_function) {
  std::string_view q = qualified(pretty_function);
  return q.starts_with("v2::") || q.find("::v2::") != std::string_view::npos;
}

}  // namespace detail

// --- context ------------------------------------------------------------------------------------

std::optional<std::pair<std::string, Dir>> Context::registered(std::type_index t) const {
  if (!names_) return std::nullopt;
  auto it = names_->find(t);
  if (it == names_->end()) return std::nullopt;
  return it->second;
}

Node Context::define(std::optional<std::type_index> owner, const std::string& name, Dir dir,
                     const std::function<Node()>& body) {
  auto key = std::make_pair(dir == Dir::v2, name);
  if (auto it = defs_.find(key); it != defs_.end()) {
    if (it->second.owner != owner)
      throw std::logic_error(fmt::format("schema: two different types are exported as `{}{}` ({} and {})",
                                         key.first ? "v2/" : "", name,
                                         it->second.owner ? it->second.owner->name() : "hand-written",
                                         owner ? owner->name() : "hand-written"));
    return ref(name, dir);
  }
  defs_.emplace(key, Slot{Definition{name, dir, {}}, owner});  // placeholder: recursion ends here
  Node n = body();
  defs_.at(key).def.node = std::move(n);
  return ref(name, dir);
}

const Definition* Context::find(const std::string& name, bool v2) const {
  auto it = defs_.find({v2, name});
  return it == defs_.end() ? nullptr : &it->second.def;
}

std::vector<const Definition*> Context::all() const {
  std::vector<const Definition*> out;
  for (const auto& [_, slot] : defs_) out.push_back(&slot.def);
  return out;
}

// --- registry -----------------------------------------------------------------------------------

Registry& Registry::add_node(std::string name, Dir dir, Node node) {
  for (const auto& e : entries_)
    if (e.name == name && (e.dir == Dir::v2) == (dir == Dir::v2))
      throw std::logic_error(fmt::format("schema: `{}` registered twice", name));
  entries_.push_back({name, dir, [node = std::move(node)](Context&) { return node; }, std::nullopt});
  return *this;
}

Registry& Registry::request(const std::string& union_name, std::string method) {
  return add_method(union_name, std::move(method), true, {});
}
Registry& Registry::notification(const std::string& union_name, std::string method) {
  return add_method(union_name, std::move(method), false, {});
}

Registry& Registry::add_method(const std::string& union_name, std::string method, bool is_request,
                               std::function<Node(Context&)> params) {
  auto [it, fresh] = methods_.try_emplace(union_name, std::make_shared<std::vector<Method>>());
  if (fresh) {
    // The union itself is an exported entry, built from the method list when generated.
    entries_.push_back({union_name, Dir::root,
                        [vs = it->second](Context& c) {
                          std::vector<Node> alts;
                          for (const auto& m : *vs) {
                            std::vector<Property> props{prop("method", constant(m.method))};
                            if (m.is_request) props.push_back(prop("id", ref("RequestId")));
                            if (m.params)
                              props.push_back(prop("params", m.params(c)));
                            else
                              props.push_back(optional_prop("params", null()));
                            alts.push_back(object(std::move(props),
                                                  pascal_case(m.method) + (m.is_request ? "Request" : "Notification")));
                          }
                          return one_of(std::move(alts));
                        },
                        std::nullopt});
  }
  it->second->push_back({std::move(method), is_request, std::move(params)});
  return *this;
}

// --- JSON Schema rendering ----------------------------------------------------------------------

namespace {

std::string_view type_keyword(Node::Kind k) {
  switch (k) {
    case Node::Kind::string: return "string";
    case Node::Kind::integer: return "integer";
    case Node::Kind::number: return "number";
    case Node::Kind::boolean: return "boolean";
    case Node::Kind::null: return "null";
    case Node::Kind::array: return "array";
    case Node::Kind::map:
    case Node::Kind::object: return "object";
    default: return {};
  }
}

std::string ref_path(const Node& n) { return (n.ref_v2 ? "#/definitions/v2/" : "#/definitions/") + n.ref; }

void emit(json::Writer& w, const Node& n);

// Writes the keywords of `n` into an object the caller opened.
void emit_keywords(json::Writer& w, const Node& n, bool with_title = true) {
  if (with_title && !n.title.empty()) w.field("title", n.title);
  if (!n.description.empty()) w.field("description", n.description);
  std::string_view type = type_keyword(n.kind);
  if (n.nullable && type.empty() && n.kind != Node::Kind::any) {
    // $ref, enums and unions: "this or null".
    Node inner = n;
    inner.nullable = false;
    inner.title.clear();
    inner.description.clear();
    w.key("anyOf").begin_array();
    emit(w, inner);
    w.begin_object().field("type", "null").end_object();
    w.end_array();
    return;
  }
  if (!type.empty()) {
    w.key("type");
    if (n.nullable && n.kind != Node::Kind::null)
      w.begin_array().string(type).string("null").end_array();
    else
      w.string(type);
  }
  if (!n.format.empty()) w.field("format", n.format);
  if (n.non_negative) w.field("minimum", int64_t{0});
  switch (n.kind) {
    case Node::Kind::array:
      w.key("items");
      emit(w, n.items.at(0));
      break;
    case Node::Kind::map:
      w.key("additionalProperties");
      emit(w, n.items.at(0));
      break;
    case Node::Kind::object: {
      bool any_required = std::any_of(n.properties.begin(), n.properties.end(), [](const Property& p) { return p.required; });
      if (any_required) {
        w.key("required").begin_array();
        for (const auto& p : n.properties)
          if (p.required) w.string(p.name);
        w.end_array();
      }
      w.key("properties").begin_object();
      for (const auto& p : n.properties) {
        w.key(p.name);
        emit(w, p.schema);
      }
      w.end_object();
      break;
    }
    case Node::Kind::ref: w.field("$ref", ref_path(n)); break;
    case Node::Kind::enums:
      w.field("type", "string").key("enum").begin_array();
      for (const auto& v : n.values) w.string(v);
      w.end_array();
      break;
    case Node::Kind::constant: w.field("type", "string").field("const", n.values.at(0)); break;
    case Node::Kind::one_of:
    case Node::Kind::any_of:
      w.key(n.kind == Node::Kind::one_of ? "oneOf" : "anyOf").begin_array();
      for (const auto& a : n.alternatives) emit(w, a);
      w.end_array();
      break;
    default: break;
  }
}

void emit(json::Writer& w, const Node& n) {
  w.begin_object();
  emit_keywords(w, n);
  w.end_object();
}

// Every definition a node names, directly (refs inside, not following them).
void collect_refs(const Node& n, std::set<std::pair<bool, std::string>>& out) {
  if (n.kind == Node::Kind::ref) out.insert({n.ref_v2, n.ref});
  for (const auto& p : n.properties) collect_refs(p.schema, out);
  for (const auto& i : n.items) collect_refs(i, out);
  for (const auto& a : n.alternatives) collect_refs(a, out);
}

const Definition& resolve(const Context& c, const std::pair<bool, std::string>& key) {
  const Definition* d = c.find(key.second, key.first);
  if (!d) throw std::logic_error(fmt::format("schema: $ref to undefined `{}{}`", key.first ? "v2/" : "", key.second));
  return *d;
}

// "definitions": {main..., "v2": {...}}, for the given definitions.
void emit_definitions(json::Writer& w, const std::vector<const Definition*>& defs) {
  w.key("definitions").begin_object();
  bool any_v2 = false;
  for (const auto* d : defs) {
    if (d->dir == Dir::v2) {
      any_v2 = true;
      continue;
    }
    w.key(d->name);
    emit(w, d->node);
  }
  if (any_v2) {
    w.key("v2").begin_object();
    for (const auto* d : defs)
      if (d->dir == Dir::v2) {
        w.key(d->name);
        emit(w, d->node);
      }
    w.end_object();
  }
  w.end_object();
}

constexpr std::string_view kDraft07 = "http://json-schema.org/draft-07/schema#";

}  // namespace

std::string node_json(const Node& n) {
  json::Writer w;
  emit(w, n);
  return w.take();
}

std::string pretty_json(std::string_view compact) {
  json::Parser p;
  std::string out;
  json::pretty(out, p.parse(compact), 0);
  return out;
}

std::string document_json(const Context& c, const std::string& title, const Node& root) {
  // Definitions reachable from the root, following refs transitively.
  std::set<std::pair<bool, std::string>> seen, todo;
  collect_refs(root, todo);
  std::deque<std::pair<bool, std::string>> queue(todo.begin(), todo.end());
  while (!queue.empty()) {
    auto key = queue.front();
    queue.pop_front();
    if (!seen.insert(key).second) continue;
    std::set<std::pair<bool, std::string>> more;
    collect_refs(resolve(c, key).node, more);
    for (const auto& m : more)
      if (!seen.count(m)) queue.push_back(m);
  }
  std::vector<const Definition*> defs;
  for (const auto& key : seen) defs.push_back(&resolve(c, key));

  json::Writer w;
  w.begin_object().field("$schema", kDraft07).field("title", title);
  emit_keywords(w, root, false);
  if (!defs.empty()) emit_definitions(w, defs);
  w.end_object();
  return w.take();
}

// --- TypeScript rendering -----------------------------------------------------------------------

namespace {

std::string ts_string(std::string_view s) {
  std::string out;
  json::append_escaped(out, s);
  return out;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '$';
  });
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

}  // namespace

std::string ts_type(const Node& n) {
  std::string base;
  switch (n.kind) {
    case Node::Kind::any: return "unknown";
    case Node::Kind::string: base = "string"; break;
    case Node::Kind::integer:
    case Node::Kind::number: base = "number"; break;
    case Node::Kind::boolean: base = "boolean"; break;
    case Node::Kind::null: return "null";
    case Node::Kind::array: base = "Array<" + ts_type(n.items.at(0)) + ">"; break;
    case Node::Kind::map: base = "{ [key in string]?: " + ts_type(n.items.at(0)) + " }"; break;
    case Node::Kind::object:
      if (n.properties.empty()) {
        base = "Record<string, never>";
      } else {
        base = "{ ";
        for (const auto& p : n.properties)
          base += (is_identifier(p.name) ? p.name : ts_string(p.name)) + (p.omitted ? "?: " : ": ") + ts_type(p.schema) + ", ";
        base += "}";
      }
      break;
    case Node::Kind::ref: base = n.ref; break;
    case Node::Kind::enums:
    case Node::Kind::constant: {
      std::vector<std::string> parts;
      for (const auto& v : n.values) parts.push_back(ts_string(v));
      base = join(parts, " | ");
      break;
    }
    case Node::Kind::one_of:
    case Node::Kind::any_of: {
      std::vector<std::string> parts;
      for (const auto& a : n.alternatives) parts.push_back(ts_type(a));
      base = parts.empty() ? "never" : join(parts, " | ");
      break;
    }
  }
  return n.nullable ? base + " | null" : base;
}

std::string ts_file(const std::string& name, Dir dir, const Node& n) {
  bool here_v2 = dir == Dir::v2;
  std::set<std::pair<bool, std::string>> refs;
  collect_refs(n, refs);
  std::string out(kTsHeader);
  bool imported = false;
  for (const auto& [v2, ref_name] : refs) {
    if (v2 == here_v2 && ref_name == name) continue;
    std::string from = v2 == here_v2 ? "./" : (v2 ? "./v2/" : "../");
    out += fmt::format("import type {{ {} }} from \"{}{}\";\n", ref_name, from, ref_name);
    imported = true;
  }
  if (imported) out += "\n";
  out += "export type " + name + " = " + ts_type(n) + ";\n";
  return out;
}

// --- whole registry -----------------------------------------------------------------------------

Generated generate(const Registry& r) {
  Generated g{Context(&r.names()), {}};
  for (const auto& e : r.entries()) {
    g.context.define(e.owner, e.name, e.dir, [&] { return e.build(g.context); });
    const Definition* d = g.context.find(e.name, e.dir == Dir::v2);
    Definition copy = *d;
    copy.dir = e.dir;  // the registered directory (a nested use may have defined it first)
    g.exported.push_back(std::move(copy));
  }
  // Every $ref must lead somewhere (hand-written entries name others by string).
  for (const auto* d : g.context.all()) {
    std::set<std::pair<bool, std::string>> refs;
    collect_refs(d->node, refs);
    for (const auto& key : refs) resolve(g.context, key);
  }
  return g;
}

std::string bundle_json(const Registry& r) {
  Generated g = generate(r);
  json::Writer w;
  w.begin_object()
      .field("$schema", kDraft07)
      .field("title", "LlmxAppServerProtocol")
      .field("type", "object");
  emit_definitions(w, g.context.all());
  w.end_object();
  return pretty_json(w.str()) + "\n";
}

std::vector<OutputFile> json_schema_files(const Registry& r) {
  Generated g = generate(r);
  std::vector<OutputFile> files;
  for (const auto& d : g.exported) {
    std::string dir = d.dir == Dir::v2 ? "v2/" : d.dir == Dir::v1 ? "v1/" : "";
    files.push_back({dir + d.name + ".json", pretty_json(document_json(g.context, d.name, d.node)) + "\n"});
  }
  files.push_back({std::string(kBundleFile), bundle_json(r)});
  return files;
}

std::vector<OutputFile> typescript_files(const Registry& r) {
  Generated g = generate(r);
  std::vector<OutputFile> files;
  std::string root_index(kTsHeader), v2_index(kTsHeader);
  bool any_v2 = false;
  for (const auto* d : g.context.all()) {
    bool v2 = d->dir == Dir::v2;
    files.push_back({(v2 ? "v2/" : "") + d->name + ".ts", ts_file(d->name, d->dir, d->node)});
    (v2 ? v2_index : root_index) += fmt::format("export type {{ {} }} from \"./{}\";\n", d->name, d->name);
    any_v2 = any_v2 || v2;
  }
  root_index += "export * as v2 from \"./v2\";\n";
  if (!any_v2) v2_index += "export {};\n";  // still a module, so the root re-export compiles
  files.push_back({"index.ts", root_index});
  files.push_back({"v2/index.ts", v2_index});
  return files;
}

void write_files(const std::string& out_dir, const std::vector<OutputFile>& files) {
  namespace fs = std::filesystem;
  for (const auto& f : files) {
    fs::path p = fs::path(out_dir) / f.path;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << f.content;
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", p.string()));
  }
}

}  // namespace llmx::schema
