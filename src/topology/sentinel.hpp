// A master found and followed through Redis Sentinel: like
// Standalone, one data connection and one pub/sub connection to the master,
// but the master's address comes from the sentinels (ClientOptions::seeds,
// sentinel_master, sentinel_username/password) and changes on a failover.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "net/connection.hpp"
#include "topology/topology.hpp"

namespace distlock::topology {

// Discovery (connect()): asks each sentinel in turn
// `SENTINEL GET-MASTER-ADDR-BY-NAME <sentinel_master>` (with the sentinel
// credentials, no SELECT), checks with ROLE (data credentials) that the node
// it names is a master, then connects the data connection there. The first
// sentinel that gives a usable master wins.
//
// Following (after connect(), on the I/O thread): one pub/sub connection to
// a sentinel, subscribed to `+switch-master`, which asks the master's address
// again every time it (re)connects (a switch may have happened while it was
// down); when it drops or cannot connect, its next attempt goes to the next
// sentinel. The master is also asked for again when the data or pub/sub
// connection cannot reconnect (the master died) and when the data connection
// gets a READONLY reply (a demoted master: the old master stays writable for
// seconds after a failover, then becomes a replica). A new address moves the
// data and pub/sub connections there (net::Connection::retarget): requests
// in flight complete with connection_lost (never re-sent; an acquire whose
// reply is lost is undone), and the reconnect re-preloads the scripts,
// resubscribes the waiters and checks every lease, as after any reconnect
// (the Client's on_connected handlers).
//
// READONLY: a write, script call or not, answered READONLY did not run. The
// data connection reports it as errc::connection_lost (see
// net::Connection::Handlers::on_readonly), the error its callers already
// treat as "no answer": an acquire fails with connection_lost and is undone,
// a release is repeated in the background until it is confirmed, a renewal
// changes nothing (the next one, after the move, counts). So a lock() that
// meets the window of a failover fails with connection_lost rather than
// retrying by itself, exactly as when the connection drops.
//
// What this does not do: a new address from a sentinel is believed without a
// ROLE check (the sentinels announce a switch only after the promotion), and
// an address asked for while sentinels disagree may briefly be the old one;
// the READONLY path corrects that. Writes acknowledged by a master that dies
// before replicating them are lost: the holder is told when the reconnect
// check finds its key gone (min_replicas_acked narrows this window).
//
// Thread safety: as Topology. connect() must not run on the I/O thread.
class Sentinel final : public Topology {
 public:
  // No I/O. Handlers as Standalone's; the data handlers get on_readonly and
  // on_connect_failed added (they must not set them). Throws
  // Error(invalid_argument) for an empty sentinel_master or a seed without
  // host or port (validate() has checked that seeds is not empty).
  Sentinel(asio::io_context& io,
           const ClientOptions& options,
           asio::ssl::context* tls,
           net::Connection::Handlers data_handlers,
           net::Connection::Handlers subscriber_handlers);
  ~Sentinel() override;

  net::Connection& data_for(std::string_view) override { return *data_; }
  net::Connection& subscriber_for(std::string_view) override;
  std::uint64_t batch_group(std::string_view) const override { return 0; }
  // Discovers the master and connects to it, within about connect_timeout
  // (the sentinels share it; the data connection's own connect may add up
  // to one more connect_timeout). Throws Error: connection_failed when no
  // sentinel gives a usable master, the message naming every sentinel
  // tried and what each said (unreachable; "knows no master named 'x'";
  // names a node that is not a master) and never a password; auth_failed
  // when a sentinel or the master refused the credentials. Then starts
  // following.
  void connect() override;
  // Starts following without blocking: the data connection is started at
  // the first address a sentinel gives (no ROLE check; the READONLY path
  // corrects a wrong one). Calls queue meanwhile.
  void connect_in_background() override;
  void close() override;

 private:
  struct Found;
  // Blocking discovery through sentinel `index` (caller's thread).
  Found discover_through(std::size_t index, net::Clock::time_point deadline);
  // I/O thread from here on.
  void watch_from(std::size_t index);
  void on_watch_connected();
  void on_switch_message(const Value& push);
  void rediscover();
  void ask(std::size_t tries_left);
  void follow(std::string host, std::uint16_t port);
  ClientOptions sentinel_options(std::size_t index) const;
  std::string sentinel_name(std::size_t index) const;

  asio::io_context& io_;
  const ClientOptions& options_;
  asio::ssl::context* tls_;
  std::shared_ptr<net::Connection> data_;
  std::shared_ptr<net::Connection> subscriber_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> background_{false};

  std::mutex mutex_;
  ClientOptions::Endpoint master_;  // the address the connections point at

  // I/O thread only.
  std::shared_ptr<net::Connection> watch_;  // pub/sub to a sentinel
  std::size_t watch_index_ = 0;
  std::shared_ptr<net::Connection> asking_;  // a one-off address query
  std::size_t ask_index_ = 0;
};

}  // namespace distlock::topology
