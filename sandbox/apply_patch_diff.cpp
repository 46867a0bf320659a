// Line-based unified diffs, rendered the way the Rust `similar` crate (2.x) does, because the
// reference engine shows its output verbatim (FileUpdate.unified_diff, turn_diff). Where several
// minimal diffs exist, the choice depends on the algorithm, so this follows its steps: Myers with
// middle-snake divide and conquer, then the "compact" clean-up that slides insertions and
// deletions to merge them, then adjacent delete+insert pairs become replacements, then hunks are
// grouped with `context` lines around each change.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sandbox/apply_patch.hpp"

namespace llmx::patch {

namespace {

// Lines keep their terminator (\n, \r\n or a lone \r); a last line may have none.
std::vector<std::string_view> tokenize_lines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t last = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      size_t end = (i + 1 < s.size() && s[i + 1] == '\n') ? i + 2 : i + 1;
      out.push_back(s.substr(last, end - last));
      last = end;
      i = end - 1;
    } else if (s[i] == '\n') {
      out.push_back(s.substr(last, i + 1 - last));
      last = i + 1;
    }
  }
  if (last < s.size()) out.push_back(s.substr(last));
  return out;
}

struct Op {
  enum Tag { equal, del, ins, replace } tag;
  // An Equal op has old_len == new_len; a Delete has new_len == 0; an Insert has old_len == 0.
  size_t old_index = 0, old_len = 0, new_index = 0, new_len = 0;

  size_t old_end() const { return old_index + old_len; }
  size_t new_end() const { return new_index + new_len; }
  bool empty() const { return old_len == 0 && new_len == 0; }

  // similar's DiffOp::adjust: the offset moves both indices, the length change applies to the
  // lengths the op actually has.
  void adjust(std::ptrdiff_t off, std::ptrdiff_t len) {
    old_index = size_t(std::ptrdiff_t(old_index) + off);
    new_index = size_t(std::ptrdiff_t(new_index) + off);
    if (tag != ins) old_len = size_t(std::ptrdiff_t(old_len) + len);
    if (tag != del) new_len = size_t(std::ptrdiff_t(new_len) + len);
  }
  void shift_left(size_t a) { adjust(-std::ptrdiff_t(a), 0); }
  void shift_right(size_t a) { adjust(std::ptrdiff_t(a), 0); }
  void grow_left(size_t a) { adjust(-std::ptrdiff_t(a), std::ptrdiff_t(a)); }
  void grow_right(size_t a) { adjust(0, std::ptrdiff_t(a)); }
  void shrink_left(size_t a) { adjust(0, -std::ptrdiff_t(a)); }
  void shrink_right(size_t a) { adjust(std::ptrdiff_t(a), -std::ptrdiff_t(a)); }
};

Op make_equal(size_t o, size_t n, size_t len) { return {Op::equal, o, len, n, len}; }
Op make_delete(size_t o, size_t len, size_t n) { return {Op::del, o, len, n, 0}; }
Op make_insert(size_t o, size_t n, size_t len) { return {Op::ins, o, 0, n, len}; }

class Differ {
 public:
  Differ(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) : a_(a), b_(b) {}

  std::vector<Op> run() {
    size_t max_d = (a_.size() + b_.size() + 1) / 2 + 1;
    vf_.assign(2 * max_d, 0);
    vb_.assign(2 * max_d, 0);
    offset_ = std::ptrdiff_t(max_d);
    conquer(0, a_.size(), 0, b_.size());
    compact();
    return replace_pass();
  }

 private:
  const std::vector<uint32_t>& a_;
  const std::vector<uint32_t>& b_;
  std::vector<size_t> vf_, vb_;
  std::ptrdiff_t offset_ = 0;
  std::vector<Op> ops_;

  size_t& vf(std::ptrdiff_t k) { return vf_[size_t(k + offset_)]; }
  size_t& vb(std::ptrdiff_t k) { return vb_[size_t(k + offset_)]; }

  size_t prefix_len(size_t os, size_t oe, size_t ns, size_t ne) const {
    if (os >= oe || ns >= ne) return 0;
    size_t n = 0;
    while (os + n < oe && ns + n < ne && a_[os + n] == b_[ns + n]) ++n;
    return n;
  }
  size_t suffix_len(size_t os, size_t oe, size_t ns, size_t ne) const {
    if (os >= oe || ns >= ne) return 0;
    size_t n = 0;
    while (oe - n > os && ne - n > ns && a_[oe - n - 1] == b_[ne - n - 1]) ++n;
    return n;
  }

  // The start of the middle snake of an optimal path through [os,oe) x [ns,ne).
  std::pair<size_t, size_t> middle_snake(size_t os, size_t oe, size_t ns, size_t ne) {
    std::ptrdiff_t n = std::ptrdiff_t(oe - os), m = std::ptrdiff_t(ne - ns);
    std::ptrdiff_t delta = n - m;
    bool odd = (delta & 1) != 0;
    vf(1) = 0;
    vb(1) = 0;
    std::ptrdiff_t d_max = (n + m + 1) / 2 + 1;
    for (std::ptrdiff_t d = 0; d < d_max; ++d) {
      for (std::ptrdiff_t k = d; k >= -d; k -= 2) {
        std::ptrdiff_t x = (k == -d || (k != d && vf(k - 1) < vf(k + 1))) ? std::ptrdiff_t(vf(k + 1))
                                                                         : std::ptrdiff_t(vf(k - 1)) + 1;
        std::ptrdiff_t y = x - k;
        std::ptrdiff_t x0 = x, y0 = y;
        if (x < n && y >= 0 && y < m) x += std::ptrdiff_t(prefix_len(os + size_t(x), oe, ns + size_t(y), ne));
        vf(k) = size_t(x);
        if (odd && std::abs(k - delta) <= d - 1 && std::ptrdiff_t(vf(k) + vb(-(k - delta))) >= n)
          return {size_t(x0) + os, size_t(y0) + ns};
      }
      for (std::ptrdiff_t k = d; k >= -d; k -= 2) {
        std::ptrdiff_t x = (k == -d || (k != d && vb(k - 1) < vb(k + 1))) ? std::ptrdiff_t(vb(k + 1))
                                                                         : std::ptrdiff_t(vb(k - 1)) + 1;
        std::ptrdiff_t y = x - k;
        if (x < n && y >= 0 && y < m) {
          size_t adv = suffix_len(os, os + size_t(n - x), ns, ns + size_t(m - y));
          x += std::ptrdiff_t(adv);
          y += std::ptrdiff_t(adv);
        }
        vb(k) = size_t(x);
        if (!odd && std::abs(k - delta) <= d && std::ptrdiff_t(vb(k) + vf(-(k - delta))) >= n)
          return {size_t(n - x) + os, size_t(m - y) + ns};
      }
    }
    return {os, ns};  // unreachable for consistent inputs
  }

  void conquer(size_t os, size_t oe, size_t ns, size_t ne) {
    size_t pre = prefix_len(os, oe, ns, ne);
    if (pre > 0) ops_.push_back(make_equal(os, ns, pre));
    os += pre;
    ns += pre;
    size_t suf = suffix_len(os, oe, ns, ne);
    size_t suf_o = oe - suf, suf_n = ne - suf;
    oe -= suf;
    ne -= suf;
    if (os >= oe && ns >= ne) {
    } else if (ns >= ne) {
      ops_.push_back(make_delete(os, oe - os, ns));
    } else if (os >= oe) {
      ops_.push_back(make_insert(os, ns, ne - ns));
    } else {
      auto [x, y] = middle_snake(os, oe, ns, ne);
      conquer(os, x, ns, y);
      conquer(x, oe, y, ne);
    }
    if (suf > 0) ops_.push_back(make_equal(suf_o, suf_n, suf));
  }

  // --- similar's Compact hook: slide inserts/deletes so that neighbouring edits merge ---------

  size_t shift_up(size_t p) {
    while (p > 0) {
      Op prev = ops_[p - 1], cur = ops_[p];
      if ((cur.tag == Op::ins || cur.tag == Op::del) && prev.tag == Op::equal) {
        size_t s = suffix_len(prev.old_index, prev.old_end(), cur.new_index, cur.new_end());
        if (s > 0) {
          if (p + 1 < ops_.size() && ops_[p + 1].tag == Op::equal) {
            ops_[p + 1].grow_left(s);
          } else {
            size_t len = cur.tag == Op::ins ? s : prev.old_len - s;
            ops_.insert(ops_.begin() + std::ptrdiff_t(p + 1),
                        make_equal(prev.old_end() - s, cur.new_end() - s, len));
          }
          ops_[p].shift_left(s);
          ops_[p - 1].shrink_left(s);
          if (ops_[p - 1].empty()) {
            ops_.erase(ops_.begin() + std::ptrdiff_t(p - 1));
            --p;
          }
        } else if (ops_[p - 1].empty()) {
          ops_.erase(ops_.begin() + std::ptrdiff_t(p - 1));
          --p;
        } else {
          break;
        }
      } else if ((cur.tag == Op::ins && prev.tag == Op::del) ||
                 (cur.tag == Op::del && prev.tag == Op::ins)) {
        std::swap(ops_[p - 1], ops_[p]);
        --p;
      } else if (cur.tag == prev.tag && (cur.tag == Op::ins || cur.tag == Op::del)) {
        ops_[p - 1].grow_right(cur.tag == Op::ins ? cur.new_len : cur.old_len);
        ops_.erase(ops_.begin() + std::ptrdiff_t(p));
        --p;
      } else {
        break;  // not reached: only called for inserts and deletes
      }
    }
    return p;
  }

  size_t shift_down(size_t p) {
    while (p + 1 < ops_.size()) {
      Op next = ops_[p + 1], cur = ops_[p];
      if ((cur.tag == Op::ins || cur.tag == Op::del) && next.tag == Op::equal) {
        size_t s = prefix_len(next.old_index, next.old_end(), cur.new_index, cur.new_end());
        if (s > 0) {
          if (p > 0 && ops_[p - 1].tag == Op::equal) {
            ops_[p - 1].grow_right(s);
          } else {
            ops_.insert(ops_.begin() + std::ptrdiff_t(p), make_equal(next.old_index, cur.new_index, s));
            ++p;
          }
          ops_[p].shift_right(s);
          ops_[p + 1].shrink_right(s);
          if (ops_[p + 1].empty()) ops_.erase(ops_.begin() + std::ptrdiff_t(p + 1));
        } else if (ops_[p + 1].empty()) {
          ops_.erase(ops_.begin() + std::ptrdiff_t(p + 1));
        } else {
          break;
        }
      } else if ((cur.tag == Op::ins && next.tag == Op::del) ||
                 (cur.tag == Op::del && next.tag == Op::ins)) {
        std::swap(ops_[p], ops_[p + 1]);
        ++p;
      } else if (cur.tag == next.tag && (cur.tag == Op::ins || cur.tag == Op::del)) {
        ops_[p].grow_right(cur.tag == Op::ins ? next.new_len : next.old_len);
        ops_.erase(ops_.begin() + std::ptrdiff_t(p + 1));
      } else {
        break;
      }
    }
    return p;
  }

  void compact() {
    for (Op::Tag tag : {Op::del, Op::ins}) {
      for (size_t p = 0; p < ops_.size(); ++p) {
        if (ops_[p].tag != tag) continue;
        p = shift_up(p);
        p = shift_down(p);
      }
    }
  }

  // --- similar's Replace hook: merge runs, turn delete+insert into a replacement ---------------

  std::vector<Op> replace_pass() const {
    std::vector<Op> out;
    std::optional<Op> eq, del, ins;
    auto flush_eq = [&] {
      if (eq) out.push_back(*eq);
      eq.reset();
    };
    auto flush_del_ins = [&] {
      if (del) {
        if (ins) out.push_back({Op::replace, del->old_index, del->old_len, ins->new_index, ins->new_len});
        else out.push_back(*del);
      } else if (ins) {
        out.push_back(*ins);
      }
      del.reset();
      ins.reset();
    };
    for (const Op& op : ops_) {
      if (op.tag == Op::equal) {
        flush_del_ins();
        if (eq) eq->adjust(0, std::ptrdiff_t(op.old_len));
        else eq = op;
      } else if (op.tag == Op::del) {
        flush_eq();
        if (del) del->old_len += op.old_len;
        else del = op;
      } else {
        flush_eq();
        if (ins) ins->new_len += op.new_len;
        else ins = op;
      }
    }
    flush_eq();
    flush_del_ins();
    return out;
  }
};

// similar's group_diff_ops: hunks separated by more than 2n unchanged lines.
std::vector<std::vector<Op>> group_ops(std::vector<Op> ops, size_t n) {
  std::vector<std::vector<Op>> groups;
  if (ops.empty()) return groups;
  if (ops.front().tag == Op::equal) {
    size_t off = ops.front().old_len > n ? ops.front().old_len - n : 0;
    ops.front().adjust(std::ptrdiff_t(off), -std::ptrdiff_t(off));
  }
  if (ops.back().tag == Op::equal) {
    size_t cut = ops.back().old_len > n ? ops.back().old_len - n : 0;
    ops.back().adjust(0, -std::ptrdiff_t(cut));
  }
  std::vector<Op> pending;
  for (const Op& op : ops) {
    if (op.tag == Op::equal && op.old_len > n * 2) {
      pending.push_back(make_equal(op.old_index, op.new_index, n));
      groups.push_back(std::move(pending));
      size_t off = op.old_len - n;
      pending = {make_equal(op.old_index + off, op.new_index + off, op.old_len - off)};
      continue;
    }
    pending.push_back(op);
  }
  if (!(pending.empty() || (pending.size() == 1 && pending[0].tag == Op::equal)))
    groups.push_back(std::move(pending));
  return groups;
}

std::string range_text(size_t start, size_t end) {
  size_t beginning = start + 1, len = end > start ? end - start : 0;
  if (len == 1) return std::to_string(beginning);
  if (len == 0) --beginning;  // an empty range names the line before it
  return std::to_string(beginning) + "," + std::to_string(len);
}

void emit_line(std::string& out, char tag, std::string_view value) {
  out.push_back(tag);
  out.append(value);
  if (value.empty() || (value.back() != '\n' && value.back() != '\r'))
    out.append("\n\\ No newline at end of file\n");
}

}  // namespace

std::string unified_diff(std::string_view old_text, std::string_view new_text, int context) {
  auto old_lines = tokenize_lines(old_text), new_lines = tokenize_lines(new_text);
  // Compare small integers instead of strings.
  std::unordered_map<std::string_view, uint32_t> ids;
  auto intern = [&](const std::vector<std::string_view>& lines) {
    std::vector<uint32_t> out;
    out.reserve(lines.size());
    for (auto l : lines) out.push_back(ids.try_emplace(l, uint32_t(ids.size())).first->second);
    return out;
  };
  auto a = intern(old_lines), b = intern(new_lines);
  std::vector<Op> ops = Differ(a, b).run();

  std::string out;
  for (const auto& group : group_ops(std::move(ops), size_t(context < 0 ? 0 : context))) {
    const Op &first = group.front(), &last = group.back();
    out += "@@ -" + range_text(first.old_index, last.old_end()) + " +" +
           range_text(first.new_index, last.new_end()) + " @@\n";
    for (const Op& op : group) {
      switch (op.tag) {
        case Op::equal:
          for (size_t k = 0; k < op.old_len; ++k) emit_line(out, ' ', old_lines[op.old_index + k]);
          break;
        case Op::del:
          for (size_t k = 0; k < op.old_len; ++k) emit_line(out, '-', old_lines[op.old_index + k]);
          break;
        case Op::ins:
          for (size_t k = 0; k < op.new_len; ++k) emit_line(out, '+', new_lines[op.new_index + k]);
          break;
        case Op::replace:
          for (size_t k = 0; k < op.old_len; ++k) emit_line(out, '-', old_lines[op.old_index + k]);
          for (size_t k = 0; k < op.new_len; ++k) emit_line(out, '+', new_lines[op.new_index + k]);
          break;
      }
    }
  }
  return out;
}

}  // namespace llmx::patch
