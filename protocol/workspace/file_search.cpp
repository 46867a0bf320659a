// fuzzyFileSearch: fuzzy scoring and the .gitignore-aware walk.
#include "protocol/workspace/file_search.hpp"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>

#include "protocol/base/text.hpp"

namespace llmx::workspace {

namespace fs = std::filesystem;

// --- fuzzy matching ----------------------------------------------------------------------------------

namespace {

constexpr int kScoreMatch = 16;
constexpr int kGapStart = -3;
constexpr int kGapExtension = -1;
constexpr int kBonusStart = 10;
constexpr int kBonusSlash = 9;
constexpr int kBonusDelimiter = 8;
constexpr int kBonusCamel = 7;
constexpr int kBonusConsecutive = 4;
constexpr int kFirstCharMultiplier = 2;
constexpr int kNone = INT_MIN / 4;

// Code points of `s`; a byte that starts no valid sequence stands for itself.
std::vector<char32_t> code_points(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
      out.push_back(c);
      ++i;
      continue;
    }
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    bool valid = true;
    for (size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) valid = false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (!valid) {
      out.push_back(c);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

char32_t fold(char32_t c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }
bool is_lower(char32_t c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char32_t c) { return c >= 'A' && c <= 'Z'; }

int bonus_at(const std::vector<char32_t>& cand, size_t j) {
  if (j == 0) return kBonusStart;
  char32_t prev = cand[j - 1], cur = cand[j];
  if (prev == '/') return kBonusSlash;
  if (prev == '_' || prev == '-' || prev == '.' || prev == ' ') return kBonusDelimiter;
  if (is_lower(prev) && is_upper(cur)) return kBonusCamel;
  return 0;
}

// Best alignment of one (folded) term in the candidate: dynamic programming over (term char,
// candidate position); a gap's cost grows with its length, so a running maximum replaces the
// inner loop.
std::optional<FuzzyScore> score_term(const std::vector<char32_t>& term, const std::vector<char32_t>& folded,
                                     const std::vector<int>& bonus) {
  const size_t m = term.size(), n = folded.size();
  if (m == 0 || m > n) return std::nullopt;
  {  // quick rejection: is it a subsequence at all?
    size_t i = 0;
    for (size_t j = 0; j < n && i < m; ++j)
      if (folded[j] == term[i]) ++i;
    if (i < m) return std::nullopt;
  }
  std::vector<int> score(m * n, kNone);
  std::vector<int> from(m * n, -1);
  for (size_t i = 0; i < m; ++i) {
    int run = kNone;  // best score[i-1][k] + gap cost for k <= j-2
    int run_k = -1;
    for (size_t j = i; j < n; ++j) {
      if (i > 0 && j >= 2) {
        int grown = run == kNone ? kNone : run + kGapExtension;
        int fresh = score[(i - 1) * n + (j - 2)];
        fresh = fresh == kNone ? kNone : fresh + kGapStart;
        if (fresh >= grown && fresh != kNone) {
          run = fresh;
          run_k = static_cast<int>(j - 2);
        } else {
          run = grown;
        }
      }
      if (folded[j] != term[i]) continue;
      int here = kScoreMatch + bonus[j] * (i == 0 ? kFirstCharMultiplier : 1);
      if (i == 0) {
        score[j] = here;
        continue;
      }
      int best = kNone, best_k = -1;
      int adjacent = score[(i - 1) * n + (j - 1)];
      if (adjacent != kNone) {
        best = adjacent + kBonusConsecutive;
        best_k = static_cast<int>(j - 1);
      }
      if (run != kNone && run > best) {
        best = run;
        best_k = run_k;
      }
      if (best == kNone) continue;
      score[i * n + j] = here + best;
      from[i * n + j] = best_k;
    }
  }
  int best = kNone;
  size_t best_j = 0;
  for (size_t j = m - 1; j < n; ++j) {
    if (score[(m - 1) * n + j] > best) {
      best = score[(m - 1) * n + j];
      best_j = j;
    }
  }
  if (best == kNone) return std::nullopt;
  FuzzyScore out;
  out.score = best;
  out.indices.resize(m);
  int j = static_cast<int>(best_j);
  for (size_t i = m; i-- > 0;) {
    out.indices[i] = static_cast<uint32_t>(j);
    j = from[i * n + static_cast<size_t>(j)];
  }
  return out;
}

}  // namespace

std::optional<FuzzyScore> fuzzy_score(std::string_view query, std::string_view candidate) {
  auto cand = code_points(candidate);
  std::vector<char32_t> folded(cand.size());
  std::vector<int> bonus(cand.size());
  for (size_t j = 0; j < cand.size(); ++j) {
    folded[j] = fold(cand[j]);
    bonus[j] = bonus_at(cand, j);
  }
  FuzzyScore total;
  bool any = false;
  auto q = code_points(query);
  for (size_t i = 0; i < q.size();) {
    while (i < q.size() && (q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r')) ++i;
    std::vector<char32_t> term;
    while (i < q.size() && !(q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r')) term.push_back(fold(q[i++]));
    if (term.empty()) continue;
    auto s = score_term(term, folded, bonus);
    if (!s) return std::nullopt;
    any = true;
    total.score += s->score;
    total.indices.insert(total.indices.end(), s->indices.begin(), s->indices.end());
  }
  if (!any) return std::nullopt;
  std::sort(total.indices.begin(), total.indices.end());
  total.indices.erase(std::unique(total.indices.begin(), total.indices.end()), total.indices.end());
  return total;
}

void sort_matches(std::vector<FuzzyFileMatch>& matches) {
  std::sort(matches.begin(), matches.end(), [](const FuzzyFileMatch& a, const FuzzyFileMatch& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.path != b.path) return a.path < b.path;
    return a.root < b.root;
  });
}

// --- .gitignore ------------------------------------------------------------------------------------

namespace {

// A glob over a `/`-separated path: `*` and `?` stay within a component, `**/` spans any number
// of directories, `[...]` classes (with ranges and `!`/`^`), `\` escapes.
bool glob(std::string_view p, std::string_view t) {
  while (!p.empty()) {
    if (p.starts_with("**")) {
      std::string_view rest = p.substr(2);
      if (rest.starts_with("/")) {
        rest.remove_prefix(1);
        if (glob(rest, t)) return true;
        for (size_t i = 0; i < t.size(); ++i)
          if (t[i] == '/' && glob(rest, t.substr(i + 1))) return true;
        return false;
      }
      for (size_t i = 0; i <= t.size(); ++i)
        if (glob(rest, t.substr(i))) return true;
      return false;
    }
    char c = p[0];
    if (c == '*') {
      std::string_view rest = p.substr(1);
      for (size_t i = 0; i <= t.size(); ++i) {
        if (glob(rest, t.substr(i))) return true;
        if (i < t.size() && t[i] == '/') break;
      }
      return false;
    }
    if (t.empty()) return false;
    if (c == '?') {
      if (t[0] == '/') return false;
      p.remove_prefix(1);
      t.remove_prefix(1);
      continue;
    }
    if (c == '[') {
      size_t i = 1;
      bool negate = i < p.size() && (p[i] == '!' || p[i] == '^');
      if (negate) ++i;
      size_t start = i;
      bool matched = false;
      while (i < p.size() && (p[i] != ']' || i == start)) {
        char lo = p[i];
        if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
          if (t[0] >= lo && t[0] <= p[i + 2]) matched = true;
          i += 3;
        } else {
          if (t[0] == lo) matched = true;
          ++i;
        }
      }
      if (i < p.size()) {  // a closed class
        if (matched == negate || t[0] == '/') return false;
        p.remove_prefix(i + 1);
        t.remove_prefix(1);
        continue;
      }
      // no closing bracket: a literal '['
    }
    if (c == '\\' && p.size() > 1) {
      p.remove_prefix(1);
      c = p[0];
    }
    if (t[0] != c) return false;
    p.remove_prefix(1);
    t.remove_prefix(1);
  }
  return t.empty();
}

struct IgnoreRule {
  std::string base;  // the .gitignore's directory relative to the root, "" or "a/b/"
  std::string pattern;
  bool negate = false;
  bool dir_only = false;
  bool anchored = false;
};

std::optional<IgnoreRule> parse_rule(std::string_view line, const std::string& base) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  while (!line.empty() && line.back() == ' ' && !(line.size() >= 2 && line[line.size() - 2] == '\\'))
    line.remove_suffix(1);
  if (line.empty() || line[0] == '#') return std::nullopt;
  IgnoreRule r;
  r.base = base;
  if (line[0] == '!') {
    r.negate = true;
    line.remove_prefix(1);
  } else if (line.starts_with("\\!") || line.starts_with("\\#")) {
    line.remove_prefix(1);
  }
  if (!line.empty() && line.back() == '/') {
    r.dir_only = true;
    line.remove_suffix(1);
  }
  if (line.empty()) return std::nullopt;
  r.anchored = line.find('/') != std::string_view::npos;
  if (line[0] == '/') line.remove_prefix(1);
  r.pattern = std::string(line);
  return r;
}

bool rule_matches(const IgnoreRule& r, std::string_view rel, bool is_dir) {
  if (r.dir_only && !is_dir) return false;
  if (!rel.starts_with(r.base)) return false;
  std::string_view sub = rel.substr(r.base.size());
  if (r.anchored) return glob(r.pattern, sub);
  auto slash = sub.rfind('/');
  return glob(r.pattern, slash == std::string_view::npos ? sub : sub.substr(slash + 1));
}

bool ignored(const std::vector<IgnoreRule>& rules, std::string_view rel, bool is_dir) {
  bool result = false;
  for (const auto& r : rules)
    if (rule_matches(r, rel, is_dir)) result = !r.negate;
  return result;
}

void load_gitignore(const fs::path& dir, const std::string& base, std::vector<IgnoreRule>& rules) {
  std::ifstream in(dir / ".gitignore");
  if (!in) return;
  std::string line;
  while (std::getline(in, line))
    if (auto r = parse_rule(line, base)) rules.push_back(std::move(*r));
}

constexpr size_t kMaxEntriesPerRoot = 1'000'000;
constexpr size_t kMaxDepth = 128;

struct Walk {
  std::string root;
  std::string_view query;
  const std::atomic<bool>* cancel;
  size_t per_root;
  size_t visited = 0;
  std::vector<IgnoreRule> rules;
  std::vector<FuzzyFileMatch> matches;

  bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }

  void keep_best() {
    sort_matches(matches);
    if (matches.size() > per_root) matches.resize(per_root);
  }

  void consider(const std::string& rel) {
    auto s = fuzzy_score(query, rel);
    if (!s) return;
    FuzzyFileMatch m;
    m.root = root;
    m.path = rel;
    auto slash = rel.rfind('/');
    m.file_name = slash == std::string::npos ? rel : rel.substr(slash + 1);
    m.score = s->score;
    m.indices = std::move(s->indices);
    matches.push_back(std::move(m));
    if (matches.size() >= 4 * per_root + 64) keep_best();
  }

  // Returns false to stop the whole walk.
  bool dir(const fs::path& path, const std::string& base, size_t depth) {
    if (depth > kMaxDepth) return true;
    size_t rules_before = rules.size();
    load_gitignore(path, base, rules);
    std::error_code ec;
    fs::directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
    bool go_on = true;
    for (; go_on && !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (++visited > kMaxEntriesPerRoot || ((visited & 255) == 0 && cancelled())) {
        go_on = false;
        break;
      }
      const auto& entry = *it;
      std::string name = entry.path().filename().string();
      std::string rel = base + name;
      std::error_code sec;
      auto lst = entry.symlink_status(sec);
      if (sec) continue;
      bool is_dir = fs::is_directory(lst);
      if (fs::is_symlink(lst)) {
        auto target = entry.status(sec);
        if (sec || !fs::is_regular_file(target)) continue;  // symlinked directories are not followed
      } else if (!is_dir && !fs::is_regular_file(lst)) {
        continue;
      }
      if (is_dir && name == ".git") continue;
      if (ignored(rules, rel, is_dir)) continue;
      if (is_dir)
        go_on = dir(entry.path(), rel + "/", depth + 1);
      else
        consider(rel);
    }
    rules.resize(rules_before);
    return go_on;
  }
};

}  // namespace

bool gitignore_match(std::string_view pattern, std::string_view rel_path, bool is_dir) {
  auto r = parse_rule(pattern, "");
  return r && rule_matches(*r, rel_path, is_dir);
}

std::vector<FuzzyFileMatch> fuzzy_file_search(std::string_view query, const std::vector<std::string>& roots,
                                              const std::atomic<bool>* cancel, size_t per_root) {
  std::vector<FuzzyFileMatch> all;
  if (text::trim_view(query).empty() || per_root == 0) return all;
  for (const auto& root : roots) {
    if (cancel && cancel->load()) break;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    Walk w{root, query, cancel, per_root, 0, {}, {}};
    w.dir(fs::path(root), "", 0);
    w.keep_best();
    all.insert(all.end(), std::make_move_iterator(w.matches.begin()), std::make_move_iterator(w.matches.end()));
  }
  sort_matches(all);
  return all;
}

}  // namespace llmx::workspace
