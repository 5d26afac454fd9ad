// The Cluster and Sentinel URI rows of the bad-input table
// (docs/reliability.md, issue 13 item 1): malformed URIs are rejected by
// ClientOptions::from_uri, and a well-formed Cluster one by the Client,
// which does not serve it yet; a Sentinel deployment without a master name
// by the Client — each a clear Error, nothing sent.
#include <string>

#include "integration/bad_input.hpp"

namespace distlock::bad_input {
namespace {

Check parsing_uri(std::string uri) {
  return [uri](Env&) { return code_of([&] { ClientOptions::from_uri(uri); }); };
}

CheckMap topology_checks() {
  return {
      {"from_uri.cluster_no_hosts", parsing_uri("redis-cluster://")},
      {"from_uri.cluster_duplicate_host",
       parsing_uri("redis-cluster://127.0.0.1:7000,127.0.0.1:7000")},
      {"from_uri.cluster_db", parsing_uri("redis-cluster://127.0.0.1:7000/1")},
      {"from_uri.sentinel_no_master", parsing_uri("redis-sentinel://127.0.0.1:26379")},
      {"options.sentinel_no_master_name", constructing([](ClientOptions& o) {
         o.deployment = ClientOptions::Deployment::sentinel;
         o.seeds = {{o.host, o.port}};
         o.sentinel_master.clear();
       })},
      {"from_uri.sentinel_no_hosts", parsing_uri("redis-sentinel:///mymaster")},
      {"options.cluster_not_supported", constructing([](ClientOptions& o) {
         o.deployment = ClientOptions::Deployment::cluster;
         o.seeds = {{o.host, o.port}};
       })},
  };
}

const bool registered = register_checks(&topology_checks);

}  // namespace
}  // namespace distlock::bad_input
