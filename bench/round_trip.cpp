#include "round_trip.hpp"

#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <mysql.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace distlock::bench {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point after(Clock::time_point t, double seconds) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Runs `once` (false: failed) through the warm-up and the window.
RoundTrips timed(double warmup, double seconds, const std::function<bool()>& once) {
  RoundTrips r;
  const Clock::time_point from = after(Clock::now(), warmup);
  const Clock::time_point end = after(from, seconds);
  std::vector<double> samples;
  samples.reserve(1 << 18);
  for (Clock::time_point start; (start = Clock::now()) < end;) {
    if (!once()) return r;
    if (start >= from) {
      samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - from).count();
  if (samples.empty()) return r;
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  r.p50_us = samples[samples.size() / 2];
  r.per_s = static_cast<double>(samples.size()) / elapsed;
  return r;
}

}  // namespace

RoundTrips redis_ping(const ServerAddress& a, double warmup, double seconds) {
  redisContext* c = redisConnect(a.host.c_str(), a.port);
  if (c == nullptr || c->err != 0) {
    RoundTrips r;
    r.error = c != nullptr ? c->errstr : "redisConnect failed";
    if (c != nullptr) redisFree(c);
    return r;
  }
  RoundTrips r = timed(warmup, seconds, [&] {
    auto* reply = static_cast<redisReply*>(redisCommand(c, "PING"));
    const bool ok = reply != nullptr && reply->type == REDIS_REPLY_STATUS;
    if (reply != nullptr) freeReplyObject(reply);
    return ok;
  });
  if (r.per_s < 0) r.error = c->err != 0 ? c->errstr : "PING failed";
  redisFree(c);
  return r;
}

RoundTrips mariadb_select_1(const ServerAddress& a, double warmup, double seconds) {
  RoundTrips r;
  MYSQL* m = mysql_init(nullptr);
  if (m == nullptr) {
    r.error = "mysql_init failed";
    return r;
  }
  if (mysql_real_connect(m, a.host.c_str(), a.user.c_str(), a.password.c_str(), a.database.c_str(),
                         a.port, nullptr, 0) == nullptr) {
    r.error = mysql_error(m);
    mysql_close(m);
    return r;
  }
  r = timed(warmup, seconds, [&] {
    if (mysql_query(m, "SELECT 1") != 0) return false;
    MYSQL_RES* res = mysql_store_result(m);
    if (res == nullptr) return false;
    mysql_free_result(res);
    return true;
  });
  if (r.per_s < 0) r.error = mysql_error(m);
  mysql_close(m);
  return r;
}

RoundTrips postgres_select_1(const ServerAddress& a, double warmup, double seconds) {
  RoundTrips r;
  const char* keys[] = {"host", "port", "user", "password", "dbname", nullptr};
  const std::string port = std::to_string(a.port);
  const char* values[] = {a.host.c_str(),     port.c_str(),       a.user.c_str(),
                          a.password.c_str(), a.database.c_str(), nullptr};
  PGconn* c = PQconnectdbParams(keys, values, 0);
  if (PQstatus(c) != CONNECTION_OK) {
    r.error = PQerrorMessage(c);
    PQfinish(c);
    return r;
  }
  r = timed(warmup, seconds, [&] {
    PGresult* res = PQexec(c, "SELECT 1");
    const bool ok = PQresultStatus(res) == PGRES_TUPLES_OK;
    PQclear(res);
    return ok;
  });
  if (r.per_s < 0) r.error = PQerrorMessage(c);
  PQfinish(c);
  return r;
}

}  // namespace distlock::bench
