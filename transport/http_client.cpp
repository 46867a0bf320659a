#include "transport/http_client.hpp"

#include <curl/curl.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "protocol/base/secret_env.hpp"
#include "transport/curl_api.hpp"
#include "transport/curl_sockets.hpp"

namespace llmx::http {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// Easy handles kept for reuse; beyond this they are freed (the connection cache lives in the
// multi handle, so freeing an easy handle loses no keep-alive connection).
constexpr std::size_t kMaxFreeEasy = 64;
constexpr int kPollMs = 1000;

}  // namespace

std::optional<std::string> header(const ResponseHead& head, std::string_view name) {
  for (const auto& [k, v] : head.headers)
    if (iequals(k, name)) return v;
  return std::nullopt;
}

namespace {

// What a transfer gathers in one round before it is handed over anyway: a burst still reaches
// the handler (and its hold) in pieces of about one read (curl reads 16 KiB at a time). At
// 4 KiB a burst came in batches of about 20 deltas, each a trip through every actor; at 64 KiB
// a batch's lines pass the heap's mmap threshold and cost page faults (both measured slower).
constexpr std::size_t kGatherBytes = 16 * 1024;

// One request from start() to on_done. Owned by the submission queue, then by the loop.
struct Transfer {
  RequestId id = 0;
  Request req;  // owns url/body: curl keeps pointers into them while the transfer runs
  std::shared_ptr<Handler> handler;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  ResponseHead head;
  bool head_sent = false;
  bool aborted = false;  // cancelled on the loop thread, or the handler threw
  bool paused = false;   // Client::pause: the body waits in curl (see on_write)
  bool held = false;     // the handler's hold(), until Client::release
  std::string body;      // received in this round, not yet handed to the handler
  std::vector<Transfer*>* round = nullptr;  // the loop's list of transfers with a body this round
  char errbuf[CURL_ERROR_SIZE];

  ~Transfer() { curl_api().slist_free_all(headers); }

  // Reports the head; false means the transfer must be aborted.
  bool emit_head() {
    head_sent = true;
    try {
      handler->on_head(head);
    } catch (...) {
      aborted = true;
    }
    return !aborted;
  }

  static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* self) {
    auto* t = static_cast<Transfer*>(self);
    const std::size_t len = size * n;
    if (t->aborted) return 0;
    if (t->head_sent) return len;  // trailers after a chunked body: not reported
    std::string_view line(data, len);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.empty()) {  // blank line: end of one header block
      if (t->head.status >= 100 && t->head.status < 200) {  // interim (100-continue etc.)
        t->head.status = 0;
        t->head.headers.clear();
        return len;
      }
      return t->emit_head() ? len : 0;
    }
    if (line.starts_with("HTTP/")) {  // status line; a new response head begins
      t->head.headers.clear();
      t->head.status = 0;
      auto sp = line.find(' ');
      if (sp != std::string_view::npos)
        for (std::size_t i = sp + 1; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i)
          t->head.status = t->head.status * 10 + (line[i] - '0');
      return len;
    }
    if ((line.front() == ' ' || line.front() == '\t') && !t->head.headers.empty()) {
      auto& v = t->head.headers.back().second;  // obsolete folded continuation line
      v.push_back(' ');
      v.append(trim(line));
      return len;
    }
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return len;
    t->head.headers.emplace_back(std::string(line.substr(0, colon)),
                                 std::string(trim(line.substr(colon + 1))));
    return len;
  }

  static std::size_t on_write(char* data, std::size_t size, std::size_t n, void* self) {
    auto* t = static_cast<Transfer*>(self);
    const std::size_t len = size * n;
    if (t->aborted) return 0;  // any value != len makes curl fail the transfer
    // Paused: curl keeps this chunk, stops reading, and hands the chunk over again once the
    // transfer is unpaused. (A pause asked before the request started does not survive curl's
    // start of the request; this one always holds.)
    if (t->paused || t->held) return CURL_WRITEFUNC_PAUSE;
    if (!t->head_sent) {       // no blank line seen (should not happen with HTTP/1.x or h2)
      curl_api().easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->head.status);
      if (!t->emit_head()) return 0;
    }
    // The bytes wait for the end of the round: several pieces of a stream (a model's deltas,
    // each its own HTTP chunk) reach the handler as one.
    if (t->body.empty()) t->round->push_back(t);
    t->body.append(data, len);
    if (t->body.size() >= kGatherBytes) t->hand_over();
    return t->aborted ? 0 : len;
  }

  // Gives the handler what the round gathered. Held: the next chunk waits in curl (on_write
  // returns PAUSE then).
  void hand_over() {
    if (body.empty() || aborted) return body.clear();
    try {
      handler->on_body(body);
      held = handler->hold();
    } catch (...) {
      aborted = true;
    }
    if (body.capacity() > 4 * kGatherBytes) std::string().swap(body);
    body.clear();
  }

  bool stopped() const { return paused || held; }
};

// A submission: start (transfer set), pause or read on (pause set), end a hold (release set),
// cancel (none set), or cancel unless it ends by itself within `grace` (grace set).
struct Op {
  RequestId id = 0;
  std::unique_ptr<Transfer> transfer;
  std::optional<std::chrono::milliseconds> grace = std::nullopt;
  std::optional<bool> pause = std::nullopt;
  bool release = false;
};

}  // namespace

struct Client::Impl {
  Options opts;
  CURLM* multi = nullptr;
  std::thread thread;
  std::atomic<RequestId> next_id{1};
  std::atomic<std::size_t> active{0};

  std::mutex mu;                // guards the three members below
  std::vector<Op> queue;        // submissions not yet seen by the loop
  bool stop = false;            // destructor asked the loop to finish
  bool closed = false;          // loop is gone: start() fails inline

  // Loop-thread state.
  std::unordered_map<RequestId, std::unique_ptr<Transfer>> transfers;
  // Transfers told to finish by themselves, with the time they are cancelled at otherwise.
  std::vector<std::pair<std::chrono::steady_clock::time_point, RequestId>> deadlines;
  std::vector<CURL*> free_easy;
  std::vector<Op> work;  // swapped with `queue` so both keep their capacity
  std::vector<Transfer*> round_bodies;  // the transfers that received body bytes this round
  std::unique_ptr<CurlSockets> sockets;  // what the loop waits on

  explicit Impl(Options o) : opts(o) {
    curl_api();  // loads libcurl and runs curl_global_init once
    multi = curl_api().multi_init();
    if (!multi) throw std::runtime_error("curl_multi_init failed");
    curl_api().multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(opts.max_connections));
    curl_api().multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS,
                      static_cast<long>(opts.max_host_connections));
    // Keep as many idle connections cached as we may have open, for keep-alive reuse.
    if (opts.max_connections > 0)
      curl_api().multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(opts.max_connections));
    curl_api().multi_setopt(multi, CURLMOPT_PIPELINING, opts.http2 ? CURLPIPE_MULTIPLEX : CURLPIPE_NOTHING);
    sockets = std::make_unique<CurlSockets>(multi);
    thread = std::thread([this] { run(); });
  }

  ~Impl() {
    {
      std::lock_guard lk(mu);
      stop = true;
      sockets->wake();
    }
    if (thread.joinable()) thread.join();
    for (CURL* e : free_easy) curl_api().easy_cleanup(e);
    curl_api().multi_cleanup(multi);  // its last socket callbacks still reach `sockets`
    sockets.reset();
  }

  // ---- loop thread ---------------------------------------------------------------------------

  void run() {
    // Streams that deliver a few bytes at a time (a model's deltas) would otherwise wake the
    // actors once per delta: after a round that delivered, a short wait lets the bytes of every
    // stream gather, so the next round hands the actors everything that arrived meanwhile.
    // New work (a request to start, a cancel) ends the wait: only the streams' bytes gather. It
    // is taken after one more round without waiting: a stream's last bytes end its transfer and
    // give its connection back, so the request that came (a turn's next request, often sent in
    // answer to that stream's end) reuses it instead of opening another.
    while (drain())
      if (round(expire_deadlines()) && sockets->wait_for_wake(opts.gather)) round(0);
    shutdown();
  }

  // Waits up to `wait_ms` for the sockets, lets curl act, hands over what arrived and reaps what
  // ended. Returns whether any body was handed over.
  bool round(int wait_ms) {
    sockets->wait_and_act(wait_ms);
    const bool delivered = hand_over_round();
    reap();
    return delivered;
  }

  // Hands each transfer what it gathered in this round, before any of them is reaped (its body
  // comes before its end). A handler that threw has its transfer cancelled. Returns whether
  // any body was handed over.
  bool hand_over_round() {
    if (round_bodies.empty()) return false;
    std::vector<RequestId> failed;
    for (Transfer* t : round_bodies) {
      const bool was_aborted = t->aborted;  // then on_write has failed it already
      t->hand_over();
      if (t->aborted && !was_aborted) failed.push_back(t->id);
    }
    round_bodies.clear();
    for (RequestId id : failed) abort(id);
    return true;
  }

  // Cancels the transfers whose grace ran out; returns how long the loop may sleep.
  int expire_deadlines() {
    if (deadlines.empty()) return kPollMs;
    auto now = std::chrono::steady_clock::now();
    std::erase_if(deadlines, [&](const auto& d) {
      if (!transfers.count(d.second)) return true;  // ended by itself
      if (d.first > now) return false;
      abort(d.second);
      return true;
    });
    auto sleep = std::chrono::milliseconds(kPollMs);
    for (const auto& d : deadlines)
      sleep = std::min(sleep, std::chrono::ceil<std::chrono::milliseconds>(d.first - now));
    return static_cast<int>(std::max<int64_t>(sleep.count(), 1));
  }

  // Applies queued starts and cancels; false once the destructor asked us to stop.
  bool drain() {
    {
      std::lock_guard lk(mu);
      if (stop) return false;
      sockets->take_wakes();
      work.swap(queue);
    }
    for (Op& op : work) {
      if (op.transfer)
        begin(std::move(op.transfer));
      else if (op.pause)
        set_paused(op.id, *op.pause);
      else if (op.release)
        unhold(op.id);
      else if (op.grace && transfers.count(op.id))
        deadlines.emplace_back(std::chrono::steady_clock::now() + *op.grace, op.id);
      else if (!op.grace)
        abort(op.id);
    }
    work.clear();
    return true;
  }

  void begin(std::unique_ptr<Transfer> t) {
    CURL* e = nullptr;
    if (!free_easy.empty()) {
      e = free_easy.back();
      free_easy.pop_back();
    } else {
      e = curl_api().easy_init();
    }
    if (!e) return finish(std::move(t), "curl_easy_init failed");
    t->easy = e;
    t->round = &round_bodies;
    if (!configure(*t)) {
      release(e);
      return finish(std::move(t), "out of memory building request headers");
    }
    CURLMcode mc = curl_api().multi_add_handle(multi, e);
    if (mc != CURLM_OK) {
      release(e);
      return finish(std::move(t), std::string("curl_multi_add_handle: ") + curl_api().multi_strerror(mc));
    }
    RequestId id = t->id;
    transfers.emplace(id, std::move(t));
  }

  bool configure(Transfer& t) {
    CURL* e = t.easy;
    Request& r = t.req;
    t.errbuf[0] = '\0';
    curl_api().easy_setopt(e, CURLOPT_URL, r.url.c_str());
    curl_api().easy_setopt(e, CURLOPT_PRIVATE, &t);
    curl_api().easy_setopt(e, CURLOPT_ERRORBUFFER, t.errbuf);
    curl_api().easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_api().easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_api().easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);  // long idle streams through NATs
    curl_api().easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, r.connect_timeout_ms);
    curl_api().easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);  // proxy CONNECT is not the head
    // No Accept-Encoding and no decoding: an SSE stream must reach us byte for byte, unbuffered.
    curl_api().easy_setopt(e, CURLOPT_ACCEPT_ENCODING, static_cast<char*>(nullptr));
    curl_api().easy_setopt(e, CURLOPT_HTTP_CONTENT_DECODING, 0L);
    if (opts.http2) {
      curl_api().easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
      // Prefer multiplexing on a connection still negotiating over opening another. Only for
      // TLS: plain http is always HTTP/1.1 here, and there PIPEWAIT parks every concurrent
      // request to the host until the first response finishes (fatal for long streams).
      if (r.url.size() >= 8 && iequals(std::string_view(r.url).substr(0, 8), "https://"))
        curl_api().easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    } else {
      curl_api().easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    }
    curl_api().easy_setopt(e, CURLOPT_HEADERFUNCTION, &Transfer::on_header);
    curl_api().easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_api().easy_setopt(e, CURLOPT_WRITEFUNCTION, &Transfer::on_write);
    curl_api().easy_setopt(e, CURLOPT_WRITEDATA, &t);

    const bool get = r.method == "GET";
    if (get) {
      curl_api().easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
      if (r.method != "POST") curl_api().easy_setopt(e, CURLOPT_CUSTOMREQUEST, r.method.c_str());
      if (r.method == "POST" || !r.body.empty()) {
        curl_api().easy_setopt(e, CURLOPT_POSTFIELDS, r.body.str().data());  // no copy: `r` outlives it
        curl_api().easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
      }
    }

    bool has_expect = false;
    std::string line;
    for (const auto& [name, value] : r.headers) {
      if (iequals(name, "Expect")) has_expect = true;
      line.assign(name);
      // curl drops "Name:" with an empty value; "Name;" sends it empty.
      if (value.empty()) {
        line += ';';
      } else {
        line += ": ";
        line += value;
      }
      curl_slist* n = curl_api().slist_append(t.headers, line.c_str());
      if (!n) return false;
      t.headers = n;
    }
    // curl would otherwise send "Expect: 100-continue" for bodies > 1 KiB and wait for the
    // interim response: a full round trip (or a 1 s stall) before every large prompt.
    if (!get && !has_expect) {
      curl_slist* n = curl_api().slist_append(t.headers, "Expect:");
      if (!n) return false;
      t.headers = n;
    }
    if (t.headers) curl_api().easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
    return true;
  }

  // Returns an easy handle after its transfer left the multi handle.
  void release(CURL* e) {
    if (free_easy.size() < kMaxFreeEasy) {
      curl_api().easy_reset(e);  // drops options (and our dangling pointers), keeps caches
      free_easy.push_back(e);
    } else {
      curl_api().easy_cleanup(e);
    }
  }

  // Delivers the single on_done and drops the handler.
  void finish(std::unique_ptr<Transfer> t, const std::string& error) {
    std::shared_ptr<Handler> h = std::move(t->handler);
    t.reset();
    active.fetch_sub(1, std::memory_order_acq_rel);
    try {
      h->on_done(error);
    } catch (...) {
      // A throwing on_done has nothing left to cancel.
    }
  }

  // Unpausing may deliver what curl held back, from inside curl_easy_pause (this thread).
  void set_paused(RequestId id, bool paused) {
    auto it = transfers.find(id);
    if (it == transfers.end() || it->second->aborted || it->second->paused == paused) return;
    const bool was = it->second->stopped();
    it->second->paused = paused;
    if (it->second->stopped() != was) curl_api().easy_pause(it->second->easy, paused ? CURLPAUSE_RECV : CURLPAUSE_CONT);
  }

  // A hold stops curl by on_write's answer, so curl may or may not be paused yet; CONT is
  // harmless either way.
  void unhold(RequestId id) {
    auto it = transfers.find(id);
    if (it == transfers.end() || it->second->aborted || !it->second->held) return;
    it->second->held = false;
    if (!it->second->paused) curl_api().easy_pause(it->second->easy, CURLPAUSE_CONT);
  }

  void abort(RequestId id) {
    auto node = transfers.extract(id);
    if (node.empty()) return;  // already done (or never existed)
    std::unique_ptr<Transfer>& t = node.mapped();
    std::erase(round_bodies, t.get());  // a cancel in drain() after an unpause delivered bytes
    curl_api().multi_remove_handle(multi, t->easy);
    release(t->easy);
    finish(std::move(t), std::string(kCancelled));
  }

  static std::string error_text(const Transfer& t, CURLcode rc) {
    if (t.aborted) return std::string(kCancelled);
    if (rc == CURLE_OK) return {};
    std::string s = t.errbuf[0] ? std::string(t.errbuf) : std::string(curl_api().easy_strerror(rc));
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    s += " (curl ";
    s += std::to_string(static_cast<int>(rc));
    s += ')';
    return s;
  }

  // Completed transfers: detach, recycle the easy handle, then report.
  void reap() {
    int left = 0;
    while (CURLMsg* m = curl_api().multi_info_read(multi, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      CURL* e = m->easy_handle;      // copy out: `m` dies with curl_multi_remove_handle
      CURLcode rc = m->data.result;
      Transfer* raw = nullptr;
      curl_api().easy_getinfo(e, CURLINFO_PRIVATE, &raw);
      curl_api().multi_remove_handle(multi, e);
      auto node = transfers.extract(raw->id);
      std::string err = error_text(*raw, rc);
      release(e);
      if (!node.empty()) finish(std::move(node.mapped()), err);
    }
  }

  // Loop exit: everything still pending is cancelled, on this thread.
  void shutdown() {
    {
      std::lock_guard lk(mu);
      closed = true;
      for (Op& op : queue) work.push_back(std::move(op));
      queue.clear();
    }
    round_bodies.clear();  // what was gathered goes with the transfers: they are cancelled
    for (auto& [id, t] : transfers) curl_api().multi_remove_handle(multi, t->easy);
    auto pending = std::move(transfers);
    transfers.clear();
    for (auto& [id, t] : pending) {
      release(t->easy);
      finish(std::move(t), std::string(kCancelled));
    }
    for (Op& op : work)
      if (op.transfer) finish(std::move(op.transfer), std::string(kCancelled));
    work.clear();
  }
};

std::size_t default_max_connections() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 256;
  return std::clamp<std::size_t>(static_cast<std::size_t>(rl.rlim_cur) / 4, 64, 4096);
}

std::chrono::microseconds default_gather() {
  return std::chrono::microseconds(env_count("LLMX_HTTP_GATHER_US", 2000));
}

Client::Client() : Client(Options{}) {}

Client::Client(Options options) : impl_(std::make_unique<Impl>(options)) {}

Client::~Client() = default;

RequestId Client::start(Request request, std::shared_ptr<Handler> handler) {
  if (!handler) throw std::invalid_argument("llmx::http::Client::start: null handler");
  auto t = std::make_unique<Transfer>();
  t->id = impl_->next_id.fetch_add(1, std::memory_order_relaxed);
  t->req = std::move(request);
  t->handler = std::move(handler);
  t->handler->request_ = t->id;
  const RequestId id = t->id;
  impl_->active.fetch_add(1, std::memory_order_acq_rel);
  std::unique_lock lk(impl_->mu);
  if (impl_->closed) {  // only during destruction: no loop left to call us back
    lk.unlock();
    impl_->finish(std::move(t), std::string(kCancelled));
    return id;
  }
  const bool was_empty = impl_->queue.empty();
  impl_->queue.push_back(Op{id, std::move(t)});
  // One wakeup per batch: the loop drains the whole queue. Under the lock so the loop's sockets
  // cannot be destroyed concurrently.
  if (was_empty) impl_->sockets->wake();
  return id;
}

void Client::finish_within(RequestId id, std::chrono::milliseconds grace) {
  std::lock_guard lk(impl_->mu);
  if (impl_->closed) return;
  const bool was_empty = impl_->queue.empty();
  impl_->queue.push_back(Op{id, nullptr, grace});
  if (was_empty) impl_->sockets->wake();
}

void Client::cancel(RequestId id) {
  if (std::this_thread::get_id() == impl_->thread.get_id()) {
    // From a callback: silence the transfer right away; curl may still be inside it, so the
    // removal itself happens when the loop drains the queue (or curl reports the abort).
    if (auto it = impl_->transfers.find(id); it != impl_->transfers.end()) it->second->aborted = true;
  }
  std::lock_guard lk(impl_->mu);
  if (impl_->closed) return;
  const bool was_empty = impl_->queue.empty();
  impl_->queue.push_back(Op{id, nullptr});
  if (was_empty) impl_->sockets->wake();
}

void Client::pause(RequestId id, bool paused) {
  std::lock_guard lk(impl_->mu);
  if (impl_->closed) return;
  const bool was_empty = impl_->queue.empty();
  impl_->queue.push_back(Op{id, nullptr, std::nullopt, paused});
  if (was_empty) impl_->sockets->wake();
}

void Client::release(RequestId id) {
  std::lock_guard lk(impl_->mu);
  if (impl_->closed) return;
  const bool was_empty = impl_->queue.empty();
  Op op{id, nullptr};
  op.release = true;
  impl_->queue.push_back(std::move(op));
  if (was_empty) impl_->sockets->wake();
}

std::size_t Client::active() const { return impl_->active.load(std::memory_order_acquire); }

Client& Client::shared() {
  static Client instance;
  return instance;
}

}  // namespace llmx::http
