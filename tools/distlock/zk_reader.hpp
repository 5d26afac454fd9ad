// status and list over ZooKeeper: the lock directories read straight from
// the ensemble, by the layout of src/backend/zk_lock.hpp (Curator's
// InterProcessMutex): a lock `name` is the directory <chroot>/<name>, its
// queue the children "_c_<uuid>-lock-<10-digit sequence>" in sequence order,
// the first the holder; a node's data is its owner id, its czxid the
// fencing token it holds. The public API has no such reads, so the tool
// opens a session of its own with the C client's synchronous calls.
#pragma once

#include <string>
#include <vector>

#include "distlock/client_options.hpp"
#include "inspect.hpp"

typedef struct _zhandle zhandle_t;  // NOLINT: the C client's own name

namespace distlock::cli {

// How many levels below where it starts list looks for lock directories.
inline constexpr int kZkListDepth = 8;

class ZkReader {
 public:
  // Opens a session with `options`' servers (seeds), with its digest
  // credentials. Throws Error(connection_failed) naming the servers (never
  // the password) when no session is up within options.connect_timeout,
  // Error(invalid_argument) when the C client refuses the server list.
  explicit ZkReader(const ClientOptions& options);
  // Closes the session.
  ~ZkReader();
  ZkReader(const ZkReader&) = delete;
  ZkReader& operator=(const ZkReader&) = delete;

  // The lock `name` (as `run` takes it: a path relative to the chroot).
  // kind "lock" with its holder (id = owner, node, czxid), waiters (the
  // queue's length - 1) and queue (the waiters' owners, first first), or
  // "none" when the directory has no lock node. Throws Error:
  // invalid_argument for a name that is no ZooKeeper path; auth_failed,
  // connection_lost or server_error when a read fails.
  Entry lock_entry(const std::string& name);
  // Every lock directory with a lock node whose name (relative to the
  // chroot, no leading '/') matches `pattern`, sorted by name. `pattern` is
  // a glob (fnmatch: '*' matches '/' too) whose walk starts at its literal
  // directory prefix ("jobs/*" under "jobs"); a pattern without '*', '?',
  // '[' or '\' is a prefix: that name and every name under it. At most
  // kZkListDepth levels below the start. Throws as lock_entry.
  std::vector<Entry> locks(const std::string& pattern);

 private:
  // The children of `path`; false when it does not exist.
  bool children(const std::string& path, std::vector<std::string>& out);
  // `path`'s data and czxid; false when it does not exist.
  bool data(const std::string& path, std::string& out, std::int64_t& czxid);
  // The entry of the directory `dir` from its `kids`; false when a node of
  // its queue went meanwhile (read again).
  bool read_queue(const std::string& dir, const std::vector<std::string>& kids, Entry& e);
  Entry entry_of(const std::string& name, const std::string& dir);
  void walk(const std::string& dir,
            const std::string& name,
            int depth,
            const std::string& pattern,
            std::vector<Entry>& out);

  const std::string chroot_;
  zhandle_t* zh_ = nullptr;
};

// Whether a ZooKeeper lock's `name` (relative, no leading '/') matches
// list's `pattern` (as ZkReader::locks says). No I/O.
bool zk_name_matches(const std::string& pattern, const std::string& name);
// Where list's walk starts for `pattern`: its literal directory prefix
// ("" for the chroot itself). No I/O.
std::string zk_walk_start(const std::string& pattern);

}  // namespace distlock::cli
