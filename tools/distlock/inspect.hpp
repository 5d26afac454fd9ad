// Reading a primitive's state straight from its keys (the layouts in
// docs/lock.md, fair_lock.md, read_write_lock.md, simple_lock.md,
// semaphore.md, latch.md, rate_limiter.md), for status, list and top. A
// ZooKeeper lock is read by zk_reader.hpp into the same Entry.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "distlock/client.hpp"

namespace distlock::cli {

struct Holder {
  // Owner id ("<client-uuid>:<thread or token>"), a simple lock's token, or
  // a semaphore holder id.
  std::string id;
  std::int64_t count = 0;  // hold count / permits held
  std::string role;        // "write" or "read" for a read-write lock, else ""
};

struct Entry {
  std::string name;
  // lock, fair_lock, read_write_lock, simple_lock, semaphore, latch,
  // semaphore_or_latch (an integer string with no holders: both layouts are
  // the same), rate_limiter, or none (no key).
  std::string kind = "none";
  std::vector<Holder> holders;
  // PTTL of the main key: nullopt when absent, -1 when it has no expiry.
  std::optional<std::int64_t> ttl_ms;
  // Processes subscribed to the unlock channel (each waiting process
  // subscribes once), or the fair lock's queue length.
  std::optional<std::int64_t> waiters;
  std::vector<std::string> queue;               // fair lock: waiting owners, first first
  std::optional<std::int64_t> fencing_counter;  // last fencing token handed out
  std::optional<std::int64_t> value;            // semaphore: available; latch: count
  std::string mode;                             // read-write lock: "read" / "write"
  std::vector<std::pair<std::string, std::string>> fields;  // rate limiter's hash
  // ZooKeeper (zk_reader.hpp): the lock directory (the chroot included), ""
  // for Redis; the holder's lock node and its czxid (the fencing token it
  // holds). Its queue lists the waiters' owners, first first.
  std::string path;
  std::string holder_node;
  std::optional<std::int64_t> holder_czxid;
};

// The state of `name`. Throws Error when Redis fails.
Entry inspect_name(Client& client, const std::string& name);
// As inspect_name for a key found by SCAN; nullopt when the key is one of a
// primitive's auxiliary keys (queues, fencing counters, holder sets) or does
// not look like any distlock primitive.
std::optional<Entry> inspect_key(Client& client, const std::string& key);
// Every key matching `pattern`, via SCAN MATCH/COUNT (never KEYS), sorted,
// without duplicates, on every master: the one master of a standalone or
// Sentinel deployment; under Cluster, each master that CLUSTER NODES lists
// with slots, through a connection of its own (the Client's credentials and
// TLS), kept for the next call (top scans every interval). Throws Error when
// Redis fails.
class KeyScanner {
 public:
  explicit KeyScanner(Client& client) : client_(client) {}
  std::vector<std::string> keys(const std::string& pattern);

 private:
  Client& client_;
  std::map<std::string, Client> nodes_;  // "host:port" -> its connection
};

// JSON text of a string (quoted, escaped) and of an entry.
std::string json_string(const std::string& s);
std::string to_json(const Entry& e);
// A human-readable, multi-line description.
std::string to_text(const Entry& e);
// list's line: NAME<TAB>KIND<TAB>FIRST-HOLDER ("-" when none), and for a
// ZooKeeper lock <TAB>WAITERS.
std::string list_line(const Entry& e);

}  // namespace distlock::cli
