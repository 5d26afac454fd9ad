#include "backend/zk_lock.hpp"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/system_executor.hpp>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "backend/engine_kit.hpp"
#include "backend/zk_session.hpp"
#include "distlock/error.hpp"
#include "net/zk_path.hpp"
#include "runtime/identity.hpp"

namespace distlock::backend::zk {

// The sequence part Curator sorts by: what follows the last "lock-".
std::string_view sequence_of(std::string_view child) {
  constexpr std::string_view lock_name = "lock-";
  const auto at = child.rfind(lock_name);
  return at == std::string_view::npos ? std::string_view() : child.substr(at + lock_name.size());
}

// The lock nodes of a directory, in queue order (Curator's
// StandardLockInternalsDriver order; other children are not in the queue).
std::vector<std::string> queue_of(std::vector<std::string> children) {
  std::erase_if(children, [](const std::string& c) { return sequence_of(c).empty(); });
  std::sort(children.begin(), children.end(), [](const std::string& a, const std::string& b) {
    return sequence_of(a) < sequence_of(b);
  });
  return children;
}

namespace {

using Clock = std::chrono::steady_clock;
using State = Session::State;

constexpr std::string_view kProtected = "_c_";
constexpr std::string_view kLockName = "lock-";

// While the session is connected a holding has no deadline of its own.
constexpr Clock::time_point kNoDeadline = Clock::time_point::max();

bool connection_trouble(int rc) {
  return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONMOVED;
}

std::string base_name(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

// The message for a call that failed with `rc` on `what`; its errc.
std::pair<std::error_code, std::string> failure(int rc, const std::string& what) {
  if (rc == ZCLOSING) return {errc::closed, "the client was closed"};
  if (rc == ZNOAUTH) {
    return {errc::auth_failed, "ZooKeeper refused " + what +
                                   ": no permission (ZNOAUTH); check the URI's credentials and "
                                   "the node's ACL"};
  }
  if (rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE) {
    return {errc::connection_lost, "ZooKeeper: the session expired during " + what};
  }
  if (connection_trouble(rc)) {
    return {errc::connection_lost, "ZooKeeper: the connection dropped during " + what};
  }
  return {errc::server_error, "ZooKeeper: " + what + " failed: " + zerror(rc)};
}

class Core;

// One holding: one lock node of this session.
class Holding final : public kit::Holding {
 public:
  Holding(std::shared_ptr<Core> core_of,
          std::shared_ptr<void> client_of,
          std::string name_of,
          std::string owner_of,
          std::string node_of,
          std::chrono::milliseconds session_timeout,
          const LostHandler* on_lost);

  const std::shared_ptr<Core> core;
  const std::string node;
  // I/O thread: when its own node starts being watched (Core::track).
  std::unique_ptr<asio::steady_timer> watch_later;

 private:
  // Deletes its node; a deletion the connection's loss left unanswered is
  // sent again after the reconnect (the release counts all the same).
  void release_on_io(std::function<void(std::error_code)> done) override;
  bool backend_closed() const noexcept override;
};

using kit::Got;

class AcquireOp;

// The per-Client state of the backend: the session, the live holdings, the
// acquires in progress, the deletions still owed, the threads' holds.
class Core : public std::enable_shared_from_this<Core> {
 public:
  Core(const ClientOptions& options, runtime::Executor& io, std::string id)
      : session(std::make_shared<Session>(options, io)), executor(io), client_id(std::move(id)) {}

  const std::shared_ptr<Session> session;
  runtime::Executor& executor;
  const std::string client_id;

  // Set by close(); read anywhere.
  std::atomic<bool> closed{false};

  // The threads' holds, by directory. Any thread.
  kit::ThreadHolds holds;

  // I/O thread only from here on.
  void start() {
    session->listen([weak = weak_from_this()](State s) {
      if (auto self = weak.lock()) self->on_state(s);
    });
  }
  void on_state(State s);
  // A holding made now: tracked for session news, its node watched.
  void track(const std::shared_ptr<Holding>& h);
  void untrack(const Holding* h) { live_.erase(h); }
  // Deletes `node` in the background, again after a reconnect, until the
  // ensemble answers (or the session ends: the node is gone with it).
  void delete_node(const std::string& node);
  // Finds the node the create with `uuid` in `dir` may have made, and
  // deletes it (a create whose reply was lost, given up).
  void clean_up(const std::string& dir, const std::string& uuid);
  void add(const std::shared_ptr<AcquireOp>& op) { ops_.insert(op); }
  void remove(const std::shared_ptr<AcquireOp>& op) { ops_.erase(op); }
  // Runs `f` when the session is connected (now, or after the reconnect).
  void when_connected(std::function<void()> f) {
    if (session->state() == State::connected) return f();
    waiting_.push_back(std::move(f));
  }
  // Fails every acquire with closed and loses every holding (client_closed).
  void shut_down();

 private:
  void watch_own(const std::shared_ptr<Holding>& h);
  // Marks every holding lost with `reason` and forgets them.
  void lose_all(LeaseLostEvent::Reason reason);

  std::map<const Holding*, std::weak_ptr<Holding>> live_;
  std::set<std::shared_ptr<AcquireOp>> ops_;
  std::vector<std::function<void()>> waiting_;
  // Runs while the connection is down: the session is over when it fires.
  asio::steady_timer outage_{executor.io()};
};

// One acquire, on the I/O thread: create, list, watch the predecessor, list
// again, until the node is first, the wait ends or it fails.
class AcquireOp final : public kit::Attempt, public std::enable_shared_from_this<AcquireOp> {
 public:
  using Done = std::function<void(Got)>;

  AcquireOp(std::shared_ptr<Core> core, std::string dir, Request request)
      : kit::Attempt(std::move(request), core->executor.io()),
        core_(std::move(core)),
        dir_(std::move(dir)) {}

  void start() override {
    if (core_->closed) return end({errc::closed, "the client was closed", nullptr});
    core_->add(shared_from_this());
    if (deadline_) {
      timer_.expires_at(*deadline_);
      timer_.async_wait([self = shared_from_this()](std::error_code ec) {
        if (ec) return;
        // A round trip in flight decides (a zero wait still makes its one
        // attempt), for at most command_timeout more, as a Redis attempt in
        // flight does; waiting for a watch or a reconnect ends now.
        if (!self->in_flight_) return self->give_up({});
        self->late_ = true;
        self->timer_.expires_after(self->core_->session->options().command_timeout);
        self->timer_.async_wait([self](std::error_code again) {
          if (!again) self->give_up({});
        });
      });
    }
    create();
  }

  // Any thread.
  void cancel() override {
    asio::post(core_->executor.io(), [self = shared_from_this()] {
      self->give_up(make_error_code(std::errc::operation_canceled));
    });
  }

  // The session expired: a node it made is gone with it. With time left it
  // queues again on the new session (as Curator's retry does).
  void session_expired() {
    if (finished_) return;
    node_.clear();
    uncertain_create_ = false;
    if (in_flight_) return;  // the call's reply (an error) comes and decides
    after_reconnect(&AcquireOp::create);
  }

  void closed() { fail(errc::closed, "the client was closed"); }

  // Ends without the lock; what it made is deleted. `ec` clear: the wait
  // ran out.
  void give_up(std::error_code ec) {
    if (finished_) return;
    std::string message;
    if (ec) message = "the acquire of '" + name_ + "' was cancelled";
    if (!node_.empty() && core_->session->state() == State::connected) {
      // Completes once the ensemble deleted its node, so an acquire that
      // gave up has left no place behind when its completion runs (the
      // next holder's is_locked() would see it otherwise).
      const std::string node = std::exchange(node_, std::string());
      finished_ = true;
      timer_.cancel();
      core_->remove(shared_from_this());
      core_->session->remove(node,
                             [self = shared_from_this(), node,
                              got = Got{ec, std::move(message), nullptr}](const Reply& r) mutable {
                               if (connection_trouble(r.rc)) self->core_->delete_node(node);
                               auto done = std::move(self->done_);
                               done(std::move(got));
                             });
      return;
    }
    drop_node();
    end({ec, std::move(message), nullptr});
  }

 private:
  void fail(errc e, std::string message) {
    if (finished_) return;
    drop_node();
    end({e, std::move(message), nullptr});
  }
  void fail_rc(int rc, const std::string& what) {
    if (rc == ZCLOSING) return closed();
    if ((rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE) && !finished_) {
      // Its node (if any) went with the session: queue again on the next.
      node_.clear();
      uncertain_create_ = false;
      return after_reconnect(&AcquireOp::create);
    }
    auto [ec, message] = failure(rc, what);
    if (finished_) return;
    drop_node();
    end({ec, std::move(message), nullptr});
  }

  void drop_node() {
    if (!node_.empty()) {
      core_->delete_node(node_);
      node_.clear();
    } else if (uncertain_create_) {
      core_->clean_up(dir_, uuid_);
    }
    // A create still in flight deletes what it made when it comes back.
  }

  // Goes on with `step` once the session is connected again, unless the
  // wait is over.
  void after_reconnect(void (AcquireOp::*step)()) {
    if (late_) return give_up({});
    core_->when_connected([self = shared_from_this(), step] {
      if (!self->finished_) ((*self).*step)();
    });
  }

  void create() {
    uuid_ = runtime::random_uuid();
    creating_ = true;
    const std::string path =
        dir_ + "/" + std::string(kProtected) + uuid_ + "-" + std::string(kLockName);
    in_flight_ = true;
    core_->session->create(path, owner_, ZOO_EPHEMERAL_SEQUENTIAL,
                           [self = shared_from_this()](const Reply& r) { self->created(r); });
  }

  void created(const Reply& r) {
    creating_ = false;
    in_flight_ = false;
    if (finished_) {
      if (r.rc == ZOK) core_->delete_node(r.path);
      if (connection_trouble(r.rc)) core_->clean_up(dir_, uuid_);
      return;
    }
    if (r.rc == ZOK) {
      node_ = r.path;
      czxid_ = r.czxid.value_or(0);
      return list();
    }
    if (r.rc == ZNONODE) return make_parents(1);
    if (connection_trouble(r.rc)) {
      // It may have been made: find it by its uuid once connected.
      uncertain_create_ = true;
      return after_reconnect(&AcquireOp::find_own);
    }
    fail_rc(r.rc, "the create of a lock node under '" + dir_ + "'");
  }

  // Makes the directory's missing ancestors (containers, as Curator's
  // creatingParentContainersIfNeeded), from the top: `depth` names how many
  // leading segments are done.
  void make_parents(std::size_t depth) {
    if (finished_) return;
    std::size_t at = 0;
    for (std::size_t i = 0; i < depth && at != std::string::npos; ++i) at = dir_.find('/', at + 1);
    const std::string prefix = at == std::string::npos ? dir_ : dir_.substr(0, at);
    in_flight_ = true;
    core_->session->create(
        prefix, {}, ZOO_CONTAINER,
        [self = shared_from_this(), depth, last = at == std::string::npos](const Reply& r) {
          self->in_flight_ = false;
          if (self->finished_) return;
          if (r.rc == ZOK || r.rc == ZNODEEXISTS) {
            return last ? self->create() : self->make_parents(depth + 1);
          }
          if (connection_trouble(r.rc)) {
            if (self->late_) return self->give_up({});
            return self->core_->when_connected([self, depth] { self->make_parents(depth); });
          }
          self->fail_rc(r.rc, "the create of the lock directory '" + self->dir_ + "'");
        });
  }

  // After a create whose reply was lost: adopt its node, or create again.
  void find_own() {
    if (finished_) return;
    in_flight_ = true;
    core_->session->children(dir_, [self = shared_from_this()](const Reply& r) {
      self->in_flight_ = false;
      if (self->finished_) return;
      if (connection_trouble(r.rc)) return self->after_reconnect(&AcquireOp::find_own);
      if (r.rc == ZNONODE) {
        self->uncertain_create_ = false;
        return self->create();
      }
      if (r.rc != ZOK) return self->fail_rc(r.rc, "the listing of '" + self->dir_ + "'");
      const std::string prefix = std::string(kProtected) + self->uuid_ + "-";
      for (const auto& c : r.children) {
        if (c.rfind(prefix, 0) != 0) continue;
        self->uncertain_create_ = false;
        self->node_ = self->dir_ + "/" + c;
        return self->read_czxid();
      }
      self->uncertain_create_ = false;
      self->create();
    });
  }

  void read_czxid() {
    in_flight_ = true;
    core_->session->exists(node_, [self = shared_from_this()](const Reply& r) {
      self->in_flight_ = false;
      if (self->finished_) return;
      if (r.rc == ZOK) {
        self->czxid_ = r.czxid.value_or(0);
        return self->list();
      }
      if (r.rc == ZNONODE) {
        self->node_.clear();
        return self->create();
      }
      if (connection_trouble(r.rc)) return self->after_reconnect(&AcquireOp::read_czxid);
      self->fail_rc(r.rc, "the read of '" + self->node_ + "'");
    });
  }

  void list() {
    if (finished_) return;
    in_flight_ = true;
    core_->session->children(dir_, [self = shared_from_this()](const Reply& r) {
      self->in_flight_ = false;
      self->listed(r);
    });
  }

  void listed(const Reply& r) {
    if (finished_) return;
    if (connection_trouble(r.rc)) return after_reconnect(&AcquireOp::list);
    if (r.rc == ZNONODE) {
      // The directory, and with it this node, was deleted: queue again.
      node_.clear();
      return create();
    }
    if (r.rc != ZOK) return fail_rc(r.rc, "the listing of '" + dir_ + "'");
    const std::vector<std::string> queue = queue_of(r.children);
    const std::string mine = base_name(node_);
    const auto it = std::find(queue.begin(), queue.end(), mine);
    if (it == queue.end()) {
      // Deleted by someone else while it waited (force_unlock): queue again.
      node_.clear();
      return create();
    }
    if (it == queue.begin()) return acquired();
    if (late_ || (deadline_ && Clock::now() >= *deadline_)) return give_up({});
    const std::string before = dir_ + "/" + *(it - 1);
    in_flight_ = true;
    core_->session->get_watch(
        before, [self = shared_from_this()](int /*type*/) { self->list(); },
        [self = shared_from_this()](const Reply& w) {
          self->in_flight_ = false;
          if (self->finished_) return;
          if (w.rc == ZOK) {
            // Waits for the watch, unless the wait ran out meanwhile.
            if (self->late_) self->give_up({});
            return;
          }
          if (w.rc == ZNONODE) return self->list();
          if (connection_trouble(w.rc)) return self->after_reconnect(&AcquireOp::list);
          self->fail_rc(w.rc, "the watch of the lock node before this one");
        });
  }

  void acquired() {
    const auto& o = core_->session->options();
    auto h = std::make_shared<Holding>(core_, client_, name_, owner_, node_, o.session_timeout,
                                       &o.on_lease_lost);
    h->self = h;
    if (fenced_) h->fencing_token = static_cast<std::uint64_t>(czxid_);
    h->set_deadline(core_->session->state() == State::connected ? kNoDeadline : Clock::now());
    h->active = true;
    core_->track(h);
    node_.clear();  // the holding owns it now
    end({{}, {}, std::move(h)});
  }

  void forget() override { core_->remove(shared_from_this()); }

  const std::shared_ptr<Core> core_;
  const std::string dir_;

  std::string uuid_;
  std::string node_;  // its lock node, once known
  std::int64_t czxid_ = 0;
  bool creating_ = false;
  bool uncertain_create_ = false;  // a create got no reply: it may exist
  bool in_flight_ = false;         // a round trip of this op is out
  bool late_ = false;              // the wait ran out while one was out
};

void Core::on_state(State s) {
  if (s == State::suspended) {
    for (auto& [raw, weak] : live_) {
      if (auto h = weak.lock()) h->uncertain();
    }
    // The ensemble expires the session a session timeout T after it last
    // heard from this client. The C client gives a connection up after 2/3 T
    // without a reply (or at once on a reset), so the ensemble heard from it
    // at most 2/3 T before now and cannot expire the session before now +
    // T/3. The holdings are declared lost then (less the drift margin): the
    // holder is told before any other client can hold the lock, and it is
    // told even if it never hears of the expiry (the C client learns of one
    // only when it reconnects). Curator waits the whole T for its LOST,
    // which lets another client hold the lock before the holder knows.
    auto timeout = session->negotiated_timeout();
    if (timeout.count() <= 0) timeout = session->options().session_timeout;
    const auto third = std::chrono::duration<double, std::milli>(timeout) / 3.0;
    const auto margin =
        third * session->options().clock_drift_factor + std::chrono::milliseconds(2);
    outage_.expires_after(std::chrono::duration_cast<std::chrono::milliseconds>(third - margin));
    outage_.async_wait([weak = weak_from_this()](std::error_code ec) {
      auto self = weak.lock();
      if (ec || !self || self->session->state() == State::connected) return;
      // Their nodes are deleted should the session turn out to be alive.
      for (auto& [raw, held] : self->live_) {
        if (auto h = held.lock()) self->delete_node(h->node);
      }
      self->lose_all(LeaseLostEvent::Reason::expired);
    });
    return;
  }
  outage_.cancel();
  if (s == State::connected) {
    for (auto& [raw, weak] : live_) {
      if (auto h = weak.lock(); h && !h->lost()) h->set_deadline(kNoDeadline);
    }
    auto waiting = std::move(waiting_);
    waiting_.clear();
    for (auto& f : waiting) f();
    return;
  }
  if (s == State::expired) {
    // The ensemble deleted this session's nodes: every holding is lost, every
    // acquire's node is gone, nothing is left to delete.
    lose_all(LeaseLostEvent::Reason::expired);
    waiting_.clear();
    auto ops = ops_;
    for (const auto& op : ops) op->session_expired();
  }
}

void Core::lose_all(LeaseLostEvent::Reason reason) {
  auto live = std::move(live_);
  live_.clear();
  for (auto& [raw, weak] : live) {
    if (auto h = weak.lock(); h && !h->released.load()) h->mark_lost(reason);
  }
}

void Core::track(const std::shared_ptr<Holding>& h) {
  live_.emplace(h.get(), h);
  // The watch on its own node (to hear of a deletion by someone else) is
  // one more request per holding: a quarter of a short lock/unlock pair's
  // cost to the ensemble (3 requests, as Curator's, instead of 4). So it
  // is set a third of the session timeout after the acquire, and a holding
  // released before then never pays for it: a deletion is noticed within
  // that third, as a Redis holder notices a taken lock at its next renewal
  // (a third of the lease). The watch's own call finds a node already gone.
  auto delay = session->negotiated_timeout();
  if (delay.count() <= 0) delay = session->options().session_timeout;
  h->watch_later = std::make_unique<asio::steady_timer>(executor.io(), delay / 3);
  h->watch_later->async_wait(
      [self = shared_from_this(), weak = std::weak_ptr<Holding>(h)](std::error_code ec) {
        auto held = weak.lock();
        if (ec || !held || held->released.load() || held->lost()) return;
        self->watch_own(held);
      });
}

void Core::watch_own(const std::shared_ptr<Holding>& holding) {
  std::weak_ptr<Holding> weak = holding;
  session->exists_watch(
      holding->node,
      [self = shared_from_this(), weak](int type) {
        auto h = weak.lock();
        if (!h || h->released.load() || h->lost()) return;
        if (type == ZOO_DELETED_EVENT) {
          self->untrack(h.get());
          h->mark_lost(LeaseLostEvent::Reason::taken);
          return;
        }
        self->watch_own(h);  // changed data: watch on
      },
      [self = shared_from_this(), weak](const Reply& r) {
        auto h = weak.lock();
        if (!h || h->released.load() || h->lost()) return;
        if (r.rc == ZNONODE) {
          // Deleted between the acquire and the watch.
          self->untrack(h.get());
          h->mark_lost(LeaseLostEvent::Reason::taken);
        } else if (connection_trouble(r.rc)) {
          self->when_connected([self, weak] {
            if (auto again = weak.lock()) self->watch_own(again);
          });
        }
      });
}

void Core::delete_node(const std::string& node) {
  session->remove(node, [self = shared_from_this(), node](const Reply& r) {
    if (connection_trouble(r.rc)) {
      self->when_connected([self, node] { self->delete_node(node); });
    }
  });
}

void Core::clean_up(const std::string& dir, const std::string& uuid) {
  when_connected([self = shared_from_this(), dir, uuid] {
    self->session->children(dir, [self, dir, uuid](const Reply& r) {
      if (connection_trouble(r.rc)) return self->clean_up(dir, uuid);
      if (r.rc != ZOK) return;
      const std::string prefix = std::string(kProtected) + uuid + "-";
      for (const auto& c : r.children) {
        if (c.rfind(prefix, 0) == 0) self->delete_node(dir + "/" + c);
      }
    });
  });
}

void Core::shut_down() {
  auto ops = ops_;
  for (const auto& op : ops) op->closed();
  lose_all(LeaseLostEvent::Reason::client_closed);
  outage_.cancel();
  waiting_.clear();
}

// Runs `start` (which issues one call on the I/O thread) and waits for its
// reply. ZCLOSING when the Client is closed.
Reply blocking(Core& core, std::function<void(Session::Done)> start, std::error_code& ec) {
  return kit::blocking<Reply>(
      core.executor, [start = std::move(start)](std::function<void(Reply)> done) { start(done); },
      Reply{ZCLOSING, {}, {}, {}, {}}, ec);
}

std::error_code release_result(int rc) {
  if (rc == ZOK) return {};
  if (rc == ZNONODE || rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE) return errc::lease_lost;
  if (rc == ZCLOSING) return errc::closed;
  if (connection_trouble(rc)) return errc::connection_lost;
  return errc::server_error;
}

Holding::Holding(std::shared_ptr<Core> core_of,
                 std::shared_ptr<void> client_of,
                 std::string name_of,
                 std::string owner_of,
                 std::string node_of,
                 std::chrono::milliseconds session_timeout,
                 const LostHandler* on_lost)
    : kit::Holding(core_of->executor,
                   std::move(client_of),
                   std::move(name_of),
                   std::move(owner_of),
                   session_timeout,
                   on_lost),
      core(std::move(core_of)),
      node(std::move(node_of)) {}

bool Holding::backend_closed() const noexcept {
  return core->closed;
}

void Holding::release_on_io(std::function<void(std::error_code)> done) {
  auto h = std::static_pointer_cast<Holding>(self.lock());
  core->untrack(this);
  if (watch_later) watch_later->cancel();
  if (lost()) return done(errc::lease_lost);
  core->session->remove(node, [h, done = std::move(done)](const Reply& r) {
    if (connection_trouble(r.rc)) h->core->delete_node(h->node);
    const std::error_code ec = release_result(r.rc);
    if (ec == errc::lease_lost) h->mark_lost(LeaseLostEvent::Reason::taken);
    done(ec);
  });
}

class Engine final : public kit::Engine {
 public:
  Engine(std::shared_ptr<Core> core,
         std::shared_ptr<void> client,
         std::string name,
         std::string dir,
         bool fenced)
      : kit::Engine(core->executor,
                    core->holds,
                    std::move(client),
                    std::move(name),
                    std::move(dir),
                    fenced,
                    core->client_id),
        core_(std::move(core)),
        dir_(key_) {}

  std::string_view backend() const noexcept override { return "ZooKeeper"; }

  bool is_locked(std::error_code& ec, std::string& what) const override {
    const Reply r = list(ec, what);
    return !ec && !queue_of(r.children).empty();
  }

  std::uint32_t hold_count(std::error_code& ec, std::string& what) const override {
    ec.clear();
    auto [held, count] = holds_.find(dir_);
    if (!held) return 0;
    const std::string node = std::static_pointer_cast<Holding>(held)->node;
    const Reply r = blocking(
        *core_, [core = core_, node](Session::Done d) { core->session->exists(node, d); }, ec);
    if (ec) return 0;
    if (r.rc == ZNONODE) return 0;
    if (r.rc != ZOK) {
      auto [e, m] = failure(r.rc, "the read of '" + node + "'");
      ec = e;
      what = m;
      return 0;
    }
    return count;
  }

  std::optional<milliseconds> remaining_ttl(std::error_code& ec, std::string& what) const override {
    if (!is_locked(ec, what)) return std::nullopt;
    return milliseconds::max();  // held for a session, not for a time
  }

  bool force_unlock(std::error_code& ec, std::string& what) override {
    // Deletes the holder's node (the first in the queue): the next waiter's
    // watch fires, and the holder's own watch tells it (taken).
    for (int attempt = 0; attempt < 8; ++attempt) {
      const Reply r = list(ec, what);
      if (ec) return false;
      const auto queue = queue_of(r.children);
      if (queue.empty()) return false;
      const std::string node = dir_ + "/" + queue.front();
      const Reply d = blocking(
          *core_, [core = core_, node](Session::Done done) { core->session->remove(node, done); },
          ec);
      if (ec) return false;
      if (d.rc == ZOK) return true;
      if (d.rc == ZNONODE) continue;  // released meanwhile: the next one holds now
      auto [e, m] = failure(d.rc, "the delete of '" + node + "'");
      ec = e;
      what = m;
      return false;
    }
    return false;
  }

 private:
  std::shared_ptr<kit::Attempt> attempt(kit::Attempt::Request request) override {
    return std::make_shared<AcquireOp>(core_, dir_, std::move(request));
  }

  std::string lease_refusal() const override {
    return "ZooKeeper: a lock is held for the session, not for a fixed lease; acquire it "
           "without a lease (docs/backends.md)";
  }

  // The directory's children; a missing directory is an empty one.
  Reply list(std::error_code& ec, std::string& what) const {
    Reply r = blocking(
        *core_, [core = core_, dir = dir_](Session::Done d) { core->session->children(dir, d); },
        ec);
    if (ec) {
      what = ec == errc::closed ? "the client was closed" : "a blocking call on the I/O thread";
      return {};
    }
    if (r.rc == ZNONODE) return {};
    if (r.rc != ZOK) {
      auto [e, m] = failure(r.rc, "the listing of '" + dir_ + "'");
      ec = e;
      what = m;
      return {};
    }
    return r;
  }

  const std::shared_ptr<Core> core_;
  const std::string& dir_;  // the directory is the thread holds' key
};

class ZooKeeper final : public Backend {
 public:
  ZooKeeper(const ClientOptions& options, runtime::Executor& executor, const std::string& client_id)
      : core_(std::make_shared<Core>(options, executor, client_id)), chroot_(options.chroot) {
    core_->start();
  }
  ~ZooKeeper() override { close(); }

  std::string_view name() const noexcept override { return "ZooKeeper"; }

  void connect() override { core_->session->connect(); }

  void close() noexcept override {
    if (core_->closed.exchange(true)) return;
    auto& executor = core_->executor;
    if (executor.on_io_thread()) {
      core_->shut_down();
    } else if (!executor.io().stopped()) {
      std::promise<void> done;
      auto future = done.get_future();
      asio::post(executor.io(), [core = core_, &done] {
        core->shut_down();
        done.set_value();
      });
      while (future.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
        if (executor.io().stopped()) break;
      }
    }
    core_->holds.clear();  // they keep the Client alive otherwise
    core_->session->close();
  }

  std::shared_ptr<LockEngine> lock(std::shared_ptr<void> client,
                                   std::string name,
                                   bool fenced,
                                   const LockOptions& options) override {
    if (options.lock_delay.count() != 0) {
      throw Error(errc::not_supported,
                  "ZooKeeper: no lock-delay (LockOptions::lock_delay); a holder's node goes with "
                  "its session (docs/backends.md)");
    }
    std::string dir = lock_directory(chroot_, name);
    return std::make_shared<Engine>(core_, std::move(client), std::move(name), std::move(dir),
                                    fenced);
  }

 private:
  const std::shared_ptr<Core> core_;
  const std::string chroot_;
};

}  // namespace

std::string lock_directory(const std::string& chroot, const std::string& name) {
  if (name.empty()) throw Error(errc::invalid_argument, "lock name is empty");
  const std::string dir = chroot + (name.front() == '/' ? name : "/" + name);
  if (auto problem = net::zk_path_problem(dir)) {
    throw Error(errc::invalid_argument,
                "lock name '" + name + "' is no ZooKeeper path: " + *problem);
  }
  return dir;
}

std::unique_ptr<Backend> make_zookeeper(const ClientOptions& options,
                                        runtime::Executor& executor,
                                        const std::string& client_id) {
  return std::make_unique<ZooKeeper>(options, executor, client_id);
}

}  // namespace distlock::backend::zk
