// The PostgreSQL driver (sql_connection.hpp) on libpq's asynchronous API:
// PQconnectStartParams/PQconnectPoll, PQsendQueryParams, PQconsumeInput and
// PQgetResult, each step driven by an Asio readiness wait on the socket.
#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asio/posix/stream_descriptor.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <atomic>
#include <deque>
#include <optional>
#include <thread>
#include <utility>

#include "backend/sql_connection.hpp"
#include "distlock/error.hpp"

namespace distlock::backend::sql {
namespace {

using Wait = asio::posix::stream_descriptor::wait_type;

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

// What a failed connection attempt means, from libpq's message: libpq 15
// gives no SQLSTATE for a connection that failed before it was made.
errc connect_error(const std::string& message) {
  if (contains(message, "password authentication failed") ||
      contains(message, "no password supplied") || contains(message, "pg_hba.conf rejects") ||
      (contains(message, "role \"") && contains(message, "does not exist"))) {
    return errc::auth_failed;
  }
  // The server's own refusal (no such database, too many connections) is
  // its error; a server still starting or stopping is not reachable yet.
  if (contains(message, "FATAL:") && !contains(message, "the database system is")) {
    return errc::server_error;
  }
  return errc::connection_failed;
}

// SQLSTATEs with which the server ends the session, not just the statement:
// class 57P (admin_shutdown, crash_shutdown, cannot_connect_now, ...).
bool ends_session(const std::string& sqlstate) {
  return sqlstate.rfind("57P", 0) == 0;
}

struct Pending {
  std::string sql;
  Params params;
  std::function<void(Result)> done;
  bool no_timeout = false;
};

// Everything the Asio handlers touch: they hold it by weak_ptr, so a handler
// that runs after the Connection was destroyed does nothing.
class PgImpl : public std::enable_shared_from_this<PgImpl> {
 public:
  PgImpl(const ClientOptions& options, asio::io_context& io)
      : options_(options), io_(io), timer_(io) {}
  ~PgImpl() { close(); }

  void open(std::function<void(std::error_code, std::string)> done);
  void query(Pending p);
  void cancel();
  void on_drop(std::function<void(std::string)> f) { on_drop_ = std::move(f); }
  bool alive() const noexcept { return ready_ && !dead_ && !closed_; }
  std::int64_t session_id() const noexcept { return pid_; }
  void close() noexcept;

 private:
  std::string prefix() const {
    return "PostgreSQL " + options_.host + ":" + std::to_string(options_.port) + ": ";
  }
  // libpq's or the server's text, named after the server and scrubbed of
  // the password in case a message ever echoes it.
  std::string describe(const std::string& text) const;
  void post_done(std::function<void(Result)> done, Result r);
  void sync_socket();
  void release_socket() noexcept;
  void wait(Wait w, void (PgImpl::*next)());
  void arm_timer(std::chrono::milliseconds after, void (PgImpl::*expired)());
  void poll_connect();
  void finish_open(std::error_code ec, std::string message);
  void open_timed_out();
  void start_next();
  void flush();
  void read_result();
  void complete(Result r);
  void query_timed_out();
  void watch_idle();
  void idle_readable();
  // The connection is gone: the statement running ends with `ec`, the
  // queued ones with connection_lost, and on_drop is told (unless `quiet`).
  void fail(std::error_code ec, const std::string& why, bool quiet);
  void teardown() noexcept;
  void join_cancels(bool all) noexcept;

  const ClientOptions& options_;
  asio::io_context& io_;
  asio::steady_timer timer_;
  // A dup() of libpq's socket: libpq closes its own fd inside calls such as
  // PQconsumeInput (on EOF) and PQconnectPoll (moving to another address),
  // which Asio cannot be told about in time; its own copy is never closed
  // under it, and closing the copy never closes libpq's.
  std::optional<asio::posix::stream_descriptor> socket_;
  PGconn* conn_ = nullptr;
  std::function<void(std::error_code, std::string)> open_done_;
  std::function<void(std::string)> on_drop_;
  std::optional<Pending> current_;
  Result result_;
  bool have_result_ = false;
  std::deque<Pending> queue_;
  std::uint64_t gen_ = 0;  // bumped at each change of phase: older waits are stale
  bool ready_ = false, dead_ = false, closed_ = false, dropped_ = false;
  std::int64_t pid_ = 0;
  struct CancelThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished;
  };
  std::vector<CancelThread> cancels_;
};

std::string PgImpl::describe(const std::string& text) const {
  std::string m = prefix() + trimmed(text);
  const std::string& pw = options_.password;
  if (!pw.empty()) {
    for (auto at = m.find(pw); at != std::string::npos; at = m.find(pw, at)) {
      m.replace(at, pw.size(), "***");
    }
  }
  return m;
}

void PgImpl::post_done(std::function<void(Result)> done, Result r) {
  asio::post(io_, [done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
}

// libpq may close its socket and open another under the same fd number
// (PQconnectPoll trying the next address): the copy follows the socket,
// told apart by its inode, not by the number.
void PgImpl::sync_socket() {
  const int fd = conn_ ? PQsocket(conn_) : -1;
  struct stat theirs {};
  if (fd < 0 || ::fstat(fd, &theirs) != 0) return release_socket();
  if (socket_) {
    struct stat ours {};
    if (::fstat(socket_->native_handle(), &ours) == 0 && ours.st_ino == theirs.st_ino) return;
  }
  release_socket();
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy >= 0) socket_.emplace(io_, copy);
}

void PgImpl::release_socket() noexcept {
  if (socket_) {
    std::error_code ignored;
    socket_->close(ignored);
    socket_.reset();
  }
}

// Asio's epoll reactor is edge-triggered: readiness that arrived while no
// wait was queued (bytes libpq left unread, a FIN after the server's FATAL)
// would never wake a new async_wait. poll() with a zero timeout first makes
// the wait level-triggered.
void PgImpl::wait(Wait w, void (PgImpl::*next)()) {
  sync_socket();
  const std::uint64_t gen = gen_;
  auto handler = [weak = weak_from_this(), gen, next](std::error_code ec) {
    auto self = weak.lock();
    if (!self || self->closed_ || self->dead_ || self->gen_ != gen) return;
    if (ec == asio::error::operation_aborted) return;
    (self.get()->*next)();
  };
  if (!socket_) {
    asio::post(io_, [handler] { handler(std::error_code()); });
    return;
  }
  pollfd p{socket_->native_handle(), static_cast<short>(w == Wait::wait_read ? POLLIN : POLLOUT),
           0};
  if (::poll(&p, 1, 0) > 0) {
    asio::post(io_, [handler] { handler(std::error_code()); });
  } else {
    socket_->async_wait(w, handler);
  }
}

void PgImpl::arm_timer(std::chrono::milliseconds after, void (PgImpl::*expired)()) {
  timer_.expires_after(after);
  timer_.async_wait([weak = weak_from_this(), gen = gen_, expired](std::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->closed_ || self->dead_ || self->gen_ != gen) return;
    (self.get()->*expired)();
  });
}

void PgImpl::open(std::function<void(std::error_code, std::string)> done) {
  open_done_ = std::move(done);
  const std::string port = std::to_string(options_.port);
  std::vector<std::pair<const char*, std::string>> kv = {
      {"host", options_.host},          {"port", port},
      {"user", options_.username},      {"password", options_.password},
      {"application_name", "distlock"},
  };
  if (!options_.database.empty()) kv.emplace_back("dbname", options_.database);
  const TlsOptions& tls = options_.tls;
  // Without TLS, sslmode=disable, not libpq's default "prefer": prefer
  // tries TLS and falls back to plain text unannounced, so what the options
  // say would not be what the link is. The server's own timeout, in
  // seconds, is not used: connect_timeout is a timer of ours.
  if (!tls.enabled) {
    kv.emplace_back("sslmode", "disable");
  } else {
    kv.emplace_back("sslmode", tls.verify_peer ? "verify-full" : "require");
    if (!tls.ca_file.empty()) kv.emplace_back("sslrootcert", tls.ca_file);
    if (!tls.cert_file.empty()) kv.emplace_back("sslcert", tls.cert_file);
    if (!tls.key_file.empty()) kv.emplace_back("sslkey", tls.key_file);
  }
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : kv) {
    if (v.empty()) continue;
    keys.push_back(k);
    values.push_back(v.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  conn_ = PQconnectStartParams(keys.data(), values.data(), 0);
  if (!conn_ || PQstatus(conn_) == CONNECTION_BAD) {
    const std::string why = conn_ ? PQerrorMessage(conn_) : "out of memory";
    asio::post(io_, [weak = weak_from_this(), why] {
      if (auto self = weak.lock(); self && !self->closed_) {
        self->finish_open(errc::connection_failed, self->describe(why));
      }
    });
    return;
  }
  // Notices (and a FATAL that arrives while idle) are not printed to stderr.
  PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
  arm_timer(options_.connect_timeout, &PgImpl::open_timed_out);
  // libpq: after PQconnectStart, behave as if PQconnectPoll said WRITING.
  wait(Wait::wait_write, &PgImpl::poll_connect);
}

void PgImpl::poll_connect() {
  switch (PQconnectPoll(conn_)) {
    case PGRES_POLLING_OK:
      return finish_open({}, "");
    case PGRES_POLLING_FAILED: {
      const std::string message = PQerrorMessage(conn_);
      return finish_open(connect_error(message), describe(message));
    }
    case PGRES_POLLING_READING:
      return wait(Wait::wait_read, &PgImpl::poll_connect);
    default:
      return wait(Wait::wait_write, &PgImpl::poll_connect);
  }
}

void PgImpl::open_timed_out() {
  finish_open(errc::connection_failed,
              describe("connect timed out after " +
                       std::to_string(options_.connect_timeout.count()) + " ms"));
}

void PgImpl::finish_open(std::error_code ec, std::string message) {
  ++gen_;
  timer_.cancel();
  if (!ec && PQsetnonblocking(conn_, 1) != 0) {
    ec = errc::connection_failed;
    message = describe(PQerrorMessage(conn_));
  }
  if (ec) {
    dead_ = true;
    teardown();
    for (auto& p : std::exchange(queue_, {})) {
      post_done(std::move(p.done), Result{errc::connection_lost, message, "", std::nullopt});
    }
  } else {
    ready_ = true;
    pid_ = PQbackendPID(conn_);
  }
  auto done = std::move(open_done_);
  asio::post(io_,
             [done = std::move(done), ec, message = std::move(message)] { done(ec, message); });
  if (ready_) start_next();
}

void PgImpl::query(Pending p) {
  if (closed_ || dead_) {
    const errc e = closed_ ? errc::closed : errc::connection_lost;
    post_done(std::move(p.done), Result{e, prefix() + "the connection is closed", "", {}});
    return;
  }
  queue_.push_back(std::move(p));
  if (ready_ && !current_) start_next();
}

void PgImpl::start_next() {
  if (current_ || queue_.empty() || !alive()) {
    if (!current_ && alive()) watch_idle();
    return;
  }
  current_ = std::move(queue_.front());
  queue_.pop_front();
  ++gen_;
  have_result_ = false;
  result_ = Result{};
  std::vector<const char*> values;
  for (const auto& v : current_->params) values.push_back(v.c_str());
  const int n = static_cast<int>(values.size());
  if (!PQsendQueryParams(conn_, current_->sql.c_str(), n, nullptr, values.data(), nullptr, nullptr,
                         0)) {
    return fail(errc::connection_lost, describe(PQerrorMessage(conn_)), false);
  }
  if (!current_->no_timeout) arm_timer(options_.command_timeout, &PgImpl::query_timed_out);
  flush();
}

void PgImpl::flush() {
  const int r = PQflush(conn_);
  if (r < 0) return fail(errc::connection_lost, describe(PQerrorMessage(conn_)), false);
  if (r > 0) return wait(Wait::wait_write, &PgImpl::flush);
  wait(Wait::wait_read, &PgImpl::read_result);
}

void PgImpl::read_result() {
  if (!PQconsumeInput(conn_)) {
    return fail(errc::connection_lost, describe(PQerrorMessage(conn_)), false);
  }
  while (!PQisBusy(conn_)) {
    PGresult* res = PQgetResult(conn_);
    if (!res) {
      if (PQstatus(conn_) == CONNECTION_BAD) {
        return fail(errc::connection_lost, describe(PQerrorMessage(conn_)), false);
      }
      if (!have_result_) result_.ec = errc::server_error;
      return complete(std::move(result_));
    }
    const ExecStatusType status = PQresultStatus(res);
    if (!have_result_) {
      have_result_ = true;
      if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
        if (PQntuples(res) > 0 && PQnfields(res) > 0 && !PQgetisnull(res, 0, 0)) {
          result_.value =
              std::string(PQgetvalue(res, 0, 0), static_cast<std::size_t>(PQgetlength(res, 0, 0)));
        }
      } else {
        const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
        result_.ec = errc::server_error;
        result_.code = state ? state : "";
        result_.message = describe(PQresultErrorMessage(res));
      }
    }
    PQclear(res);
    if (ends_session(result_.code)) return fail(errc::connection_lost, result_.message, false);
  }
  wait(Wait::wait_read, &PgImpl::read_result);
}

void PgImpl::complete(Result r) {
  ++gen_;
  timer_.cancel();
  post_done(std::move(current_->done), std::move(r));
  current_.reset();
  start_next();
}

void PgImpl::query_timed_out() {
  const auto ms = std::to_string(options_.command_timeout.count());
  // The statement's state on the server is unknown: the session ends, and
  // this is no drop the caller has to learn of by on_drop.
  fail(errc::timeout, describe("no reply within " + ms + " ms (command_timeout)"), true);
}

void PgImpl::watch_idle() {
  wait(Wait::wait_read, &PgImpl::idle_readable);
}

// While idle the server sends only notices, ParameterStatus, or a FATAL
// before it closes the session (pg_terminate_backend, shutdown).
void PgImpl::idle_readable() {
  // PQisBusy parses what PQconsumeInput read: a FATAL goes to the notice
  // processor, and the status turns bad once the server closed the socket.
  bool lost = PQconsumeInput(conn_) == 0;
  if (!lost) {
    PQisBusy(conn_);
    lost = PQstatus(conn_) == CONNECTION_BAD;
  }
  if (lost) {
    return fail(errc::connection_lost, describe(PQerrorMessage(conn_)), false);
  }
  watch_idle();
}

void PgImpl::fail(std::error_code ec, const std::string& why, bool quiet) {
  if (dead_ || closed_) return;
  dead_ = true;
  ++gen_;
  teardown();
  if (current_) post_done(std::move(current_->done), Result{ec, why, result_.code, {}});
  current_.reset();
  for (auto& p : std::exchange(queue_, {})) {
    post_done(std::move(p.done), Result{errc::connection_lost, why, "", {}});
  }
  if (quiet || dropped_ || !on_drop_) return;
  dropped_ = true;
  asio::post(io_, [weak = weak_from_this(), why] {
    auto self = weak.lock();
    if (self && !self->closed_ && self->on_drop_) self->on_drop_(why);
  });
}

void PgImpl::teardown() noexcept {
  try {
    timer_.cancel();
  } catch (...) {  // a stale expiry is ignored by its generation anyway
  }
  release_socket();
  if (conn_) PQfinish(conn_);
  conn_ = nullptr;
}

void PgImpl::cancel() {
  if (!current_ || !alive()) return;
  join_cancels(false);
  PGcancel* c = PQgetCancel(conn_);
  if (!c) return;
  // libpq 15's cancel request is blocking (a connect and a write to the
  // server): it runs on a thread of its own, joined once it is done or by
  // close(), so none outlives the connection.
  auto finished = std::make_shared<std::atomic<bool>>(false);
  cancels_.push_back({std::thread([c, finished] {
                        char err[256];
                        PQcancel(c, err, sizeof err);
                        PQfreeCancel(c);
                        finished->store(true);
                      }),
                      finished});
}

void PgImpl::join_cancels(bool all) noexcept {
  std::erase_if(cancels_, [all](CancelThread& t) {
    if (!all && !t.finished->load()) return false;
    t.thread.join();
    return true;
  });
}

void PgImpl::close() noexcept {
  if (closed_) return;
  closed_ = true;
  ++gen_;
  teardown();
  join_cancels(true);
  const std::string why = prefix() + "the connection was closed";
  if (open_done_) {
    auto done = std::move(open_done_);
    asio::post(io_, [done = std::move(done), why] { done(errc::closed, why); });
  }
  if (current_) post_done(std::move(current_->done), Result{errc::closed, why, "", {}});
  current_.reset();
  for (auto& p : std::exchange(queue_, {})) {
    post_done(std::move(p.done), Result{errc::closed, why, "", {}});
  }
}

class PgConnection : public Connection {
 public:
  PgConnection(const ClientOptions& options, asio::io_context& io)
      : impl_(std::make_shared<PgImpl>(options, io)) {}
  ~PgConnection() override { impl_->close(); }

  void open(std::function<void(std::error_code, std::string)> done) override {
    impl_->open(std::move(done));
  }
  void query(std::string sql,
             Params params,
             std::function<void(Result)> done,
             bool no_timeout) override {
    impl_->query(Pending{std::move(sql), std::move(params), std::move(done), no_timeout});
  }
  void cancel() override { impl_->cancel(); }
  void on_drop(std::function<void(std::string)> f) override { impl_->on_drop(std::move(f)); }
  bool alive() const noexcept override { return impl_->alive(); }
  std::int64_t session_id() const noexcept override { return impl_->session_id(); }
  void close() noexcept override { impl_->close(); }

 private:
  std::shared_ptr<PgImpl> impl_;
};

}  // namespace

std::unique_ptr<Connection> make_postgresql_connection(const ClientOptions& options,
                                                       asio::io_context& io) {
  return std::make_unique<PgConnection>(options, io);
}

}  // namespace distlock::backend::sql
