#include "zk_reader.hpp"

// The synchronous calls of the multi-threaded C client (the library links
// libzookeeper_mt).
#ifndef THREADED
#define THREADED
#endif
#include <fnmatch.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "backend/zk_lock.hpp"
#include "backend/zk_session.hpp"
#include "distlock/error.hpp"

namespace distlock::cli {
namespace {

// The C client's log lines would go to stderr; every failure reaches the
// user as a message of distlock's instead.
void no_log(const char* /*message*/) {}

// Set by the session watcher, read by the constructor only.
struct Connected {
  std::mutex mutex;
  std::condition_variable cv;
  bool up = false;
};

void watcher(zhandle_t* /*zh*/, int type, int state, const char* /*path*/, void* context) {
  if (type != ZOO_SESSION_EVENT || state != ZOO_CONNECTED_STATE) return;
  auto* c = static_cast<Connected*>(context);
  std::lock_guard lock(c->mutex);
  c->up = true;
  c->cv.notify_all();
}

[[noreturn]] void fail(int rc, const std::string& what) {
  if (rc == ZNOAUTH) {
    throw Error(errc::auth_failed, "ZooKeeper refused " + what +
                                       ": no permission (ZNOAUTH); check the URI's credentials "
                                       "and the node's ACL");
  }
  if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED ||
      rc == ZINVALIDSTATE) {
    throw Error(errc::connection_lost,
                std::string("ZooKeeper: the connection dropped during ") + what);
  }
  if (rc == ZBADARGUMENTS) {
    throw Error(errc::invalid_argument, "ZooKeeper: " + what + ": not a valid path");
  }
  throw Error(errc::server_error, "ZooKeeper: " + what + " failed: " + zerror(rc));
}

std::string join(const std::string& dir, const std::string& child) {
  return dir == "/" ? "/" + child : dir + "/" + child;
}

bool has_glob(const std::string& pattern) {
  return pattern.find_first_of("*?[\\") != std::string::npos;
}

std::string without_leading_slash(const std::string& s) {
  return !s.empty() && s.front() == '/' ? s.substr(1) : s;
}

}  // namespace

bool zk_name_matches(const std::string& pattern, const std::string& name) {
  const std::string p = without_leading_slash(pattern);
  if (has_glob(p)) return fnmatch(p.c_str(), name.c_str(), 0) == 0;
  return p.empty() || name == p || name.starts_with(p + "/");
}

std::string zk_walk_start(const std::string& pattern) {
  std::string p = without_leading_slash(pattern);
  if (!has_glob(p)) return p;
  p = p.substr(0, p.find_first_of("*?[\\"));
  const auto slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

ZkReader::ZkReader(const ClientOptions& options) : chroot_(options.chroot) {
  static Connected connected;  // one reader per process
  {
    std::lock_guard lock(connected.mutex);
    connected.up = false;
  }
  const std::string hosts = backend::zk::host_list(options);
  zh_ = zookeeper_init2(hosts.c_str(), watcher, static_cast<int>(options.session_timeout.count()),
                        nullptr, &connected, 0, no_log);
  if (zh_ == nullptr) {
    throw Error(errc::invalid_argument,
                "ZooKeeper: the client library refused the server list '" + hosts + "'");
  }
  if (!options.username.empty()) {
    const std::string cert = options.username + ":" + options.password;
    // Sent before any read on the same connection; digest credentials are
    // never refused here (they are checked against ACLs).
    zoo_add_auth(zh_, "digest", cert.data(), static_cast<int>(cert.size()), nullptr, nullptr);
  }
  std::unique_lock lock(connected.mutex);
  if (connected.cv.wait_for(lock, options.connect_timeout, [] { return connected.up; })) return;
  lock.unlock();
  zookeeper_close(zh_);
  zh_ = nullptr;
  throw Error(errc::connection_failed,
              "ZooKeeper: no server of " + hosts + " started a session within " +
                  std::to_string(options.connect_timeout.count()) + " ms (connect_timeout)");
}

ZkReader::~ZkReader() {
  if (zh_ != nullptr) zookeeper_close(zh_);
}

bool ZkReader::children(const std::string& path, std::vector<std::string>& out) {
  out.clear();
  String_vector names{};
  const int rc = zoo_get_children(zh_, path.c_str(), 0, &names);
  if (rc == ZNONODE) return false;
  if (rc != ZOK) fail(rc, "listing the children of '" + path + "'");
  for (int i = 0; i < names.count; ++i) out.emplace_back(names.data[i]);
  deallocate_String_vector(&names);
  std::sort(out.begin(), out.end());
  return true;
}

bool ZkReader::data(const std::string& path, std::string& out, std::int64_t& czxid) {
  // Owner ids are short; longer data (not distlock's) is shown cut at 4 KiB.
  out.assign(4096, '\0');
  int length = static_cast<int>(out.size());
  Stat stat{};
  const int rc = zoo_get(zh_, path.c_str(), 0, out.data(), &length, &stat);
  if (rc == ZNONODE) return false;
  if (rc != ZOK) fail(rc, "reading '" + path + "'");
  out.resize(length < 0 ? 0 : static_cast<std::size_t>(length));
  czxid = stat.czxid;
  return true;
}

bool ZkReader::read_queue(const std::string& dir, const std::vector<std::string>& kids, Entry& e) {
  const std::vector<std::string> queue = backend::zk::queue_of(kids);
  if (queue.empty()) return true;  // kind stays "none"
  std::string owner;
  std::int64_t czxid = 0;
  if (!data(join(dir, queue.front()), owner, czxid)) return false;  // released meanwhile
  e.kind = "lock";
  e.holders.push_back({owner, 1, ""});
  e.holder_node = queue.front();
  e.holder_czxid = czxid;
  for (std::size_t i = 1; i < queue.size(); ++i) {
    std::int64_t ignored = 0;
    // A waiter that gave up meanwhile is left out.
    if (data(join(dir, queue[i]), owner, ignored)) e.queue.push_back(owner);
  }
  e.waiters = static_cast<std::int64_t>(e.queue.size());
  return true;
}

Entry ZkReader::entry_of(const std::string& name, const std::string& dir) {
  // A holder that releases between the listing and the read of its node:
  // list again (the next one holds now).
  for (int attempt = 0;; ++attempt) {
    Entry e;
    e.name = name;
    e.path = dir;
    std::vector<std::string> kids;
    if (!children(dir, kids) || read_queue(dir, kids, e) || attempt == 8) return e;
  }
}

Entry ZkReader::lock_entry(const std::string& name) {
  return entry_of(name, backend::zk::lock_directory(chroot_, name));
}

void ZkReader::walk(const std::string& dir,
                    const std::string& name,
                    int depth,
                    const std::string& pattern,
                    std::vector<Entry>& out) {
  std::vector<std::string> kids;
  if (!children(dir, kids)) return;  // deleted meanwhile (an empty container)
  if (!name.empty() && zk_name_matches(pattern, name) && !backend::zk::queue_of(kids).empty()) {
    Entry e = entry_of(name, dir);
    if (e.kind != "none") out.push_back(std::move(e));
  }
  if (depth >= kZkListDepth) return;
  for (const std::string& kid : kids) {
    // Lock nodes are ephemeral (no children); /zookeeper is the server's own.
    if (!backend::zk::sequence_of(kid).empty()) continue;
    const std::string path = join(dir, kid);
    if (path == "/zookeeper") continue;
    walk(path, name.empty() ? kid : name + "/" + kid, depth + 1, pattern, out);
  }
}

std::vector<Entry> ZkReader::locks(const std::string& pattern) {
  const std::string start = zk_walk_start(pattern);
  // The chroot itself ("/" without one), or the start's directory (checked
  // as a lock name is).
  const std::string dir = start.empty() ? (chroot_.empty() ? "/" : chroot_)
                                        : backend::zk::lock_directory(chroot_, start);
  std::vector<Entry> out;
  walk(dir, start, 0, pattern, out);
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return out;
}

}  // namespace distlock::cli
