#include "backend/sql_lock.hpp"

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "backend/engine_kit.hpp"
#include "backend/sql_pool.hpp"
#include "distlock/error.hpp"

namespace distlock::backend::sql {

namespace {

using kit::Clock;
using kit::Got;

// While its connection lives a holding has no deadline of its own.
constexpr Clock::time_point kNoDeadline = Clock::time_point::max();

bool connection_trouble(const std::error_code& ec) {
  return ec == errc::connection_lost || ec == errc::timeout || ec == errc::closed;
}

class Holding;
class Acquire;

// The per-Client state: the pool, the live holdings, the acquires in
// progress, the threads' holds.
class Core : public std::enable_shared_from_this<Core> {
 public:
  Core(const ClientOptions& options_of,
       runtime::Executor& io,
       std::string id,
       const Dialect& dialect_of)
      : options(std::make_shared<const ClientOptions>(options_of)),
        executor(io),
        client_id(std::move(id)),
        dialect(dialect_of),
        pool(std::make_shared<Pool>(options, io.io(), dialect_of)) {}

  const std::shared_ptr<const ClientOptions> options;
  runtime::Executor& executor;
  const std::string client_id;
  const Dialect& dialect;
  const std::shared_ptr<Pool> pool;
  kit::ThreadHolds holds;  // any thread
  std::atomic<bool> closed{false};

  // I/O thread only from here on.
  bool fence_table_made = false;
  std::map<const Holding*, std::weak_ptr<Holding>> live;
  std::set<std::shared_ptr<Acquire>> acquires;

  // A holding made now: told of its connection's drop, checked every
  // connection_check_interval.
  void track(const std::shared_ptr<Holding>& h);
  // Fails every acquire with closed, loses every holding (client_closed) and
  // closes every connection: the server releases their locks.
  void shut_down();

  std::string what(const std::string& text) const {
    return std::string(dialect.name()) + ": " + text;
  }
};

class Holding final : public kit::Holding {
 public:
  Holding(std::shared_ptr<Core> core_of,
          std::shared_ptr<void> client,
          std::string name_of,
          std::string owner_of,
          std::shared_ptr<Pooled> pooled_of,
          std::string lock_of,
          bool shared_of)
      : kit::Holding(core_of->executor,
                     std::move(client),
                     std::move(name_of),
                     std::move(owner_of),
                     core_of->options->command_timeout,
                     &core_of->options->on_lease_lost),
        core(std::move(core_of)),
        pooled(std::move(pooled_of)),
        lock(std::move(lock_of)),
        shared(shared_of),
        check(core->executor.io()) {}

  const std::shared_ptr<Core> core;
  const std::shared_ptr<Pooled> pooled;
  const std::string lock;
  const bool shared;
  asio::steady_timer check;  // the liveness check's next run
  bool returned = false;     // its connection went back to the pool (or was discarded)

  // I/O thread: the connection is gone, and the lock with it.
  void connection_ended() {
    core->live.erase(this);
    check.cancel();
    give_back(false);
    if (!released.load() && !lost()) mark_lost(LeaseLostEvent::Reason::expired);
  }

  // The connection back to the pool (`reuse`) or closed.
  void give_back(bool reuse) {
    if (returned) return;
    returned = true;
    if (reuse) {
      core->pool->put(pooled);
    } else {
      core->pool->discard(pooled);
    }
  }

 private:
  void release_on_io(std::function<void(std::error_code)> done) override {
    core->live.erase(this);
    check.cancel();
    if (lost() || returned) {
      give_back(false);
      return done(errc::lease_lost);
    }
    auto me = std::static_pointer_cast<Holding>(self.lock());
    const Statement s = core->dialect.unlock(lock, shared);
    pooled->connection->query(s.text, s.params, [me, done = std::move(done)](const Result& r) {
      if (r.ec) {
        // The connection is gone, and its locks with it: the lock is free,
        // but it was lost before this release.
        me->give_back(false);
        return done(errc::lease_lost);
      }
      me->give_back(true);
      if (r.integer() == 1) return done({});
      me->mark_lost(LeaseLostEvent::Reason::taken);
      done(errc::lease_lost);
    });
  }
  bool backend_closed() const noexcept override { return core->closed; }
};

void Core::track(const std::shared_ptr<Holding>& h) {
  live.emplace(h.get(), h);
  std::weak_ptr<Holding> weak = h;
  h->pooled->on_drop = [weak](const std::string& /*why*/) {
    if (auto held = weak.lock()) held->connection_ended();
  };
  // A link that goes silent closes nothing: a trivial query finds it.
  struct Check {
    static void arm(const std::weak_ptr<Holding>& weak) {
      auto h = weak.lock();
      if (!h) return;
      h->check.expires_after(h->core->options->connection_check_interval);
      h->check.async_wait([weak](std::error_code ec) {
        auto held = weak.lock();
        if (ec || !held || held->returned || held->released.load() || held->lost()) return;
        const Statement s = held->core->dialect.ping();
        held->pooled->connection->query(s.text, s.params, [weak](const Result& r) {
          auto again = weak.lock();
          if (!again || again->returned || again->released.load()) return;
          if (r.ec) return again->connection_ended();
          arm(weak);
        });
      });
    }
  };
  Check::arm(weak);
}

// One acquire: a connection from the pool, the lock statement (waiting on
// the server), the fencing bump, the holding.
class Acquire final : public kit::Attempt, public std::enable_shared_from_this<Acquire> {
 public:
  Acquire(std::shared_ptr<Core> core, std::string lock, bool shared, Request request)
      : kit::Attempt(std::move(request), core->executor.io()),
        core_(std::move(core)),
        lock_(std::move(lock)),
        shared_(shared) {}

  void start() override {
    if (core_->closed) return end({errc::closed, "the client was closed", nullptr});
    core_->acquires.insert(shared_from_this());
    if (deadline_) {
      timer_.expires_at(*deadline_);
      timer_.async_wait([self = shared_from_this()](std::error_code ec) {
        if (!ec) self->wait_ran_out();
      });
    }
    stage_ = Stage::connection;
    ticket_ = core_->pool->get(deadline_,
                               [self = shared_from_this()](std::error_code ec, std::string message,
                                                           std::shared_ptr<Pooled> c) {
                                 self->connected(ec, std::move(message), std::move(c));
                               });
  }

  void cancel() override {
    asio::post(core_->executor.io(), [self = shared_from_this()] {
      if (self->finished_) return;
      if (self->stage_ == Stage::connection) self->core_->pool->withdraw(self->ticket_);
      if (self->stage_ == Stage::locking && self->pooled_) self->pooled_->connection->cancel();
      self->end_after_undo({make_error_code(std::errc::operation_canceled),
                            "the acquire of '" + self->name_ + "' was cancelled", nullptr});
    });
  }

  void closed() {
    if (stage_ == Stage::connection) core_->pool->withdraw(ticket_);
    end({errc::closed, "the client was closed", nullptr});
  }

 private:
  enum class Stage { idle, connection, locking, fencing };

  void wait_ran_out() {
    if (finished_) return;
    if (stage_ == Stage::connection) {
      core_->pool->withdraw(ticket_);
      return end({});
    }
    if (stage_ != Stage::locking) return;  // acquired: fencing goes on
    // The server ends the wait itself (its timeout is the time that was
    // left); it gets command_timeout more to say so, as a Redis attempt in
    // flight does. No answer then: the connection is closed, and with it
    // whatever it may have acquired.
    timer_.expires_after(core_->options->command_timeout);
    timer_.async_wait([self = shared_from_this()](std::error_code ec) {
      if (ec || self->finished_ || self->stage_ != Stage::locking) return;
      self->core_->pool->discard(self->pooled_);
      self->pooled_ = nullptr;
      self->end({errc::timeout,
                 self->core_->what("no answer to the lock statement of '" + self->name_ +
                                   "' within command_timeout after its wait"),
                 nullptr});
    });
  }

  void connected(std::error_code ec, std::string message, std::shared_ptr<Pooled> c) {
    if (finished_) {
      if (c) core_->pool->put(std::move(c));
      return;
    }
    if (ec == errc::timeout) return end({});  // no connection free within the wait
    if (ec) return end({ec, std::move(message), nullptr});
    pooled_ = std::move(c);
    stage_ = Stage::locking;
    if (deadline_) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - Clock::now());
      wait_ms_ = std::max<std::int64_t>(0, left.count());
    }
    auto before = core_->dialect.before_lock(lock_, wait_ms_, shared_);
    const bool set_already = pooled_->lock_wait.has_value() && *pooled_->lock_wait == wait_ms_;
    if (before && !set_already) {
      return run(*before, [](Acquire& self, const Result& r) {
        if (r.ec) return self.failed(r);
        self.pooled_->lock_wait = self.wait_ms_;
        self.take();
      });
    }
    take();
  }

  void take() {
    const bool wait = !wait_ms_ || *wait_ms_ > 0;
    run(
        core_->dialect.lock(lock_, wait_ms_, shared_),
        [](Acquire& self, const Result& r) {
          const auto got = self.core_->dialect.locked(r, self.wait_ms_);
          if (!got) return self.failed(r);
          if (!*got) {
            self.core_->pool->put(self.pooled_);
            self.pooled_ = nullptr;
            return self.end({});
          }
          self.stage_ = Stage::fencing;
          if (!self.fenced_) return self.acquired(0);
          self.fence();
        },
        wait);
  }

  void fence() {
    if (!core_->fence_table_made) {
      return run(core_->dialect.fence_table(), [](Acquire& self, const Result& r) {
        // Two Clients making the table at once: one may see it made already.
        if (r.ec && r.ec != errc::server_error) return self.failed(r);
        self.core_->fence_table_made = !r.ec;
        self.bump();
      });
    }
    bump();
  }

  void bump() {
    run(core_->dialect.fence_bump(lock_), [](Acquire& self, const Result& r) {
      if (r.ec) return self.failed(r);
      if (auto read = self.core_->dialect.fence_read()) {
        return self.run(*read, [](Acquire& again, const Result& token) {
          if (token.ec) return again.failed(token);
          again.fenced_by(token);
        });
      }
      self.fenced_by(r);
    });
  }

  void fenced_by(const Result& r) {
    const auto token = r.integer();
    if (!token || *token <= 0) {
      Result bad = r;
      bad.ec = errc::server_error;
      bad.message = "the fencing counter (table distlock_fence) returned no token";
      return failed(bad);
    }
    acquired(static_cast<std::uint64_t>(*token));
  }

  void acquired(std::uint64_t token) {
    auto h = std::make_shared<Holding>(core_, client_, name_, owner_, pooled_, lock_, shared_);
    pooled_ = nullptr;
    h->self = h;
    if (fenced_) h->fencing_token = token;
    h->set_deadline(kNoDeadline);
    h->active = true;
    core_->track(h);
    end({{}, {}, std::move(h)});
  }

  // A statement on the acquire's connection; `next` runs with its result
  // unless the acquire ended meanwhile (then what it holds is undone).
  void run(const Statement& s, void (*next)(Acquire&, const Result&), bool no_timeout = false) {
    pooled_->connection->query(
        s.text, s.params,
        [self = shared_from_this(), next, pooled = pooled_](const Result& r) {
          if (self->finished_) return self->undo(pooled, r);
          next(*self, r);
        },
        no_timeout);
  }

  // After the acquire ended (cancelled, closed, timed out): a lock the
  // statement took anyway is released, the connection goes back, and an
  // owed completion is delivered.
  void undo(const std::shared_ptr<Pooled>& pooled, const Result& r) {
    if (!pooled || pooled_ != pooled) return deliver();  // discarded already
    pooled_ = nullptr;
    const bool holds = stage_ == Stage::fencing ||
                       (stage_ == Stage::locking && core_->dialect.locked(r, wait_ms_) == true);
    if (connection_trouble(r.ec) || !pooled->connection->alive()) {
      core_->pool->discard(pooled);
      return deliver();
    }
    if (!holds) {
      core_->pool->put(pooled);
      return deliver();
    }
    const Statement s = core_->dialect.unlock(lock_, shared_);
    pooled->connection->query(s.text, s.params,
                              [self = shared_from_this(), pooled](const Result& u) {
                                if (u.ec) {
                                  self->core_->pool->discard(pooled);
                                } else {
                                  self->core_->pool->put(pooled);
                                }
                                self->deliver();
                              });
  }

  // Ends now when no statement is in flight. Otherwise it stops at once but
  // completes only once the statement answered and what it took was undone
  // (at most command_timeout later; then its connection is closed), so a
  // cancelled acquire has left nothing behind when its completion runs.
  void end_after_undo(Got got) {
    if (finished_) return;
    if (!pooled_ || (stage_ != Stage::locking && stage_ != Stage::fencing)) {
      return end(std::move(got));
    }
    finished_ = true;
    owed_ = std::move(got);
    forget();
    timer_.cancel();
    timer_.expires_after(core_->options->command_timeout);
    timer_.async_wait([self = shared_from_this()](std::error_code ec) {
      if (ec || !self->owed_) return;
      if (self->pooled_) {
        self->core_->pool->discard(self->pooled_);
        self->pooled_ = nullptr;
      }
      self->deliver();
    });
  }

  void deliver() {
    if (!owed_) return;
    Got got = std::move(*owed_);
    owed_.reset();
    timer_.cancel();
    auto done = std::move(done_);
    done(std::move(got));
  }

  // A statement failed: the acquire ends with its error; a connection in
  // doubt is closed (the server then releases what it holds).
  void failed(const Result& r) {
    auto pooled = std::move(pooled_);
    pooled_ = nullptr;
    const bool holds = stage_ == Stage::fencing;
    if (connection_trouble(r.ec) || !pooled->connection->alive() || holds) {
      core_->pool->discard(pooled);
    } else {
      core_->pool->put(pooled);
    }
    std::error_code ec = r.ec ? r.ec : std::error_code(errc::server_error);
    if (ec == errc::closed && !core_->closed) ec = errc::connection_lost;
    const std::string why =
        r.message.empty() ? "the lock statement returned NULL (interrupted by KILL QUERY, or an "
                            "error inside GET_LOCK)"
                          : r.message;
    end({ec, core_->what("the acquire of '" + name_ + "' failed: " + why), nullptr});
  }

  void forget() override { core_->acquires.erase(shared_from_this()); }

  const std::shared_ptr<Core> core_;
  const std::string lock_;
  const bool shared_;

  Stage stage_ = Stage::idle;
  std::uint64_t ticket_ = 0;
  std::shared_ptr<Pooled> pooled_;
  std::optional<std::int64_t> wait_ms_;  // nullopt: as long as it takes
  std::optional<Got> owed_;              // the completion end_after_undo holds back
};

void Core::shut_down() {
  auto running = acquires;
  for (const auto& a : running) a->closed();
  auto holdings = std::move(live);
  live.clear();
  for (auto& [raw, weak] : holdings) {
    auto h = weak.lock();
    if (!h) continue;
    h->check.cancel();
    h->give_back(false);  // closes it: the server releases the lock
    if (!h->released.load()) h->mark_lost(LeaseLostEvent::Reason::client_closed);
  }
  pool->close();
}

class Engine final : public kit::Engine {
 public:
  Engine(std::shared_ptr<Core> core,
         std::shared_ptr<void> client,
         std::string name,
         std::string lock,
         bool fenced,
         bool shared)
      : kit::Engine(core->executor,
                    core->holds,
                    std::move(client),
                    std::move(name),
                    (shared ? "r:" : "w:") + lock,
                    fenced,
                    core->client_id),
        core_(std::move(core)),
        lock_(std::move(lock)),
        shared_(shared) {}

  std::string_view backend() const noexcept override { return core_->dialect.name(); }

  bool is_locked(std::error_code& ec, std::string& what) const override {
    const Result r = run(core_->dialect.held(lock_, shared_), ec, what);
    return !ec && r.integer().value_or(0) > 0;
  }

  std::uint32_t hold_count(std::error_code& ec, std::string& /*what*/) const override {
    ec.clear();
    // The connection's drop is noticed at once (a watched socket): a
    // holding not lost is held.
    auto [held, count] = holds_.find(key_);
    return held && !held->lost() ? count : 0;
  }

  std::optional<milliseconds> remaining_ttl(std::error_code& ec, std::string& what) const override {
    if (!is_locked(ec, what)) return std::nullopt;
    return milliseconds::max();  // held by a connection, not for a time
  }

  bool force_unlock(std::error_code& ec, std::string& what) override {
    // Ends the holders' sessions: the server releases their locks, and each
    // holder's driver sees its connection closed (its lease is lost).
    const auto bound = core_->options->command_timeout;
    const Result r = run(core_->dialect.end_holders(lock_, shared_, bound.count() / 2), ec, what);
    if (ec) return false;
    const auto n = r.integer();
    if (!n || *n <= 0) return false;
    auto kill = core_->dialect.kill(*n);
    if (!kill) return true;
    run(*kill, ec, what);
    if (ec) return false;
    // KILL returns before the session is gone: wait (bounded) until the
    // killed session no longer holds it, so the next acquire finds it free.
    const auto until = Clock::now() + bound;
    while (Clock::now() < until) {
      const Result holder = run(core_->dialect.end_holders(lock_, shared_, 0), ec, what);
      if (ec) return false;
      if (holder.integer() != n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

 private:
  std::shared_ptr<kit::Attempt> attempt(kit::Attempt::Request request) override {
    return std::make_shared<Acquire>(core_, lock_, shared_, std::move(request));
  }

  std::string lease_refusal() const override {
    return core_->what(
        "a lock is held by its connection, not for a fixed lease; acquire it without a "
        "lease (docs/backends.md)");
  }

  // One statement on a pooled connection, blocking.
  Result run(const Statement& s, std::error_code& ec, std::string& what) const {
    Result r = kit::blocking<Result>(
        core_->executor,
        [core = core_, s](std::function<void(Result)> done) {
          core->pool->get(
              Clock::now() + core->options->command_timeout,
              [core, s, done](std::error_code e, std::string m, std::shared_ptr<Pooled> c) {
                if (e) return done(Result{e, std::move(m), {}, {}});
                c->connection->query(s.text, s.params, [core, c, done](const Result& reply) {
                  if (c->connection->alive()) {
                    core->pool->put(c);
                  } else {
                    core->pool->discard(c);
                  }
                  done(reply);
                });
              });
        },
        Result{errc::closed, "the client was closed", {}, {}}, ec);
    if (ec) {
      what = ec == errc::closed ? "the client was closed" : "a blocking call on the I/O thread";
      return r;
    }
    if (r.ec) {
      ec = r.ec;
      what = core_->what(r.message);
    }
    return r;
  }

  const std::shared_ptr<Core> core_;
  const std::string lock_;
  const bool shared_;
};

class SqlBackend final : public Backend {
 public:
  SqlBackend(const ClientOptions& options,
             runtime::Executor& executor,
             const std::string& client_id,
             const Dialect& dialect)
      : core_(std::make_shared<Core>(options, executor, client_id, dialect)) {}
  ~SqlBackend() override { close(); }

  std::string_view name() const noexcept override { return core_->dialect.name(); }

  void connect() override {
    // One connection, to check the server, the credentials and the
    // database now; it stays in the pool for the first acquire.
    std::error_code ec;
    const auto bound = core_->options->connect_timeout + core_->options->command_timeout;
    auto failed = kit::blocking<std::pair<std::error_code, std::string>>(
        core_->executor,
        [core = core_, bound](std::function<void(std::pair<std::error_code, std::string>)> done) {
          core->pool->get(Clock::now() + bound, [core, done](std::error_code e, std::string m,
                                                             std::shared_ptr<Pooled> c) {
            if (c) core->pool->put(std::move(c));
            done({e, std::move(m)});
          });
        },
        {errc::closed, "the client was closed"}, ec);
    if (ec) throw Error(ec, "the client was closed");
    if (failed.first) throw Error(failed.first, failed.second);
  }

  void close() noexcept override {
    if (core_->closed.exchange(true)) return;
    auto& executor = core_->executor;
    if (executor.on_io_thread()) {
      core_->shut_down();
    } else if (!executor.io().stopped()) {
      auto promise = std::make_shared<std::promise<void>>();
      auto future = promise->get_future();
      asio::post(executor.io(), [core = core_, promise] {
        core->shut_down();
        promise->set_value();
      });
      while (future.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
        if (executor.io().stopped()) break;
      }
    }
    core_->holds.clear();  // they keep the Client alive otherwise
  }

  std::shared_ptr<LockEngine> lock(std::shared_ptr<void> client,
                                   std::string name,
                                   bool fenced,
                                   const LockOptions& options) override {
    return engine(std::move(client), std::move(name), fenced, false, options);
  }

  std::shared_ptr<LockEngine> engine(std::shared_ptr<void> client,
                                     std::string name,
                                     bool fenced,
                                     bool shared,
                                     const LockOptions& options) {
    if (options.lock_delay.count() != 0) {
      throw Error(errc::not_supported,
                  core_->what("no lock-delay (LockOptions::lock_delay); the server releases a "
                              "lock the moment its connection ends (docs/backends.md)"));
    }
    if (shared && !core_->dialect.has_shared()) {
      throw Error(errc::not_supported,
                  core_->what("no shared lock, so no read-write lock (docs/backends.md)"));
    }
    if (name.empty()) throw Error(errc::invalid_argument, "lock name is empty");
    std::string lock = core_->dialect.server_lock(name);
    return std::make_shared<Engine>(core_, std::move(client), std::move(name), std::move(lock),
                                    fenced, shared);
  }

 private:
  const std::shared_ptr<Core> core_;
};

}  // namespace

std::unique_ptr<Backend> make_sql(const ClientOptions& options,
                                  runtime::Executor& executor,
                                  const std::string& client_id) {
  const Dialect& dialect =
      options.backend == ClientOptions::Backend::mysql ? mysql() : postgresql();
  return std::make_unique<SqlBackend>(options, executor, client_id, dialect);
}

std::shared_ptr<LockEngine> shared_lock(Backend& backend,
                                        std::shared_ptr<void> client,
                                        std::string name) {
  auto* sql = dynamic_cast<SqlBackend*>(&backend);
  if (sql == nullptr) {
    throw Error(errc::not_supported, "the " + std::string(backend.name()) +
                                         " backend has no read-write lock (docs/backends.md)");
  }
  return sql->engine(std::move(client), std::move(name), false, true, LockOptions{});
}

}  // namespace distlock::backend::sql
