// heap-growth: where a process's glibc arenas grow. Reads heaptrack's raw stream on stdin (the
// preload library's output before heaptrack_interpret, which drops the addresses) and every
// --every ms of the process's time reports:
//   - the free gaps between live blocks, by size: what the arenas hold but cannot hand out;
//   - the blocks that raised an arena's highest address since the last report, by call stack:
//     the requests no free gap could take (the arena's growth);
//   - the live bytes by call stack.
// The soak's RSS creep (README, "Soak") was read this way; see the README for the command line.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "tools/llmx/start/heap_policy.hpp"

namespace {

// Blocks this big are mapped on their own, outside the arenas (llmx holds the threshold).
constexpr uint64_t kMapped = llmx::cli::kMmapThreshold;
constexpr int kRegionBits = 26;          // glibc's non-main heaps: 64 MB, aligned to their size

struct Block {
  uint64_t size;
  uint32_t trace;
  uint32_t born_ms;
};
struct Node {
  uint64_t ip;
  uint32_t parent;
};
struct Module {
  std::string path;
  uint64_t base, end;
};
struct Tally {
  uint64_t bytes = 0, count = 0;
  uint64_t sum = 0;  // of the blocks' sizes (growth) or ages in ms (live)
};

std::vector<Node> nodes{{0, 0}};  // heaptrack's trace tree; index 0 is the root
std::vector<Module> modules;
std::string exe;
std::unordered_map<uint64_t, Block> live;
std::unordered_map<uint64_t, uint64_t> high_water;  // region -> highest block end so far
std::unordered_map<uint32_t, Tally> growth;        // by trace, since the last report
uint64_t now_ms = 0, reported_ms = 0, rss_pages = 0;
int depth = 10;
std::map<std::pair<std::string, uint64_t>, std::string> names;

// The next hexadecimal field of a line; `p` moves past it.
uint64_t hex(const char*& p) {
  while (*p == ' ') ++p;
  uint64_t v = 0;
  p = std::from_chars(p, p + std::strlen(p), v, 16).ptr;
  return v;
}

// The module holding `ip`, or null.
const Module* module_of(uint64_t ip) {
  for (const auto& m : modules)
    if (ip >= m.base && ip < m.end) return &m;
  return nullptr;
}

// A function name without its template arguments and parameters.
std::string short_name(const std::string& full) {
  std::string out;
  int nesting = 0;
  for (char c : full) {
    if (c == '<' || c == '(') ++nesting;
    if (nesting == 0) out += c;
    if ((c == '>' || c == ')') && nesting > 0) --nesting;
  }
  return out.substr(0, 80);
}

// Names for the frames of `traces` (addr2line, one run per module).
void resolve(const std::vector<uint32_t>& traces) {
  std::map<std::string, std::vector<uint64_t>> wanted;
  for (uint32_t t : traces)
    for (int i = 0; i < depth && t; ++i, t = nodes[t].parent)
      if (const Module* m = module_of(nodes[t].ip); m && !names.count({m->path, nodes[t].ip - m->base}))
        wanted[m->path].push_back(nodes[t].ip - m->base);
  for (auto& [path, offsets] : wanted) {
    std::sort(offsets.begin(), offsets.end());
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    std::string cmd = "addr2line -f -C -e '" + path + "'";
    for (uint64_t o : offsets) {
      char b[24];
      std::snprintf(b, sizeof b, " 0x%lx", static_cast<unsigned long>(o));
      cmd += b;
    }
    FILE* p = ::popen(cmd.c_str(), "r");
    char line[4096];
    for (uint64_t o : offsets) {
      std::string name = p && std::fgets(line, sizeof line, p) ? std::string(line, std::strcspn(line, "\n")) : "??";
      if (p) std::fgets(line, sizeof line, p);  // file:line
      names[{path, o}] = name == "??" ? path.substr(path.rfind('/') + 1) : short_name(name);
    }
    if (p) ::pclose(p);
  }
}

std::string stack(uint32_t t) {
  std::string s;
  for (int i = 0; i < depth && t; ++i, t = nodes[t].parent) {
    const Module* m = module_of(nodes[t].ip);
    const std::string frame = m ? names[{m->path, nodes[t].ip - m->base}] : "?";
    if (frame.starts_with("operator new") || frame.empty()) continue;
    s += (s.empty() ? "" : " < ") + frame;
  }
  return s;
}

// Tallies by trace, summed by the stack they print as, largest first.
std::vector<std::pair<std::string, Tally>> by_stack(const std::unordered_map<uint32_t, Tally>& tallies, size_t top) {
  std::vector<uint32_t> traces;
  for (const auto& [t, _] : tallies) traces.push_back(t);
  resolve(traces);
  std::map<std::string, Tally> summed;
  for (const auto& [t, x] : tallies) {
    auto& s = summed[stack(t)];
    s.bytes += x.bytes, s.count += x.count, s.sum += x.sum;
  }
  std::vector<std::pair<std::string, Tally>> rows(summed.begin(), summed.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
  if (rows.size() > top) rows.resize(top);
  return rows;
}

void report() {
  std::vector<std::pair<uint64_t, Block>> blocks(live.begin(), live.end());
  std::sort(blocks.begin(), blocks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  uint64_t live_bytes = 0, gaps[5] = {};
  std::unordered_map<uint32_t, Tally> held;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const auto& [ptr, b] = blocks[i];
    live_bytes += b.size;
    auto& h = held[b.trace];
    h.bytes += b.size, ++h.count, h.sum += now_ms - b.born_ms;
    if (i + 1 == blocks.size() || b.size >= kMapped || (blocks[i + 1].first >> kRegionBits) != (ptr >> kRegionBits))
      continue;
    uint64_t gap = blocks[i + 1].first - (ptr + b.size);
    gaps[gap < 1024 ? 0 : gap < 4096 ? 1 : gap < 16384 ? 2 : gap < 65536 ? 3 : 4] += gap;
  }
  uint64_t grown = 0;
  for (const auto& [_, x] : growth) grown += x.bytes;
  std::printf("\n=== %.1f min: RSS %.1f MB, live %.1f MB in %zu blocks\n", now_ms / 60000.0, rss_pages * 4096 / 1e6,
              live_bytes / 1e6, blocks.size());
  std::printf("free gaps between live blocks (MB): <1K %.1f, 1-4K %.1f, 4-16K %.1f, 16-64K %.1f, 64K+ %.1f\n",
              gaps[0] / 1e6, gaps[1] / 1e6, gaps[2] / 1e6, gaps[3] / 1e6, gaps[4] / 1e6);
  std::printf("arenas grew %.1f MB since the last report, by the blocks that raised them:\n", grown / 1e6);
  for (const auto& [s, x] : by_stack(growth, 12))
    std::printf("  %8.1f KB  %6lu blocks of %6.0f B on average | %s\n", x.bytes / 1e3,
                static_cast<unsigned long>(x.count), double(x.sum) / double(x.count), s.c_str());
  std::printf("live bytes by stack:\n");
  for (const auto& [s, x] : by_stack(held, 12))
    std::printf("  %8.1f KB  %8lu blocks, %6.1f s old on average | %s\n", x.bytes / 1e3,
                static_cast<unsigned long>(x.count), double(x.sum) / 1e3 / double(x.count), s.c_str());
  std::fflush(stdout);
  growth.clear();
  reported_ms = now_ms;
}

void on_module(const char* p) {
  hex(p);  // the name's length
  while (*p == ' ') ++p;
  if (p[0] == '-' && (p[1] == '\n' || p[1] == 0)) return modules.clear();
  const char* name = p;
  while (*p && *p != ' ') ++p;
  Module m{std::string(name, p), 0, 0};
  if (m.path == "x") m.path = exe;  // the executable
  m.base = m.end = hex(p);
  while (*p == ' ') {
    uint64_t vaddr = hex(p), size = hex(p);
    m.end = std::max(m.end, m.base + vaddr + size);
  }
  modules.push_back(std::move(m));
}

void on_alloc(uint64_t size, uint32_t trace, uint64_t ptr) {
  live[ptr] = {size, trace, static_cast<uint32_t>(now_ms)};
  if (size >= kMapped) return;
  uint64_t& top = high_water[ptr >> kRegionBits];
  uint64_t end = ptr + size;
  if (top != 0 && end > top) {
    auto& g = growth[trace];
    g.bytes += end - top, ++g.count, g.sum += size;
  }
  top = std::max(top, end);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t every = 120000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--every")) every = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--depth")) depth = std::atoi(argv[i + 1]);
  }
  uint64_t next = every;
  char* line = nullptr;
  size_t cap = 0;
  while (::getline(&line, &cap, stdin) > 0) {
    const char* p = line + 1;
    switch (line[0]) {
      case 't': {
        uint64_t ip = hex(p);
        nodes.push_back({ip, static_cast<uint32_t>(hex(p))});
        break;
      }
      case '+': {
        uint64_t size = hex(p), trace = hex(p), ptr = hex(p);
        on_alloc(size, static_cast<uint32_t>(trace), ptr);
        break;
      }
      case '-': live.erase(hex(p)); break;
      case 'c':
        now_ms = hex(p);
        if (now_ms >= next) report(), next += every;
        break;
      case 'R': rss_pages = hex(p); break;
      case 'm': on_module(p); break;
      case 'x': {  // "x <length> <path>"
        hex(p);
        while (*p == ' ') ++p;
        exe.assign(p, std::strcspn(p, "\n"));
        break;
      }
      default: break;
    }
  }
  if (now_ms > reported_ms || !growth.empty()) report();  // what came after the last report
  std::free(line);
}
