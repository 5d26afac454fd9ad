// The MySQL/MariaDB driver (sql_connection.hpp) on MariaDB Connector/C's
// non-blocking API: every mysql_*_start/_cont step that would block returns
// what it waits for (MYSQL_WAIT_READ/WRITE/EXCEPT/TIMEOUT), and Asio waits
// for that readiness on the library's own socket, so the I/O thread never
// blocks in the library.
//
// Parameters are escaped by the library (mysql_real_escape_string, in the
// connection's charset utf8mb4, honouring NO_BACKSLASH_ESCAPES) and put in
// place of each `?` outside quotes as a quoted string literal; the server
// converts them where a number is needed (GET_LOCK's timeout).
#include <mysql.h>
#include <sys/socket.h>

#include <asio/posix/stream_descriptor.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>

#include "backend/sql_connection.hpp"
#include "distlock/error.hpp"

namespace distlock::backend::sql {
namespace {

using std::chrono::milliseconds;

struct Pending {
  std::string sql;
  Params params;
  std::function<void(Result)> done;
  bool no_timeout = false;
};

Result failure(errc e, std::string message, std::string code = {}) {
  Result r;
  r.ec = make_error_code(e);
  r.message = std::move(message);
  r.code = std::move(code);
  return r;
}

// The session is over: the link broke (2006 gone, 2013 lost, 2055 lost
// during a call), or the server ended it and said why before closing (1053
// shutdown in progress, 1927 connection killed, 4031 idle timeout).
bool is_lost(unsigned int error) {
  return error == 2006 || error == 2013 || error == 2055 || error == 1053 || error == 1927 ||
         error == 4031;
}

// The state lives in a shared_ptr that every Asio handler holds, so a handler
// that runs after the Connection is destroyed finds it closed, not freed.
class State : public std::enable_shared_from_this<State> {
 public:
  State(ClientOptions options, asio::io_context& io)
      : options_(std::move(options)), io_(io), wait_timer_(io), deadline_(io) {}
  ~State() { teardown(); }

  void open(std::function<void(std::error_code, std::string)> done);
  void query(Pending p);
  void cancel();
  void on_drop(std::function<void(std::string)> f) { on_drop_ = std::move(f); }
  bool alive() const noexcept { return phase_ == Phase::idle || phase_ == Phase::busy; }
  std::int64_t session_id() const noexcept { return session_id_; }
  void close() noexcept;

 private:
  enum class Phase { fresh, connecting, idle, busy, dead, closed };

  std::string where() const {
    return "MySQL " + options_.host + ":" + std::to_string(options_.port) + ": ";
  }
  void configure();
  void drive(int status);
  void arm(int status);
  void ready(std::uint64_t step, int event);
  void sync_socket();
  void connected();
  void start_next();
  void stored();
  void finish(Result r);
  void lost(const std::string& why, bool report_drop);
  void watch_idle();
  void idle_readable();
  void teardown() noexcept;
  void fail_queue(errc e, const std::string& why);
  std::optional<std::string> statement_text(const Pending& p, std::string& error) const;

  ClientOptions options_;
  asio::io_context& io_;
  MYSQL* mysql_ = nullptr;
  std::optional<asio::posix::stream_descriptor> socket_;
  asio::steady_timer wait_timer_;  // the library's MYSQL_WAIT_TIMEOUT
  asio::steady_timer deadline_;    // connect_timeout, command_timeout
  Phase phase_ = Phase::fresh;
  // Bumped on every wait armed or abandoned: a handler whose step is not
  // the current one is stale (its sibling wait won, or the link is gone).
  std::uint64_t step_ = 0;
  std::function<int(int)> cont_;  // the _cont call of the running step
  std::function<void()> then_;    // what follows once it completes
  MYSQL* connect_ret_ = nullptr;
  int query_ret_ = 0;
  MYSQL_RES* result_ = nullptr;
  std::function<void(std::error_code, std::string)> open_done_;
  std::function<void(std::string)> on_drop_;
  std::deque<Pending> queue_;
  std::optional<Pending> current_;
  std::int64_t session_id_ = 0;
};

void State::configure() {
  static std::once_flag library_once;
  // mysql_library_init is not thread-safe; mysql_init would call it lazily.
  std::call_once(library_once, [] { mysql_library_init(0, nullptr, nullptr); });
  mysql_ = mysql_init(nullptr);
  if (mysql_ == nullptr) throw std::bad_alloc();
  mysql_options(mysql_, MYSQL_OPT_NONBLOCK, nullptr);
  mysql_options(mysql_, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  // "localhost" would otherwise mean the default Unix socket.
  const unsigned int tcp = MYSQL_PROTOCOL_TCP;
  mysql_options(mysql_, MYSQL_OPT_PROTOCOL, &tcp);
  if (options_.tls.enabled) {
    const my_bool on = 1;
    const my_bool verify = options_.tls.verify_peer ? 1 : 0;
    auto opt = [](const std::string& s) { return s.empty() ? nullptr : s.c_str(); };
    mysql_ssl_set(mysql_, opt(options_.tls.key_file), opt(options_.tls.cert_file),
                  opt(options_.tls.ca_file), opt(options_.tls.ca_dir), nullptr);
    mysql_options(mysql_, MYSQL_OPT_SSL_ENFORCE, &on);
    mysql_options(mysql_, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
  }
}

void State::open(std::function<void(std::error_code, std::string)> done) {
  if (phase_ != Phase::fresh) {
    asio::post(io_, [done = std::move(done), why = where() + "open() called twice"] {
      done(make_error_code(errc::invalid_argument), why);
    });
    return;
  }
  open_done_ = std::move(done);
  phase_ = Phase::connecting;
  configure();
  deadline_.expires_after(options_.connect_timeout);
  deadline_.async_wait([weak = weak_from_this()](std::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->phase_ != Phase::connecting) return;
    self->teardown();
    self->phase_ = Phase::dead;
    auto open_done = std::move(self->open_done_);
    open_done(make_error_code(errc::connection_failed),
              self->where() + "connect timed out after " +
                  std::to_string(self->options_.connect_timeout.count()) + " ms");
  });
  const char* db = options_.database.empty() ? nullptr : options_.database.c_str();
  cont_ = [this](int event) { return mysql_real_connect_cont(&connect_ret_, mysql_, event); };
  then_ = [this] { connected(); };
  drive(mysql_real_connect_start(&connect_ret_, mysql_, options_.host.c_str(),
                                 options_.username.c_str(), options_.password.c_str(), db,
                                 options_.port, nullptr, 0));
}

void State::connected() {
  deadline_.cancel();
  auto done = std::move(open_done_);
  if (connect_ret_ == nullptr) {
    const unsigned int error = mysql_errno(mysql_);
    const std::string why = where() + mysql_error(mysql_);
    teardown();
    phase_ = Phase::dead;
    // 1045 bad user or password, 1698 no password for a unix_socket user;
    // every client-side error (2002 refused, 2003, 2005 no such host, 2013
    // during the handshake, 2026 TLS) means the server could not be reached.
    const errc e = error == 1045 || error == 1698  ? errc::auth_failed
                   : error >= 2000 && error < 3000 ? errc::connection_failed
                                                   : errc::server_error;
    done(make_error_code(e), why);
    return;
  }
  session_id_ = static_cast<std::int64_t>(mysql_thread_id(mysql_));
  phase_ = Phase::idle;
  done({}, {});
  if (phase_ == Phase::idle && !queue_.empty()) {
    start_next();
  } else if (phase_ == Phase::idle) {
    watch_idle();
  }
}

// Completes a step that needs no more waiting, or waits for what it asks.
void State::drive(int status) {
  sync_socket();
  if (status == 0) {
    auto then = std::move(then_);
    then();
    return;
  }
  arm(status);
}

// The library may replace (a new connect attempt) or close (end_server
// after an error) its socket inside a call: follow it, and drop the
// descriptor without closing it, so Asio never closes the library's fd.
void State::sync_socket() {
  const int fd = mysql_ != nullptr ? static_cast<int>(mysql_get_socket(mysql_)) : -1;
  if (socket_ && socket_->native_handle() != fd) {
    socket_->release();
    socket_.reset();
  }
  if (!socket_ && fd >= 0) socket_.emplace(io_, fd);
}

void State::arm(int status) {
  const std::uint64_t step = ++step_;
  auto on = [self = shared_from_this(), step](int event) {
    return [self, step, event](std::error_code ec) {
      if (ec == asio::error::operation_aborted) return;
      self->ready(step, event);
    };
  };
  if (socket_) {
    if (status & MYSQL_WAIT_READ) {
      socket_->async_wait(asio::posix::descriptor_base::wait_read, on(MYSQL_WAIT_READ));
    }
    if (status & MYSQL_WAIT_WRITE) {
      socket_->async_wait(asio::posix::descriptor_base::wait_write, on(MYSQL_WAIT_WRITE));
    }
    if (status & MYSQL_WAIT_EXCEPT) {
      socket_->async_wait(asio::posix::descriptor_base::wait_error, on(MYSQL_WAIT_EXCEPT));
    }
  }
  if (status & MYSQL_WAIT_TIMEOUT) {
    wait_timer_.expires_after(milliseconds(mysql_get_timeout_value_ms(mysql_)));
    wait_timer_.async_wait(on(MYSQL_WAIT_TIMEOUT));
  }
}

void State::ready(std::uint64_t step, int event) {
  if (step != step_ || mysql_ == nullptr) return;
  ++step_;  // the sibling waits are stale now
  if (socket_) socket_->cancel();
  wait_timer_.cancel();
  drive(cont_(event));
}

std::optional<std::string> State::statement_text(const Pending& p, std::string& error) const {
  std::string text;
  std::size_t next = 0;
  char quote = 0;  // inside '...', "..." or `...`: a ? there is text
  for (std::size_t i = 0; i < p.sql.size(); ++i) {
    const char c = p.sql[i];
    if (quote != 0) {
      text += c;
      if (c == '\\' && quote != '`' && i + 1 < p.sql.size()) {
        text += p.sql[++i];
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '\'' || c == '"' || c == '`') {
      quote = c;
      text += c;
    } else if (c != '?') {
      text += c;
    } else if (next < p.params.size()) {
      const std::string& param = p.params[next++];
      std::string escaped(param.size() * 2 + 1, '\0');
      escaped.resize(mysql_real_escape_string(mysql_, escaped.data(), param.data(),
                                              static_cast<unsigned long>(param.size())));
      text += '\'' + escaped + '\'';
    } else {
      next = p.params.size() + 1;
      break;
    }
  }
  if (next != p.params.size()) {
    error = "the number of ? markers differs from the " + std::to_string(p.params.size()) +
            " parameters";
    return std::nullopt;
  }
  return text;
}

void State::query(Pending p) {
  if (phase_ == Phase::dead || phase_ == Phase::closed || phase_ == Phase::fresh) {
    const errc e = phase_ == Phase::closed ? errc::closed : errc::connection_lost;
    asio::post(io_,
               [done = std::move(p.done), r = failure(e, where() + "not connected")] { done(r); });
    return;
  }
  queue_.push_back(std::move(p));
  if (phase_ == Phase::idle) start_next();
}

void State::start_next() {
  current_ = std::move(queue_.front());
  queue_.pop_front();
  phase_ = Phase::busy;
  ++step_;  // ends the idle watch
  if (socket_) socket_->cancel();
  std::string error;
  const std::optional<std::string> text = statement_text(*current_, error);
  if (!text) {
    finish(failure(errc::invalid_argument, where() + error));
    return;
  }
  if (!current_->no_timeout) {
    deadline_.expires_after(options_.command_timeout);
    deadline_.async_wait([weak = weak_from_this()](std::error_code ec) {
      auto self = weak.lock();
      if (ec || !self || self->phase_ != Phase::busy) return;
      // The reply may still come; the link's state is unknown: close it.
      self->teardown();
      self->phase_ = Phase::dead;
      const std::string why = self->where() + "no reply within " +
                              std::to_string(self->options_.command_timeout.count()) + " ms";
      self->finish(failure(errc::timeout, why));
    });
  }
  cont_ = [this](int event) { return mysql_real_query_cont(&query_ret_, mysql_, event); };
  then_ = [this] {
    if (query_ret_ != 0) return stored();
    cont_ = [this](int event) { return mysql_store_result_cont(&result_, mysql_, event); };
    then_ = [this] { stored(); };
    drive(mysql_store_result_start(&result_, mysql_));
  };
  drive(mysql_real_query_start(&query_ret_, mysql_, text->data(),
                               static_cast<unsigned long>(text->size())));
}

void State::stored() {
  const unsigned int error = mysql_errno(mysql_);
  if (query_ret_ != 0 || (result_ == nullptr && error != 0)) {
    const std::string why = where() + mysql_error(mysql_);
    if (is_lost(error)) return lost(why, true);
    finish(failure(errc::server_error, why, std::to_string(error)));
    return;
  }
  Result r;
  if (result_ != nullptr) {
    // A stored result is in memory: fetching and freeing it does no I/O.
    MYSQL_ROW row = mysql_fetch_row(result_);
    if (row != nullptr && mysql_num_fields(result_) > 0 && row[0] != nullptr) {
      r.value.emplace(row[0], mysql_fetch_lengths(result_)[0]);
    }
    mysql_free_result(result_);
    result_ = nullptr;
  }
  finish(std::move(r));
}

void State::finish(Result r) {
  deadline_.cancel();
  auto done = std::move(current_->done);
  current_.reset();
  if (phase_ == Phase::busy) phase_ = Phase::idle;
  if (phase_ == Phase::dead) fail_queue(errc::connection_lost, r.message);
  done(std::move(r));
  if (phase_ == Phase::idle && !queue_.empty()) {
    start_next();
  } else if (phase_ == Phase::idle) {
    watch_idle();
  }
}

void State::lost(const std::string& why, bool report_drop) {
  teardown();
  phase_ = Phase::dead;
  if (current_) finish(failure(errc::connection_lost, why));
  fail_queue(errc::connection_lost, why);
  if (report_drop && on_drop_ && phase_ == Phase::dead) {
    auto f = std::move(on_drop_);
    f(why);
  }
}

void State::watch_idle() {
  if (!socket_) return;
  const std::uint64_t step = ++step_;
  socket_->async_wait(asio::posix::descriptor_base::wait_read,
                      [self = shared_from_this(), step](std::error_code ec) {
                        if (ec == asio::error::operation_aborted || step != self->step_) return;
                        if (self->phase_ == Phase::idle) self->idle_readable();
                      });
}

// Nothing is owed to an idle session, so anything readable is its end: EOF,
// a reset, or the error packet MariaDB sends before closing it (1927
// "Connection was killed", 4031 idle timeout).
void State::idle_readable() {
  char byte = 0;
  const ssize_t n = ::recv(socket_->native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    watch_idle();
    return;
  }
  const std::string why =
      where() + (n == 0  ? "the server closed the connection"
                 : n > 0 ? "the server ended the session (killed or timed out)"
                         : std::string("connection error: ") + std::strerror(errno));
  lost(why, true);
}

void State::teardown() noexcept {
  ++step_;
  wait_timer_.cancel();
  deadline_.cancel();
  if (result_ != nullptr) {
    mysql_free_result(result_);
    result_ = nullptr;
  }
  int fd = -1;
  if (socket_) {
    fd = socket_->native_handle();
    socket_->release();
    socket_.reset();
  }
  if (mysql_ != nullptr) {
    // Shut the socket first so mysql_close's COM_QUIT fails at once instead
    // of blocking the I/O thread on a full or dead link.
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
    mysql_close(mysql_);
    mysql_ = nullptr;
  }
}

void State::fail_queue(errc e, const std::string& why) {
  for (Pending& p : queue_) {
    asio::post(io_, [done = std::move(p.done), r = failure(e, why)] { done(r); });
  }
  queue_.clear();
}

void State::close() noexcept {
  if (phase_ == Phase::closed) return;
  phase_ = Phase::closed;
  teardown();
  on_drop_ = nullptr;
  const std::string why = where() + "closed";
  if (open_done_) {
    asio::post(io_,
               [done = std::move(open_done_), why] { done(make_error_code(errc::closed), why); });
    open_done_ = nullptr;
  }
  if (current_) queue_.push_front(std::move(*current_));
  current_.reset();
  fail_queue(errc::closed, why);
}

// KILL QUERY on a side connection of our own kind (non-blocking too); it
// keeps itself alive through its callbacks and closes when done.
void State::cancel() {
  if (phase_ != Phase::busy) return;
  auto side = std::make_shared<State>(options_, io_);
  const std::string kill = "KILL QUERY " + std::to_string(session_id_);
  side->open([side, kill](std::error_code ec, const std::string&) {
    if (ec) return side->close();
    side->query(Pending{kill, {}, [side](const Result&) { side->close(); }, false});
  });
}

class MysqlConnection final : public Connection {
 public:
  MysqlConnection(const ClientOptions& options, asio::io_context& io)
      : state_(std::make_shared<State>(options, io)) {}
  ~MysqlConnection() override { state_->close(); }

  void open(std::function<void(std::error_code, std::string)> done) override {
    state_->open(std::move(done));
  }
  void query(std::string sql,
             Params params,
             std::function<void(Result)> done,
             bool no_timeout) override {
    state_->query(Pending{std::move(sql), std::move(params), std::move(done), no_timeout});
  }
  void cancel() override { state_->cancel(); }
  void on_drop(std::function<void(std::string why)> f) override { state_->on_drop(std::move(f)); }
  bool alive() const noexcept override { return state_->alive(); }
  std::int64_t session_id() const noexcept override { return state_->session_id(); }
  void close() noexcept override { state_->close(); }

 private:
  std::shared_ptr<State> state_;
};

}  // namespace

std::unique_ptr<Connection> make_mysql_connection(const ClientOptions& options,
                                                  asio::io_context& io) {
  return std::make_unique<MysqlConnection>(options, io);
}

}  // namespace distlock::backend::sql
