#include "inspect.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

#include "sync/key_layout.hpp"

namespace distlock::cli {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

std::optional<std::int64_t> to_int(const std::string& s) {
  std::int64_t v = 0;
  const auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (err != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

Fields read_hash(Client& client, const std::string& key) {
  Fields out;
  // Keep the reply: as_array() refers into it.
  const Value reply = client.command("HGETALL", key);
  const auto& items = reply.as_array();
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    out.emplace_back(items[i].as_string(), items[i + 1].as_string());
  }
  return out;
}

bool has_field(const Fields& fields, const std::string& name) {
  return std::any_of(fields.begin(), fields.end(), [&](const auto& f) { return f.first == name; });
}

bool exists(Client& client, const std::string& key) {
  return client.command("EXISTS", key).as_integer() > 0;
}

std::int64_t subscribers(Client& client, const std::string& channel) {
  const Value reply = client.command("PUBSUB", "NUMSUB", channel);
  const auto& items = reply.as_array();
  return items.size() == 2 ? items[1].as_integer() : 0;
}

bool is_token(const std::string& s) {
  return s.size() == 32 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// A lock hash (plain or fair): owner -> hold count. False when a value is
// not a count (the hash is not a lock's).
bool read_lock_hash(Client& client, Entry& e, const Fields& fields) {
  for (const auto& [owner, count] : fields) {
    const auto n = to_int(count);
    if (!n) return false;
    e.holders.push_back({owner, *n, ""});
  }
  const std::string queue = sync::fair_queue_key(e.name);
  if (exists(client, queue) || exists(client, sync::fair_timeout_key(e.name))) {
    e.kind = "fair_lock";
    const Value waiting = client.command("LRANGE", queue, 0, -1);
    for (const auto& v : waiting.as_array()) {
      e.queue.push_back(v.as_string());
    }
    e.waiters = static_cast<std::int64_t>(e.queue.size());
  } else {
    e.kind = "lock";
    e.waiters = subscribers(client, sync::lock_channel(e.name));
  }
  return true;
}

void read_rw_hash(Client& client, Entry& e, const Fields& fields) {
  e.kind = "read_write_lock";
  for (const auto& [field, value] : fields) {
    if (field == "mode") {
      e.mode = value;
      continue;
    }
    const std::string suffix = ":write";
    const bool writer = field.size() > suffix.size() && field.ends_with(suffix);
    e.holders.push_back({writer ? field.substr(0, field.size() - suffix.size()) : field,
                         to_int(value).value_or(0), writer ? "write" : "read"});
  }
  e.waiters = subscribers(client, sync::rw_channel(e.name));
}

void read_hash_entry(Client& client, Entry& e) {
  const Fields fields = read_hash(client, e.name);
  if (has_field(fields, "mode")) {
    read_rw_hash(client, e, fields);
  } else if (has_field(fields, "rate") && has_field(fields, "interval")) {
    e.kind = "rate_limiter";
    e.fields = fields;
  } else if (!read_lock_hash(client, e, fields)) {
    e.kind = "other";
    e.holders.clear();
  }
}

// The semaphore's holders (docs/semaphore.md, Layout): each member of the
// holders zset holds its field of the counts hash, or 1 without one; each
// field of the earlier layout's hash holds its value.
void read_semaphore_holders(Client& client, Entry& e) {
  const Fields counts = read_hash(client, sync::semaphore_counts_key(e.name));
  const Value members = client.command("ZRANGE", sync::semaphore_holders_key(e.name), 0, -1);
  for (const Value& m : members.as_array()) {
    const std::string id = m.as_string();
    const auto f =
        std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == id; });
    e.holders.push_back({id, f == counts.end() ? 1 : to_int(f->second).value_or(0), ""});
  }
  for (const auto& [id, count] : read_hash(client, sync::semaphore_v1_holders_key(e.name))) {
    e.holders.push_back({id, to_int(count).value_or(0), ""});
  }
}

void read_counter(Client& client, Entry& e, std::int64_t value) {
  e.value = value;
  const std::string semaphore_channel = sync::semaphore_channel(e.name);
  if (exists(client, sync::semaphore_holders_key(e.name)) ||
      exists(client, sync::semaphore_v1_leases_key(e.name)) ||
      exists(client, sync::semaphore_v1_holders_key(e.name))) {
    e.kind = "semaphore";
    read_semaphore_holders(client, e);
    e.waiters = subscribers(client, semaphore_channel);
    return;
  }
  // Without holders a semaphore's key and a latch's key look the same.
  e.kind = "semaphore_or_latch";
  e.waiters =
      subscribers(client, semaphore_channel) + subscribers(client, sync::latch_channel(e.name));
}

void read_string_entry(Client& client, Entry& e) {
  const Value v = client.command("GET", e.name);
  const std::string text = v.is_string() ? v.as_string() : "";
  if (is_token(text)) {
    e.kind = "simple_lock";
    e.holders.push_back({text, 1, ""});
    e.waiters = subscribers(client, sync::simple_lock_channel(e.name));
  } else if (const auto n = to_int(text)) {
    read_counter(client, e, *n);
  } else {
    e.kind = "other";
  }
}

}  // namespace

Entry inspect_name(Client& client, const std::string& name) {
  Entry e;
  e.name = name;
  const std::string type = client.command("TYPE", name).as_string();
  if (type == "hash") {
    read_hash_entry(client, e);
  } else if (type == "string") {
    read_string_entry(client, e);
  } else if (type != "none") {
    e.kind = "other";
  }
  if (type != "none") {
    const auto ttl = client.command("PTTL", name).as_integer();
    if (ttl != -2) e.ttl_ms = ttl;
  }
  if (e.kind.ends_with("lock")) {
    const Value counter = client.command("GET", sync::fencing_counter_key(name));
    if (counter.is_string()) e.fencing_counter = to_int(counter.as_string());
  }
  return e;
}

std::optional<Entry> inspect_key(Client& client, const std::string& key) {
  if (sync::is_auxiliary_key(key)) return std::nullopt;
  Entry e = inspect_name(client, key);
  if (e.kind == "none" || e.kind == "other") return std::nullopt;
  return e;
}

namespace {

void scan_into(Client& client, const std::string& pattern, std::set<std::string>& keys) {
  std::string cursor = "0";
  do {
    const Value reply = client.command("SCAN", cursor, "MATCH", pattern, "COUNT", 1000);
    const auto& parts = reply.as_array();
    cursor = parts.at(0).as_string();
    for (const auto& k : parts.at(1).as_array()) keys.insert(k.as_string());
  } while (cursor != "0");
}

// host:port of every master that serves slots, from CLUSTER NODES lines
// "<id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch>
// <link> <slot>...".
std::vector<std::pair<std::string, std::uint16_t>> cluster_masters(Client& client) {
  std::vector<std::pair<std::string, std::uint16_t>> out;
  std::istringstream lines(client.command("CLUSTER", "NODES").as_string());
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> f;
    for (std::string w; words >> w;) f.push_back(w);
    if (f.size() < 9) continue;  // no slots
    const std::string& flags = f[2];
    if (flags.find("master") == std::string::npos || flags.find("fail") != std::string::npos ||
        flags.find("noaddr") != std::string::npos) {
      continue;
    }
    const std::string address = f[1].substr(0, f[1].find('@'));
    const auto colon = address.rfind(':');
    if (colon == std::string::npos) continue;
    std::string host = address.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    if (host.empty()) host = client.options().host;
    out.emplace_back(host, static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
  }
  return out;
}

}  // namespace

std::vector<std::string> KeyScanner::keys(const std::string& pattern) {
  std::set<std::string> keys;
  if (client_.options().deployment != ClientOptions::Deployment::cluster) {
    scan_into(client_, pattern, keys);
    return {keys.begin(), keys.end()};
  }
  for (const auto& [host, port] : cluster_masters(client_)) {
    const std::string id = host + ":" + std::to_string(port);
    auto node = nodes_.find(id);
    if (node == nodes_.end()) {
      ClientOptions o = client_.options();
      o.deployment = ClientOptions::Deployment::standalone;
      o.seeds.clear();
      o.host = host;
      o.port = port;
      node = nodes_.emplace(id, Client(std::move(o))).first;
    }
    scan_into(node->second, pattern, keys);
  }
  return {keys.begin(), keys.end()};
}

}  // namespace distlock::cli
