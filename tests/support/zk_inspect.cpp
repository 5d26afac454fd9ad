#include "support/zk_inspect.hpp"

// The synchronous calls of the multi-threaded C client.
#ifndef THREADED
#define THREADED
#endif
#include <zookeeper/zookeeper.h>

#include "backend/zk_lock.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace distlock::test {
namespace {

void quiet(const char* /*message*/) {}

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

}  // namespace

ZkInspector::ZkInspector(const std::string& connect_string) {
  static Connected connected;  // one per process is enough: only "up" is read
  {
    std::lock_guard lock(connected.mutex);
    connected.up = false;
  }
  zh_ = zookeeper_init2(connect_string.c_str(), watcher, 30000, nullptr, &connected, 0, quiet);
  if (zh_ == nullptr)
    throw std::runtime_error("ZkInspector: zookeeper_init2 refused " + connect_string);
  // The session is up once a synchronous call succeeds; wait for it.
  for (int i = 0; i < 300; ++i) {
    if (zoo_state(zh_) == ZOO_CONNECTED_STATE) return;
    std::unique_lock lock(connected.mutex);
    connected.cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return connected.up; });
  }
  zookeeper_close(zh_);
  throw std::runtime_error("ZkInspector: no session with " + connect_string + " within 30 s");
}

ZkInspector::~ZkInspector() {
  if (zh_ != nullptr) zookeeper_close(zh_);
}

std::vector<std::string> ZkInspector::children(const std::string& path) {
  String_vector names{};
  const int rc = zoo_get_children(zh_, path.c_str(), 0, &names);
  if (rc == ZNONODE) return {};
  if (rc != ZOK) throw std::runtime_error("ZkInspector: children of " + path + ": " + zerror(rc));
  std::vector<std::string> out;
  for (int i = 0; i < names.count; ++i) out.emplace_back(names.data[i]);
  deallocate_String_vector(&names);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> ZkInspector::queue(const std::string& dir) {
  return backend::zk::queue_of(children(dir));
}

bool ZkInspector::exists(const std::string& path) {
  Stat stat{};
  const int rc = zoo_exists(zh_, path.c_str(), 0, &stat);
  if (rc == ZNONODE) return false;
  if (rc != ZOK) throw std::runtime_error("ZkInspector: exists " + path + ": " + zerror(rc));
  return true;
}

std::optional<std::string> ZkInspector::data(const std::string& path) {
  std::string buffer(4096, '\0');
  int length = static_cast<int>(buffer.size());
  Stat stat{};
  const int rc = zoo_get(zh_, path.c_str(), 0, buffer.data(), &length, &stat);
  if (rc == ZNONODE) return std::nullopt;
  if (rc != ZOK) throw std::runtime_error("ZkInspector: get " + path + ": " + zerror(rc));
  buffer.resize(length < 0 ? 0 : static_cast<std::size_t>(length));
  return buffer;
}

std::optional<std::int64_t> ZkInspector::czxid(const std::string& path) {
  Stat stat{};
  const int rc = zoo_exists(zh_, path.c_str(), 0, &stat);
  if (rc == ZNONODE) return std::nullopt;
  if (rc != ZOK) throw std::runtime_error("ZkInspector: exists " + path + ": " + zerror(rc));
  return stat.czxid;
}

bool ZkInspector::remove(const std::string& path) {
  const int rc = zoo_delete(zh_, path.c_str(), -1);
  if (rc == ZNONODE) return false;
  if (rc != ZOK) throw std::runtime_error("ZkInspector: delete " + path + ": " + zerror(rc));
  return true;
}

std::vector<std::pair<std::string, int>> parse_wchp(const std::string& reply) {
  std::vector<std::pair<std::string, int>> out;
  std::istringstream in(reply);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line.front() == '/') {
      out.emplace_back(line, 0);
    } else if (!out.empty() && line.find("0x") != std::string::npos) {
      ++out.back().second;
    }
  }
  return out;
}

}  // namespace distlock::test
