#include "backend/zk_session.hpp"

#include <zookeeper/zookeeper.h>

#include <asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <string>

#include "distlock/error.hpp"

namespace distlock::backend::zk {

// One call in flight: freed by its completion (the C client calls every
// completion exactly once, with ZCLOSING at the latest when the handle
// closes).
struct Session::Call {
  Session* session;
  Done done;
};

// What a path watch's context names: its session and its id. The C client
// keeps the pointer until the watch fires (or the handle closes).
struct Session::WatchContext {
  Session* session;
  std::uint64_t id;
};

namespace {

// The C client's log lines go nowhere: a library must not write to stderr,
// and every failure reaches the caller as an error code and message.
void no_log(const char* /*message*/) {}

template <class F>
void finish(const void* data, F fill) {
  auto* call = static_cast<Session::Call*>(const_cast<void*>(data));
  Reply reply;
  fill(reply);
  Session* session = call->session;
  session->post_reply(std::move(call->done), std::move(reply));
  delete call;
}

}  // namespace

namespace {

void session_watcher(zhandle_t* handle, int type, int state, const char* /*path*/, void* context) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* session = static_cast<Session*>(context);
  session->post([session, handle, state] { session->on_session_event(handle, state); });
}

void path_watcher(
    zhandle_t* /*handle*/, int type, int /*state*/, const char* /*path*/, void* context) {
  // Session events reach every watch in the C client; only the node's own
  // event ends a watch.
  if (type == ZOO_SESSION_EVENT) return;
  auto* watch = static_cast<Session::WatchContext*>(context);
  Session* session = watch->session;
  const std::uint64_t id = watch->id;
  session->post([session, id, type] { session->on_watch_event(id, type); });
}

}  // namespace

std::string host_list(const ClientOptions& o) {
  std::string hosts;
  for (const auto& seed : o.seeds) {
    if (!hosts.empty()) hosts += ',';
    const bool v6 = seed.host.find(':') != std::string::npos;
    hosts += v6 ? "[" + seed.host + "]" : seed.host;
    hosts += ':' + std::to_string(seed.port);
  }
  return hosts;
}

Session::Session(const ClientOptions& options, runtime::Executor& executor)
    : options_(options), executor_(executor), hosts_(host_list(options)) {}

Session::~Session() {
  close();
}

void Session::post(std::function<void()> f) {
  // weak: the C client's threads may report after the last owner let go
  // (while the destructor closes the handles); that news has no one to tell.
  asio::post(executor_.io(), [weak = weak_from_this(), f = std::move(f)] {
    if (auto self = weak.lock()) f();
  });
}

void Session::post_reply(Done done, Reply reply) {
  post([done = std::move(done), reply = std::move(reply)] { done(reply); });
}

zhandle_t* Session::open_handle() {
  errno = 0;
  zhandle_t* h =
      zookeeper_init2(hosts_.c_str(), session_watcher,
                      static_cast<int>(options_.session_timeout.count()), nullptr, this, 0, no_log);
  if (h == nullptr) {
    throw Error(errc::invalid_argument,
                "ZooKeeper: the client library refused the server list '" + hosts_ + "'" +
                    (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  }
  if (!options_.username.empty()) {
    const std::string cert = options_.username + ":" + options_.password;
    // Queued, and re-sent by the C client on every reconnect; digest
    // credentials are never refused here (they are checked against ACLs).
    zoo_add_auth(h, "digest", cert.data(), static_cast<int>(cert.size()), nullptr, nullptr);
  }
  return h;
}

void Session::connect() {
  std::unique_lock lock(mutex_);
  handle_ = open_handle();
  const bool up = connected_cv_.wait_for(lock, options_.connect_timeout,
                                         [&] { return connected_once_ || closed_; });
  if (up && !closed_) return;
  lock.unlock();
  close();
  throw Error(errc::connection_failed,
              "ZooKeeper: no server of " + hosts_ + " started a session within " +
                  std::to_string(options_.connect_timeout.count()) + " ms (connect_timeout)");
}

void Session::close() noexcept {
  std::vector<zhandle_t*> handles;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    if (handle_ != nullptr) handles.push_back(handle_);
    handle_ = nullptr;
    handles.insert(handles.end(), old_handles_.begin(), old_handles_.end());
    old_handles_.clear();
    connected_cv_.notify_all();
  }
  // Joins the C client's threads: every completion has run (posted) after it.
  for (zhandle_t* h : handles) zookeeper_close(h);
}

void Session::on_session_event(zhandle_t* handle, int zk_state) {
  {
    std::lock_guard lock(mutex_);
    if (closed_ || handle != handle_) return;  // an old session's late news
    if (zk_state == ZOO_CONNECTED_STATE) {
      negotiated_ms_ = zoo_recv_timeout(handle);
      connected_once_ = true;
      connected_cv_.notify_all();
    }
  }
  if (zk_state == ZOO_CONNECTED_STATE) {
    set_state(State::connected);
  } else if (zk_state == ZOO_CONNECTING_STATE || zk_state == ZOO_ASSOCIATING_STATE) {
    if (state_ == State::connected) set_state(State::suspended);
  } else if (zk_state == ZOO_EXPIRED_SESSION_STATE || zk_state == ZOO_AUTH_FAILED_STATE) {
    set_state(State::expired);
    // As Curator: a new session at once, so later calls work again. The old
    // handle is closed with the Session (closing it here would join the C
    // client's threads from inside a posted reply's turn).
    std::lock_guard lock(mutex_);
    if (closed_) return;
    old_handles_.push_back(handle_);
    try {
      handle_ = open_handle();
    } catch (...) {
      handle_ = nullptr;  // the same server list worked before; calls fail ZINVALIDSTATE
    }
    state_ = State::connecting;
  }
}

void Session::set_state(State s) {
  if (state_ == s) return;
  state_ = s;
  // A listener may unlisten (itself or another) while being told.
  std::vector<Listener> told;
  told.reserve(listeners_.size());
  for (const auto& [id, l] : listeners_) told.push_back(l);
  for (const auto& l : told) l(s);
}

void Session::on_watch_event(std::uint64_t id, int type) {
  {
    std::lock_guard lock(mutex_);
    contexts_.erase(id);
  }
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  Fired fired = std::move(it->second);
  watches_.erase(it);
  fired(type);
}

std::uint64_t Session::listen(Listener listener) {
  const std::uint64_t id = next_id_++;
  listeners_.emplace(id, std::move(listener));
  return id;
}

void Session::unlisten(std::uint64_t id) {
  listeners_.erase(id);
}

std::chrono::milliseconds Session::negotiated_timeout() const noexcept {
  return std::chrono::milliseconds(negotiated_ms_.load());
}

zhandle_t* Session::usable(Done& done) {
  std::lock_guard lock(mutex_);
  if (closed_ || handle_ == nullptr) {
    post_reply(std::move(done), Reply{closed_ ? ZCLOSING : ZINVALIDSTATE, {}, {}, {}, {}});
    return nullptr;
  }
  return handle_;
}

template <class Issue>
void Session::send(Done done, Issue issue) {
  zhandle_t* h = usable(done);
  if (h == nullptr) return;
  auto* c = new Call{this, std::move(done)};
  // Refused at once (bad state or arguments): the C client will not call
  // the completion, so it is completed here.
  if (const int rc = issue(h, c); rc != ZOK) finish(c, [&](Reply& r) { r.rc = rc; });
}

Session::WatchContext* Session::watch_context(Fired fired) {
  const std::uint64_t id = next_id_++;
  watches_.emplace(id, std::move(fired));
  auto context = std::make_unique<WatchContext>(WatchContext{this, id});
  WatchContext* raw = context.get();
  std::lock_guard lock(mutex_);
  contexts_.emplace(id, std::move(context));
  return raw;
}

Session::Done Session::forget_watch_unless(Done done, std::uint64_t id, int kept_also) {
  return [this, id, kept_also, done = std::move(done)](const Reply& r) {
    if (r.rc != ZOK && r.rc != kept_also) {
      watches_.erase(id);
      std::lock_guard lock(mutex_);
      contexts_.erase(id);
    }
    done(r);
  };
}

namespace {

// The C client's completions, each copying its reply out.
void on_void(int code, const void* d) {
  finish(d, [&](Reply& r) { r.rc = code; });
}

void on_stat(int code, const struct Stat* stat, const void* d) {
  finish(d, [&](Reply& r) {
    r.rc = code;
    if (code == ZOK && stat != nullptr) r.czxid = stat->czxid;
  });
}

void on_created(int code, const char* made, const struct Stat* stat, const void* d) {
  finish(d, [&](Reply& r) {
    r.rc = code;
    if (code == ZOK && made != nullptr) r.path = made;
    if (code == ZOK && stat != nullptr) r.czxid = stat->czxid;
  });
}

void on_children(int code, const struct String_vector* names, const void* d) {
  finish(d, [&](Reply& r) {
    r.rc = code;
    if (code == ZOK && names != nullptr) {
      r.children.reserve(static_cast<std::size_t>(names->count));
      for (int i = 0; i < names->count; ++i) r.children.emplace_back(names->data[i]);
    }
  });
}

void on_data(int code, const char* value, int length, const struct Stat* stat, const void* d) {
  finish(d, [&](Reply& r) {
    r.rc = code;
    if (code == ZOK && value != nullptr && length > 0) {
      r.data.assign(value, static_cast<std::size_t>(length));
    }
    if (code == ZOK && stat != nullptr) r.czxid = stat->czxid;
  });
}

}  // namespace

void Session::create(const std::string& path, const std::string& data, int flags, Done done) {
  send(std::move(done), [&](zhandle_t* h, Call* c) {
    return zoo_acreate2(h, path.c_str(), data.data(), static_cast<int>(data.size()),
                        &ZOO_OPEN_ACL_UNSAFE, flags, on_created, c);
  });
}

void Session::children(const std::string& path, Done done) {
  send(std::move(done), [&](zhandle_t* h, Call* c) {
    return zoo_aget_children(h, path.c_str(), 0, on_children, c);
  });
}

void Session::get_watch(const std::string& path, Fired fired, Done done) {
  if (usable(done) == nullptr) return;
  WatchContext* w = watch_context(std::move(fired));
  // No watch is left on a node that does not exist (getData's rule).
  send(forget_watch_unless(std::move(done), w->id, ZOK), [&](zhandle_t* h, Call* c) {
    return zoo_awget(h, path.c_str(), path_watcher, w, on_data, c);
  });
}

void Session::exists_watch(const std::string& path, Fired fired, Done done) {
  if (usable(done) == nullptr) return;
  WatchContext* w = watch_context(std::move(fired));
  // An exists watch stays on a missing node; only a failed call leaves none.
  send(forget_watch_unless(std::move(done), w->id, ZNONODE), [&](zhandle_t* h, Call* c) {
    return zoo_awexists(h, path.c_str(), path_watcher, w, on_stat, c);
  });
}

void Session::exists(const std::string& path, Done done) {
  send(std::move(done),
       [&](zhandle_t* h, Call* c) { return zoo_aexists(h, path.c_str(), 0, on_stat, c); });
}

void Session::remove(const std::string& path, Done done) {
  send(std::move(done),
       [&](zhandle_t* h, Call* c) { return zoo_adelete(h, path.c_str(), -1, on_void, c); });
}

}  // namespace distlock::backend::zk
