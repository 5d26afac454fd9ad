// A real ZooKeeper ensemble for the ZooKeeper backend's tests: N (default 3)
// `java ... org.apache.zookeeper.server.quorum.QuorumPeerMain <zoo.cfg>`
// processes from Debian's zookeeper package (/usr/share/java/zookeeper.jar,
// java from default-jre-headless), started with test::ChildProcess (so they
// die with the test binary, see process.hpp).
//
// Guarantees:
//   - every port is a free 127.0.0.1 port (pick_free_ports: never 2181, 2888,
//     3888 or 8080): each node has its own client, quorum and election port,
//     listens on 127.0.0.1 only (clientPortAddress, server.i=127.0.0.1:...,
//     java.net.preferIPv4Stack) and runs no admin server;
//   - every node has its own directory under one scratch directory
//     /tmp/distlock-zk-XXXXXX (make_temp_dir): node<i>/zoo.cfg,
//     node<i>/data (myid and the transaction log), node<i>/tmp (the JVM's
//     java.io.tmpdir) and node<i>/zookeeper.log (the JVM's stdout and stderr:
//     INFO and up through slf4j-simple, without a line per four-letter word);
//     the JVM writes no hsperfdata file;
//   - zoo.cfg allows every four-letter word, any number of connections from
//     127.0.0.1 (maxClientCnxns=0), and skips the fsync per transaction
//     (forceSync=no: a killed node's writes survive in the page cache);
//   - the constructor returns only when the ensemble serves: exactly one node
//     answers the four-letter word srvr with "Mode: leader" and every other
//     node with "Mode: follower";
//   - nodes are signalled by pid only; the destructor SIGKILLs and reaps
//     every node and removes the scratch directory.
//
// Node indexes run from 0 to node_count() - 1 (node i has myid i + 1); a bad
// index throws std::out_of_range. Not thread-safe: use from one thread, except
// that the const methods (four_letter, mode, leader, wait_until_serving, ...)
// may run concurrently with each other.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "support/process.hpp"

namespace distlock::test {

struct ZooKeeperEnsembleOptions {
  // How many servers (odd for a useful quorum). At least 1; a single node
  // still runs as a quorum peer (standaloneEnabled=false), so it reports
  // "Mode: leader".
  int nodes = 3;
  // tickTime: ZooKeeper's unit of time (heartbeats, the limits below).
  std::chrono::milliseconds tick_time{200};
  // minSessionTimeout and maxSessionTimeout: a client's requested session
  // timeout is clamped to this range, so tests can pick short or long ones.
  std::chrono::milliseconds min_session_timeout{400};
  std::chrono::milliseconds max_session_timeout{60'000};
  // initLimit and syncLimit, in ticks: how long a follower may take to sync
  // with a new leader (4 s by default), and how long a follower may be silent
  // before the leader drops it, or the leader before a follower leaves it
  // (2 s by default: the followers leave a SIGSTOPped leader after that).
  int init_limit = 20;
  int sync_limit = 10;
  // Extra zoo.cfg lines "name=value", written after all the others (so they
  // override them), for example {"globalOutstandingLimit", "10"}.
  std::vector<std::pair<std::string, std::string>> config;
};

// The default options with `n` nodes (a 1-node ensemble starts fastest).
inline ZooKeeperEnsembleOptions with_nodes(int n) {
  ZooKeeperEnsembleOptions o;
  o.nodes = n;
  return o;
}

// See the header comment.
class ZooKeeperEnsemble {
 public:
  // Starts the nodes and returns once the ensemble serves (one leader, the
  // others followers, as srvr reports them). Retries with new ports (up to 3
  // times) when a node could not bind one of its ports because another
  // process took it first. Throws std::invalid_argument for options.nodes < 1;
  // std::runtime_error naming the Debian packages (zookeeper,
  // default-jre-headless) when java or /usr/share/java/zookeeper.jar is
  // missing; std::runtime_error with every node's log tail when a node exits
  // or the ensemble does not serve within 60 s. Every node already started
  // is then killed and the scratch directory removed.
  explicit ZooKeeperEnsemble(ZooKeeperEnsembleOptions options = {});
  // SIGKILLs (a stopped node too) and reaps every node by pid, and removes
  // the scratch directory. Never throws. In a fork()ed copy of the test binary
  // (a gtest "fast" death test) it leaves the nodes alone: they belong to the
  // parent.
  ~ZooKeeperEnsemble();

  ZooKeeperEnsemble(const ZooKeeperEnsemble&) = delete;
  ZooKeeperEnsemble& operator=(const ZooKeeperEnsemble&) = delete;

  // "127.0.0.1:p1,127.0.0.1:p2,..." with every node's client port, in index
  // order (killed nodes included): the connect string for a client.
  std::string connect_string() const;
  // options.nodes.
  int node_count() const { return static_cast<int>(nodes_.size()); }
  // Node i's client port (srvr and clients), the same for the object's life.
  std::uint16_t client_port(int i) const;
  // Node i's quorum port (only a leader listens on it; followers connect).
  std::uint16_t quorum_port(int i) const;
  // Node i's leader-election port (every running node listens on it).
  std::uint16_t election_port(int i) const;
  // The pid of node i's current (or last) java process.
  pid_t pid(int i) const;
  // True while node i's process is alive (a stopped node is running).
  bool running(int i) const;
  // The scratch directory holding every node's directory.
  const std::string& dir() const { return dir_; }
  // Node i's directory: zoo.cfg, data/, tmp/, zookeeper.log.
  std::string node_dir(int i) const;
  // Node i's log: its JVM's stdout and stderr, over all its restarts.
  std::string log_path(int i) const;

  // Sends the four-letter word `word` (srvr, mntr, ruok, ...) to node i's
  // client port and returns the whole reply (read until the server closes
  // the connection). Throws std::runtime_error if the connection fails or
  // the reply has not ended within `bound` (for example a stopped node).
  std::string four_letter(int i,
                          const std::string& word,
                          std::chrono::milliseconds bound = std::chrono::seconds(5)) const;
  // Node i's role as the "Mode:" line of its srvr reply names it: "leader"
  // or "follower" (this fixture configures no observer); "" when it is not
  // serving: not running (no connection is tried), stopped or electing (no
  // Mode line), or no reply within 2 s. Throws only std::out_of_range.
  std::string mode(int i) const;
  // The index of the current leader: polls until exactly one node not
  // killed or stopped reports "leader" (the others are not checked; see
  // wait_until_serving). Throws std::runtime_error with the logs if there is
  // none within `bound`.
  int leader(std::chrono::milliseconds bound = std::chrono::seconds(30)) const;
  // zk_watch_count from node i's mntr: the watches its clients have set on
  // it. Throws std::runtime_error if node i does not answer mntr with it (for
  // example while it is not serving).
  long long watch_count(int i) const;

  // SIGKILL node i and reap it. Does nothing if it is not running.
  void kill(int i);
  // SIGSTOP node i; returns once it is stopped. The kernel still accepts
  // connections on its ports, but it answers nothing. Throws std::logic_error
  // if it is not running, std::runtime_error if it does not stop within 5 s.
  void stop(int i);
  // SIGCONT node i after stop(i); it answers again (it may have to rejoin
  // the ensemble first). Throws std::logic_error if it is not running.
  void resume(int i);
  // Starts killed node i again on the same ports with the same data
  // directory, and waits until the ensemble serves again with node i as a
  // follower or the leader (wait_until_serving). Throws std::logic_error if
  // it is running, std::runtime_error with the logs if it exits (for
  // example a port was taken meanwhile) or does not serve within `bound`.
  void restart(int i, std::chrono::milliseconds bound = std::chrono::seconds(60));
  // Waits until every node neither killed nor stopped reports "leader" or
  // "follower" and exactly one of them "leader". Throws std::runtime_error
  // with the logs if this does not happen within `bound`.
  void wait_until_serving(std::chrono::milliseconds bound = std::chrono::seconds(60)) const;

  // The last `lines` lines of every node's log, each under a header naming
  // the node, its pid and ports, for failure messages.
  std::string logs(std::size_t lines = 20) const;

 private:
  struct Node {
    std::uint16_t client_port = 0;
    std::uint16_t quorum_port = 0;
    std::uint16_t election_port = 0;
    ChildProcess process;
    bool stopped = false;           // SIGSTOPped by stop(), until resume()
    std::uintmax_t log_offset = 0;  // the log's size when the process started
  };
  const Node& node(int i) const;
  Node& node(int i);
  void write_config(int i) const;
  void launch(int i);
  // Starts every node; false if a node could not bind a port (retry).
  bool start_all();
  bool serving() const;
  // True if a node's log since its start says a port was in use.
  bool bind_failed() const;
  // " 0=leader 1=follower 2=not-running ...", for failure messages.
  std::string modes() const;
  void kill_all() noexcept;

  ZooKeeperEnsembleOptions options_;
  std::string java_;
  std::string dir_;
  std::vector<Node> nodes_;
  pid_t owner_;  // the process that created this object
};

// Opens a TCP connection to 127.0.0.1:port, writes `word` and returns what
// the server sends until it closes the connection. Throws std::runtime_error
// if the connection is refused or fails, or the reply has not ended within
// `bound`.
std::string zookeeper_four_letter(std::uint16_t port,
                                  const std::string& word,
                                  std::chrono::milliseconds bound);

}  // namespace distlock::test
