// backends_bench: every backend's Lock side by side in one run on one
// machine, against Apache Curator's InterProcessMutex on the same ZooKeeper
// ensemble, and against each server's raw round-trip limit. Starts its
// servers with the test fixtures (free 127.0.0.1 ports, stopped by pid): one
// redis-server, a 3-node ZooKeeper ensemble, one mariadbd, one postgres; and
// Curator as tests/interop/curator/CuratorPeer.java.
//
//   backends_bench [--warmup 2] [--seconds 5] [--threads 1,16,64]
//                  [--handoff-threads 2,8] [--session-ms 10000] [--no-death]
//                  [--only NAME,...]
//
// Contenders (each a small adapter: how a thread makes its Lock, how a
// waiter is seen in line, or a peer): "redis Lock" (Client::lock, Redisson's
// layout) and "redis SimpleLock" (SET NX PX) on one Client; "distlock
// zookeeper" (Curator's recipe, node for node) on one Client of the
// ensemble; "curator" (InterProcessMutex in the peer); "mariadb GET_LOCK" and
// "postgres advisory" (Client::lock of a mysql:// / postgresql:// Client,
// whose every holding and waiting acquire has a connection of its own).
// Every contender runs the loops of lock_loops.hpp: uncontended pairs/s and
// acquire latency per thread count, contended handoff per --handoff-threads,
// and the time from a holder process's SIGKILL to the next holder. --only
// keeps the contenders whose name contains one of the words. Never part of
// CI; the figures are ratios against references measured in this run.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "backends_report.hpp"
#include "curator_contender.hpp"
#include "distlock/client.hpp"
#include "distlock/client_options.hpp"
#include "distlock/lock.hpp"
#include "distlock/simple_lock.hpp"
#include "lock_loops.hpp"
#include "round_trip.hpp"
#include "support/mariadb_server.hpp"
#include "support/postgres_server.hpp"
#include "support/redis_server.hpp"
#include "support/zk_inspect.hpp"
#include "support/zookeeper_ensemble.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using distlock::bench::Death;
using distlock::bench::Handoff;
using distlock::bench::LoopSettings;
using distlock::bench::MakeLock;
using distlock::bench::Throughput;

// The PostgreSQL fixture runs postgres with max_connections=60 (3 kept for
// superusers, one for the death test's holder process): the Client may not
// open 64, so 64 threads share this many connections.
constexpr std::size_t kPostgresConnections = 52;
// MariaDB's default max_connections is 151.
constexpr std::size_t kMariaDbConnections = 72;

struct Settings {
  LoopSettings loop;
  std::vector<int> threads{1, 16, 64};
  std::vector<int> handoff_threads{2, 8};
  bool death = true;
  std::vector<std::string> only;
};

// One backend, as the loops see it.
struct Contender {
  std::string name;
  std::function<Throughput(int threads, const std::string& prefix)> uncontended;
  std::function<Handoff(int threads, const std::string& name)> handoff;
  std::function<Death(const std::string& name)> death;
  std::string lease;                  // what a killed holder leaves behind
  double raw_round_trips_per_s = -1;  // the server's, for the 1-thread ratio
};

// A Contender of a distlock Client: the holder of its death test is this
// binary's --hold mode on `uri`, `kind` (lock|simple); `queued(name)` says
// when a waiter is in line on `name`.
Contender distlock_contender(const std::string& name,
                             const MakeLock& make,
                             const Settings& s,
                             const std::string& self,
                             const std::string& uri,
                             const std::string& kind,
                             const std::function<bool(const std::string&)>& queued) {
  Contender c;
  c.name = name;
  c.uncontended = [make, &s](int threads, const std::string& prefix) {
    return distlock::bench::uncontended(make, threads, s.loop, prefix);
  };
  c.handoff = [make, &s](int threads, const std::string& n) {
    return distlock::bench::contended(make, threads, s.loop, n);
  };
  const std::string watchdog = std::to_string(s.loop.session_ms);
  c.death = [=, &s](const std::string& n) {
    return distlock::bench::death_of_holder({self, "--hold", uri, n, kind, watchdog}, make, n,
                                            s.loop, [=] { return queued(n); });
  };
  return c;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < list.size();) {
    const auto comma = list.find(',', at);
    out.push_back(list.substr(at, comma - at));
    at = comma == std::string::npos ? list.size() : comma + 1;
  }
  return out;
}

std::vector<int> int_list(const std::string& list) {
  std::vector<int> out;
  for (const std::string& item : split(list)) out.push_back(std::stoi(item));
  return out;
}

bool parse(int argc, char** argv, Settings& s) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const bool has_value = i + 1 < argc;
    if (flag == "--no-death") {
      s.death = false;
    } else if (flag == "--warmup" && has_value) {
      s.loop.warmup = std::stod(argv[++i]);
    } else if (flag == "--seconds" && has_value) {
      s.loop.seconds = std::stod(argv[++i]);
    } else if (flag == "--threads" && has_value) {
      s.threads = int_list(argv[++i]);
    } else if (flag == "--handoff-threads" && has_value) {
      s.handoff_threads = int_list(argv[++i]);
    } else if (flag == "--session-ms" && has_value) {
      s.loop.session_ms = std::stol(argv[++i]);
    } else if (flag == "--only" && has_value) {
      s.only = split(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: backends_bench [--warmup S] [--seconds S] [--threads 1,16,64] "
                   "[--handoff-threads 2,8] [--session-ms MS] [--no-death] [--only NAME,...]\n");
      return false;
    }
  }
  return true;
}

std::string self_path(const char* argv0) {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  return n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : argv0;
}

// Runs every contender through the loops (the uncontended ones, the
// handoffs, the deaths, in that order), printing a line per result.
distlock::bench::BackendsReport measure(const std::vector<Contender>& contenders,
                                        const Settings& s) {
  distlock::bench::BackendsReport rep;
  // 1. Uncontended.
  for (const int threads : s.threads) {
    for (std::size_t i = 0; i < contenders.size(); ++i) {
      const Contender& c = contenders[i];
      const Throughput r =
          c.uncontended(threads, "u" + std::to_string(threads) + "-c" + std::to_string(i) + "-");
      rep.tp[threads].push_back(r);
      std::printf(
          "uncontended contender=\"%s\" threads=%d pairs_per_s=%.1f acquire_p50_us=%.0f "
          "acquire_p99_us=%.0f pairs=%ld warmup_pairs=%ld",
          c.name.c_str(), threads, r.pairs_per_s, r.p50_us, r.p99_us, r.pairs, r.warmup_pairs);
      if (r.requests_per_pair >= 0) std::printf(" zk_requests_per_pair=%.2f", r.requests_per_pair);
      std::printf("\n");
      std::fflush(stdout);
    }
  }

  // 2. Contended handoff.
  for (const int threads : s.handoff_threads) {
    for (std::size_t i = 0; i < contenders.size(); ++i) {
      const Contender& c = contenders[i];
      const Handoff r =
          c.handoff(threads, "h" + std::to_string(threads) + "-c" + std::to_string(i));
      rep.ho[threads].push_back(r);
      std::printf(
          "handoff contender=\"%s\" threads=%d handoff_p50_us=%.0f handoff_p99_us=%.0f "
          "acquisitions=%ld acquisitions_per_s=%.1f handoffs=%ld\n",
          c.name.c_str(), threads, r.p50_us, r.p99_us, r.pairs, r.pairs_per_s, r.handoffs);
      std::fflush(stdout);
    }
  }

  // 3. Death to next holder.
  for (std::size_t i = 0; s.death && i < contenders.size(); ++i) {
    rep.deaths.push_back(contenders[i].death("d-c" + std::to_string(i)));
    const Death& d = rep.deaths.back();
    std::printf("death contender=\"%s\" kill_to_next_holder_ms=%.1f held_before_kill_ms=%.0f%s%s\n",
                contenders[i].name.c_str(), d.ms, d.held_ms,
                d.error.empty() ? "" : " error=", d.error.c_str());
    std::fflush(stdout);
  }

  for (const Contender& c : contenders) {
    rep.names.push_back(c.name);
    rep.leases.push_back(c.lease);
    rep.raw_round_trips_per_s.push_back(c.raw_round_trips_per_s);
  }
  rep.threads = s.threads;
  rep.handoff_threads = s.handoff_threads;
  rep.death = s.death;
  rep.mariadb_connections = kMariaDbConnections;
  rep.postgres_connections = kPostgresConnections;
  return rep;
}

}  // namespace

int main(int argc, char** argv) {
  using distlock::bench::ServerAddress;
  if (argc >= 2 && std::string(argv[1]) == "--hold") return distlock::bench::hold_mode(argc, argv);
  Settings s;
  if (!parse(argc, argv, s)) return 2;
  const LoopSettings& loop = s.loop;
  const auto run_start = Clock::now();
  std::printf(
      "backends_bench: warm-up %.1f s then a %.1f s window for every contender; "
      "%u cores; load average at start %s\n",
      loop.warmup, loop.seconds, std::thread::hardware_concurrency(), load_average().c_str());

  distlock::test::RedisServer redis;
  distlock::test::ZooKeeperEnsemble ensemble;  // 3 nodes, tickTime 200 ms
  distlock::test::MariaDbServer mariadb;
  distlock::test::PostgresServer postgres;
  const std::string connect = ensemble.connect_string();
  const std::string session = std::to_string(loop.session_ms);
  const std::string zk_uri = "zookeeper://" + connect + "/bench?session_timeout_ms=" + session;
  const std::string info = redis.cli({"INFO", "server"});
  std::printf(
      "servers: %s; ZooKeeper %s, 3 nodes, leader node %d, tickTime 200 ms, forceSync=no; "
      "MariaDB %s; PostgreSQL %s, fsync=off (all test fixtures)\n",
      first_line(info.substr(info.find("redis_version:"))).c_str(),
      first_line(ensemble.four_letter(0, "srvr")).c_str(), ensemble.leader(),
      mariadb.root_query("SELECT VERSION()").value_or("?").c_str(),
      postgres.sql("SHOW server_version").c_str());
  std::fflush(stdout);

  // The servers' raw round-trip limits, before any contender's connections.
  const double rw = loop.warmup, rs = loop.seconds;
  const auto ping = distlock::bench::redis_ping({redis.host(), redis.port(), "", "", ""}, rw, rs);
  const auto my_rt = distlock::bench::mariadb_select_1(
      {"127.0.0.1", mariadb.port(), mariadb.kUser, mariadb.kPassword, mariadb.kDatabase}, rw, rs);
  const auto pg_rt = distlock::bench::postgres_select_1(
      {"127.0.0.1", postgres.port(), postgres.kUser, postgres.kPassword, postgres.kDatabase}, rw,
      rs);
  const std::pair<const char*, distlock::bench::RoundTrips> raws[] = {
      {"redis PING", ping}, {"mariadb SELECT 1", my_rt}, {"postgres SELECT 1", pg_rt}};
  for (const auto& [what, r] : raws) {
    std::printf("round_trip server=\"%s\" per_s=%.1f p50_us=%.0f%s%s\n", what, r.per_s, r.p50_us,
                r.error.empty() ? "" : " error=", r.error.c_str());
  }

  distlock::Client redis_client(redis.uri());
  distlock::Client zk_client(zk_uri);
  distlock::ClientOptions my_options = mariadb.options();
  my_options.max_connections = kMariaDbConnections;
  distlock::Client my_client(my_options);
  distlock::ClientOptions pg_options = postgres.options();
  pg_options.max_connections = kPostgresConnections;
  distlock::Client pg_client(pg_options);
  distlock::test::ZkInspector inspector(connect);
  const std::string self = self_path(argv[0]);

  std::vector<Contender> all;
  all.push_back(distlock_contender(
      "redis Lock", [&](const std::string& n) { return redis_client.lock(n); }, s, self,
      redis.uri(), "lock",
      [&](const std::string& n) {
        const auto r = redis.cli({"PUBSUB", "NUMSUB", "redisson_lock__channel:{" + n + "}"});
        return r.find("\n1") != std::string::npos;  // it listens on the lock's channel
      }));
  all.push_back(distlock_contender(
      "redis SimpleLock",
      [&](const std::string& n) { return distlock::Lock(redis_client.simple_lock(n).as_lock()); },
      s, self, redis.uri(), "simple",
      [&](const std::string& n) {
        const auto r = redis.cli({"PUBSUB", "NUMSUB", "distlock_simple_lock__channel:{" + n + "}"});
        return r.find("\n1") != std::string::npos;
      }));
  all.push_back(distlock_contender(
      "distlock zookeeper", [&](const std::string& n) { return zk_client.lock(n); }, s, self,
      zk_uri, "lock",
      [&](const std::string& n) { return inspector.queue("/bench/" + n).size() == 2; }));
  {
    Contender& zk = all.back();
    auto plain = zk.uncontended;
    zk.uncontended = [&ensemble, plain](int threads, const std::string& prefix) {
      return distlock::bench::counted(ensemble, [&] { return plain(threads, prefix); });
    };
  }
  Contender curator;
  curator.name = "curator";
  curator.uncontended = [&](int threads, const std::string& prefix) {
    return distlock::bench::counted(ensemble, [&] {
      return distlock::bench::curator_uncontended(connect, threads, loop, "/curator/" + prefix);
    });
  };
  curator.handoff = [&](int threads, const std::string& n) {
    return distlock::bench::curator_handoff(connect, threads, loop, "/curator/" + n);
  };
  curator.death = [&](const std::string& n) {
    return distlock::bench::curator_death(connect, inspector, "/curator/" + n, loop);
  };
  all.push_back(curator);
  all.push_back(distlock_contender(
      "mariadb GET_LOCK", [&](const std::string& n) { return my_client.lock(n); }, s, self,
      mariadb.uri(), "lock",
      [&](const std::string&) {
        return mariadb
                   .root_query(
                       "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = 'User "
                       "lock'")
                   .value_or("") == "1";
      }));
  all.push_back(distlock_contender(
      "postgres advisory", [&](const std::string& n) { return pg_client.lock(n); }, s, self,
      postgres.uri(), "lock",
      [&](const std::string&) {
        return postgres.sql(
                   "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted") ==
               "1";
      }));
  const std::string lease_redis = "watchdog_timeout " + session + " ms (renewed every third)";
  const std::string lease_zk = "session timeout " + session + " ms";
  const std::string lease_sql = "the holding's connection (closed by the kernel on SIGKILL)";
  const std::string leases[] = {lease_redis, lease_redis, lease_zk, lease_zk, lease_sql, lease_sql};
  const double raw_per_s[] = {ping.per_s, ping.per_s, -1, -1, my_rt.per_s, pg_rt.per_s};
  for (std::size_t i = 0; i < all.size(); ++i) {
    all[i].lease = leases[i];
    all[i].raw_round_trips_per_s = raw_per_s[i];
  }
  std::vector<Contender> contenders;
  for (const Contender& c : all) {
    const bool wanted = s.only.empty() || std::any_of(s.only.begin(), s.only.end(), [&](auto& w) {
                          return c.name.find(w) != std::string::npos;
                        });
    if (wanted) contenders.push_back(c);
  }

  distlock::bench::BackendsReport rep = measure(contenders, s);
  for (const auto& [what, r] : raws) rep.raws.emplace_back(what, r);
  distlock::bench::print_report(rep);
  std::printf("\nload average at end %s; total %.0f s\n", load_average().c_str(),
              std::chrono::duration<double>(Clock::now() - run_start).count());
  return 0;
}
