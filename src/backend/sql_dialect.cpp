#include "backend/sql_dialect.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "distlock/error.hpp"

namespace distlock::backend::sql {

namespace {

std::array<unsigned char, 32> sha256(std::string_view bytes) {
  std::array<unsigned char, 32> digest{};
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1) {
    throw Error(errc::invalid_argument, "SHA-256 of a lock name failed");
  }
  return digest;
}

// "<n>ms", the form lock_timeout takes.
std::string milliseconds_text(std::int64_t ms) {
  return std::to_string(ms) + "ms";
}

// The pg_locks rows of an advisory lock on a bigint key: its high half is
// classid, its low half objid, objsubid 1; in the current database.
constexpr std::string_view kPgLockRows =
    " FROM pg_locks WHERE locktype = 'advisory' AND granted"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    " AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND objsubid = 1";

class PostgreSql final : public Dialect {
 public:
  std::string_view name() const noexcept override { return "PostgreSQL"; }

  std::string server_lock(const std::string& name) const override {
    return std::to_string(postgresql_key(name));
  }

  Statement session_setup(std::chrono::milliseconds idle_limit) const override {
    return {"SELECT set_config('idle_session_timeout', $1, false)",
            {milliseconds_text(idle_limit.count())}};
  }

  std::optional<Statement> before_lock(const std::string& /*lock*/,
                                       std::optional<std::int64_t> wait_ms,
                                       bool /*shared*/) const override {
    if (wait_ms && *wait_ms == 0) return std::nullopt;  // the try form waits not at all
    return Statement{"SELECT set_config('lock_timeout', $1, false)",
                     {wait_ms ? milliseconds_text(*wait_ms) : "0"}};
  }

  Statement lock(const std::string& lock,
                 std::optional<std::int64_t> wait_ms,
                 bool shared) const override {
    const std::string suffix = shared ? "_shared" : "";
    if (wait_ms && *wait_ms == 0) {
      return {"SELECT pg_try_advisory_lock" + suffix + "($1::bigint)", {lock}};
    }
    return {"SELECT true FROM pg_advisory_lock" + suffix + "($1::bigint)", {lock}};
  }

  std::optional<bool> locked(const Result& r,
                             std::optional<std::int64_t> /*wait_ms*/) const override {
    if (!r.ec) return r.integer() == 1;
    if (r.code == "55P03") return false;  // lock_not_available: lock_timeout ran out
    return std::nullopt;
  }

  Statement unlock(const std::string& lock, bool shared) const override {
    return {std::string("SELECT pg_advisory_unlock") + (shared ? "_shared" : "") + "($1::bigint)",
            {lock}};
  }

  Statement held(const std::string& lock, bool shared) const override {
    return {"SELECT count(*)" + std::string(kPgLockRows) + mode(shared), halves(lock)};
  }

  Statement end_holders(const std::string& lock, bool shared, std::int64_t wait_ms) const override {
    // pg_terminate_backend's timeout (PostgreSQL 14) waits for the session
    // to be gone, and its locks with it.
    Params p = halves(lock);
    p.push_back(std::to_string(wait_ms));
    return {"SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, $3::bigint))" +
                std::string(kPgLockRows) + mode(shared),
            std::move(p)};
  }
  std::optional<Statement> kill(std::int64_t /*session*/) const override { return std::nullopt; }
  bool has_shared() const noexcept override { return true; }

  Statement fence_table() const override {
    return {
        "CREATE TABLE IF NOT EXISTS distlock_fence"
        " (lock_key bigint PRIMARY KEY, token bigint NOT NULL)",
        {}};
  }
  Statement fence_bump(const std::string& lock) const override {
    return {
        "INSERT INTO distlock_fence AS f (lock_key, token) VALUES ($1::bigint, 1)"
        " ON CONFLICT (lock_key) DO UPDATE SET token = f.token + 1 RETURNING token",
        {lock}};
  }
  std::optional<Statement> fence_read() const override { return std::nullopt; }
  Statement ping() const override { return {"SELECT 1", {}}; }

  std::unique_ptr<Connection> connect(const ClientOptions& options,
                                      asio::io_context& io) const override {
    return make_postgresql_connection(options, io);
  }

 private:
  static std::string mode(bool shared) {
    return shared ? " AND mode = 'ShareLock'" : " AND mode = 'ExclusiveLock'";
  }
  // The key's halves, as pg_locks shows them (unsigned 32-bit oids).
  static Params halves(const std::string& lock) {
    const auto key = static_cast<std::uint64_t>(std::stoll(lock));
    return {std::to_string(key >> 32), std::to_string(key & 0xffffffffu)};
  }
};

class MySql final : public Dialect {
 public:
  std::string_view name() const noexcept override { return "MySQL"; }

  std::string server_lock(const std::string& name) const override { return mysql_lock_name(name); }

  Statement session_setup(std::chrono::milliseconds idle_limit) const override {
    // wait_timeout takes whole seconds, and no string: the number is ours.
    const auto seconds = std::chrono::ceil<std::chrono::seconds>(idle_limit).count();
    return {
        "SET SESSION wait_timeout = " + std::to_string(std::clamp<long long>(seconds, 1, 31536000)),
        {}};
  }

  std::optional<Statement> before_lock(const std::string& /*lock*/,
                                       std::optional<std::int64_t> /*wait_ms*/,
                                       bool /*shared*/) const override {
    return std::nullopt;
  }

  Statement lock(const std::string& lock,
                 std::optional<std::int64_t> wait_ms,
                 bool /*shared*/) const override {
    // GET_LOCK's timeout is in seconds, fractions allowed; "as long as it
    // takes" is a year (a negative timeout means that on MySQL only).
    std::string seconds = "31536000";
    if (wait_ms) {
      char text[32];
      std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(*wait_ms / 1000),
                    static_cast<long long>(*wait_ms % 1000));
      seconds = text;
    }
    return {"SELECT GET_LOCK(?, ?)", {lock, seconds}};
  }

  std::optional<bool> locked(const Result& r,
                             std::optional<std::int64_t> /*wait_ms*/) const override {
    if (r.ec) return std::nullopt;
    const auto got = r.integer();
    if (!got) return std::nullopt;  // NULL: an error inside GET_LOCK
    return *got == 1;
  }

  Statement unlock(const std::string& lock, bool /*shared*/) const override {
    return {"SELECT RELEASE_LOCK(?)", {lock}};
  }
  Statement held(const std::string& lock, bool /*shared*/) const override {
    return {"SELECT IS_USED_LOCK(?) IS NOT NULL", {lock}};
  }
  Statement end_holders(const std::string& lock,
                        bool /*shared*/,
                        std::int64_t /*wait_ms*/) const override {
    return {"SELECT IS_USED_LOCK(?)", {lock}};
  }
  std::optional<Statement> kill(std::int64_t session) const override {
    return Statement{"KILL CONNECTION " + std::to_string(session), {}};
  }
  bool has_shared() const noexcept override { return false; }

  Statement fence_table() const override {
    return {
        "CREATE TABLE IF NOT EXISTS distlock_fence"
        " (lock_name VARCHAR(64) CHARACTER SET utf8mb4 PRIMARY KEY, token BIGINT NOT NULL)",
        {}};
  }
  Statement fence_bump(const std::string& lock) const override {
    return {
        "INSERT INTO distlock_fence (lock_name, token) VALUES (?, LAST_INSERT_ID(1))"
        " ON DUPLICATE KEY UPDATE token = LAST_INSERT_ID(token + 1)",
        {lock}};
  }
  std::optional<Statement> fence_read() const override {
    return Statement{"SELECT LAST_INSERT_ID()", {}};
  }
  Statement ping() const override { return {"SELECT 1", {}}; }

  std::unique_ptr<Connection> connect(const ClientOptions& options,
                                      asio::io_context& io) const override {
    return make_mysql_connection(options, io);
  }
};

}  // namespace

const Dialect& postgresql() {
  static const PostgreSql dialect;
  return dialect;
}

const Dialect& mysql() {
  static const MySql dialect;
  return dialect;
}

std::int64_t postgresql_key(std::string_view name) {
  const auto digest = sha256(name);
  std::uint64_t key = 0;
  for (int i = 0; i < 8; ++i) key = (key << 8) | digest[static_cast<std::size_t>(i)];
  return static_cast<std::int64_t>(key);
}

std::string mysql_lock_name(std::string_view name) {
  if (name.size() <= 64) return std::string(name);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char b : sha256(name)) {
    hex += kHex[b >> 4];
    hex += kHex[b & 0xf];
  }
  return hex;
}

}  // namespace distlock::backend::sql
