// The Cluster's per-call slot lookup (ClusterNodePool::data_for of a slot
// whose master's connection exists, after key_slot as Cluster::data_for and
// Cluster::batch_group compute it) allocates nothing and does not wait for
// the pool's mutex. No server: the connections are made on an io_context
// that never runs, so they never connect.
#include "topology/cluster_node_pool.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "topology/slot.hpp"

// TSan's runtime defines operator new itself (a second definition fails the
// link): under TSan nothing is counted and the allocation test is skipped.
#if defined(__SANITIZE_THREAD__)
#define DISTLOCK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DISTLOCK_TSAN 1
#endif
#endif

namespace {

// Every global operator new of the calling thread counts here (the array and
// nothrow forms call this one). A thread's own count, so the other tests of
// this binary and their threads cannot disturb a measurement.
thread_local std::size_t allocations_on_this_thread = 0;

}  // namespace

#ifndef DISTLOCK_TSAN
void* operator new(std::size_t size) {
  ++allocations_on_this_thread;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
#endif

namespace distlock::topology {
namespace {

// Connections on an io_context nobody runs: made and "started", never
// connected. `on_data` runs inside data_connection(), under the pool's mutex.
class IdleConnector final : public ClusterNodePool::Connector {
 public:
  explicit IdleConnector(asio::io_context& io) : io_(io) {}

  std::function<void()> on_data;

  std::shared_ptr<net::Connection> data_connection(const std::string& host,
                                                   std::uint16_t port) override {
    if (on_data) on_data();
    return make(host, port, net::Connection::Role::data);
  }
  std::shared_ptr<net::Connection> subscriber_connection(const std::string& host,
                                                         std::uint16_t port,
                                                         bool) override {
    return make(host, port, net::Connection::Role::subscriber);
  }
  std::shared_ptr<net::Connection> shard_subscriber_connection(const std::string& host,
                                                               std::uint16_t port) override {
    return make(host, port, net::Connection::Role::subscriber);
  }

 private:
  std::shared_ptr<net::Connection> make(const std::string& host,
                                        std::uint16_t port,
                                        net::Connection::Role role) {
    ClientOptions o;
    o.host = host;
    o.port = port;
    return std::make_shared<net::Connection>(io_, o, nullptr, role, net::Connection::Handlers{});
  }

  asio::io_context& io_;
};

// Three masters over all 16384 slots, host names longer than the small
// string buffer so that copying one would allocate.
std::vector<SlotRange> three_masters() {
  return {
      {0, 5460, "master-number-one.cluster.example", 7000},
      {5461, 10922, "master-number-two.cluster.example", 7001},
      {10923, 16383, "master-number-three.cluster.example", 7002},
  };
}

std::vector<std::string> keys() {
  std::vector<std::string> out;
  for (int i = 0; i < 1000; ++i) out.push_back("{lock-name-" + std::to_string(i) + "}:suffix");
  return out;
}

struct Pool {
  Pool() {
    options.seeds.push_back({"master-number-one.cluster.example", 7000});
    EXPECT_TRUE(pool.install(three_masters()).has_value());
  }
  ~Pool() { pool.close(); }

  asio::io_context io;
  IdleConnector connector{io};
  ClientOptions options;
  ClusterNodePool pool{options, connector};
};

TEST(ClusterNodePool, DataForAMappedSlotWithAConnectionAllocatesNothing) {
#ifdef DISTLOCK_TSAN
  GTEST_SKIP() << "TSan's runtime owns operator new: allocations are not counted";
#endif
  Pool p;
  const auto names = keys();
  for (const auto& k : names) p.pool.data_for(key_slot(k));  // makes the 3 connections

  const std::size_t before = allocations_on_this_thread;
  std::uintptr_t sink = 0;
  for (int round = 0; round < 100; ++round) {
    for (const auto& k : names) {
      const std::uint16_t group = key_slot(k);  // Cluster::batch_group
      sink += reinterpret_cast<std::uintptr_t>(&p.pool.data_for(key_slot(k))) + group;
    }
  }
  EXPECT_EQ(allocations_on_this_thread - before, 0u)
      << "100,000 routed lookups should allocate nothing (sink " << sink << ")";
}

TEST(ClusterNodePool, DataForMakesTheMastersConnectionOnFirstUseOnly) {
  Pool p;
  int made = 0;
  p.connector.on_data = [&] { ++made; };
  net::Connection& first = p.pool.data_for(0);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(&p.pool.data_for(5460), &first) << "slots 0 and 5460 share a master";
  EXPECT_EQ(made, 1);
  EXPECT_NE(&p.pool.data_for(5461), &first) << "slot 5461 has another master";
  EXPECT_EQ(made, 2);
  EXPECT_EQ(p.pool.data_for(5461).options().host, "master-number-two.cluster.example");
}

TEST(ClusterNodePool, DataForAnExistingConnectionDoesNotWaitForThePoolsMutex) {
  Pool p;
  net::Connection& first = p.pool.data_for(0);  // master one's connection exists
  // While the pool makes master two's connection (the Connector runs under
  // the pool's mutex), another thread looks up slot 0: it must get its
  // answer without that mutex, so the Connector sees the answer arrive.
  std::promise<net::Connection*> looked_up;
  auto answer = looked_up.get_future();
  std::thread reader;
  bool answered_while_held = false;
  p.connector.on_data = [&] {
    reader = std::thread([&] { looked_up.set_value(&p.pool.data_for(0)); });
    // Bounded: a lookup that needs the mutex cannot finish before this returns.
    answered_while_held = answer.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  };
  p.pool.data_for(5461);
  reader.join();
  EXPECT_TRUE(answered_while_held) << "the lookup waited for the mutex held by the Connector";
  EXPECT_EQ(answer.get(), &first);
}

TEST(ClusterNodePool, AMovedSlotIsLookedUpAtItsNewMasterAtOnce) {
  Pool p;
  net::Connection& one = p.pool.data_for(100);
  ClusterRedirect moved;
  moved.kind = ClusterRedirect::Kind::moved;
  moved.slot = 100;
  moved.host = "master-number-three.cluster.example";
  moved.port = 7002;
  net::Connection* three = p.pool.follow(moved);
  ASSERT_NE(three, nullptr);
  EXPECT_EQ(&p.pool.data_for(100), three);
  EXPECT_NE(three, &one);
  EXPECT_EQ(&p.pool.data_for(101), &one) << "only the moved slot changed master";
}

}  // namespace
}  // namespace distlock::topology
