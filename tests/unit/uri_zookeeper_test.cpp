// The ZooKeeper backend's options: net::zk_path_problem (the chroot check).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/zk_path.hpp"

namespace distlock {
namespace {

TEST(ZooKeeperPath, AcceptsAbsolutePathsOfNodesBelowTheRoot) {
  for (const char* path : {"/a", "/a/b/c", "/zookeeperx", "/zoo/zookeeper", "/.a/..b/a./...",
                           "/a b/\xc3\xb6l", "/Zookeeper"}) {
    EXPECT_EQ(net::zk_path_problem(path), std::nullopt) << path;
  }
}

TEST(ZooKeeperPath, NamesWhatIsWrongWithEveryOtherPath) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "is empty"},
      {"a/b", "does not start with '/'"},
      {"/", "is the root '/', not a node below it"},
      {"/a/", "ends with '/'"},
      {"//", "ends with '/'"},
      {"//a", "has an empty segment ('//')"},
      {"/a//b", "has an empty segment ('//')"},
      {"/.", "has a '.' or '..' segment"},
      {"/..", "has a '.' or '..' segment"},
      {"/a/./b", "has a '.' or '..' segment"},
      {"/a/..", "has a '.' or '..' segment"},
      {std::string("/a\0b", 4), "contains a NUL or control character"},
      {"/a\x01", "contains a NUL or control character"},
      {"/a\x1f/b", "contains a NUL or control character"},
      {"/a\x7f", "contains a NUL or control character"},
      {"/zookeeper", "is /zookeeper or under it, which ZooKeeper reserves for itself"},
      {"/zookeeper/config", "is /zookeeper or under it, which ZooKeeper reserves for itself"},
  };
  for (const auto& [path, problem] : bad) {
    EXPECT_EQ(net::zk_path_problem(path), problem) << "path of " << path.size() << " bytes";
  }
}

}  // namespace
}  // namespace distlock
