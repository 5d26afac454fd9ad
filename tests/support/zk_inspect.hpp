// A test's own view of a ZooKeeper ensemble, through the C client's
// synchronous calls on a session of its own: what nodes a lock directory
// holds, which paths are watched, and deleting a node as an operator would.
// For asserting on the server's state, never on distlock's.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

typedef struct _zhandle zhandle_t;  // NOLINT: the C client's own name

namespace distlock::test {

class ZkInspector {
 public:
  // Connects to `connect_string` (as ZooKeeperEnsemble::connect_string()
  // gives it); throws std::runtime_error if no session is up within 30 s.
  explicit ZkInspector(const std::string& connect_string);
  ~ZkInspector();
  ZkInspector(const ZkInspector&) = delete;
  ZkInspector& operator=(const ZkInspector&) = delete;

  // The children of `path`, sorted by name; empty when it does not exist.
  // Throws std::runtime_error on any other failure.
  std::vector<std::string> children(const std::string& path);
  // The lock nodes of `dir` in queue order (sorted by the sequence after
  // the last "lock-").
  std::vector<std::string> queue(const std::string& dir);
  // Whether `path` exists.
  bool exists(const std::string& path);
  // The data of `path`; nullopt when it does not exist.
  std::optional<std::string> data(const std::string& path);
  // The czxid of `path`; nullopt when it does not exist.
  std::optional<std::int64_t> czxid(const std::string& path);
  // Deletes `path` (any version); false when it did not exist.
  bool remove(const std::string& path);

 private:
  zhandle_t* zh_ = nullptr;
};

// The paths node `i`'s wchp reply lists with the number of sessions
// watching each: parsed from `wchp` output ("/path\n\t0x<session>\n...").
std::vector<std::pair<std::string, int>> parse_wchp(const std::string& reply);

}  // namespace distlock::test
