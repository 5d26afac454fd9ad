// What is wrong with a ZooKeeper path, if anything: the one check of the
// chroot of a zookeeper:// URI (net/uri_parser.cpp), of ClientOptions::chroot
// (validate() in client_options.cpp) and of any other absolute path the
// ZooKeeper backend builds. No I/O.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace distlock::net {

// The path of a znode below the root, as ZooKeeper accepts it: starts with
// '/', does not end with '/', has no empty segment ("//"), no "." or ".."
// segment, no NUL or other control character (below 0x20, or 0x7f), and is
// neither /zookeeper nor under it (ZooKeeper's own tree). Returns nullopt for
// such a path; otherwise what is wrong, phrased to follow the path's name in
// a message ("chroot '/a//b' " + "has an empty segment ('//')"). The problem
// never repeats the path, so a caller decides how to show it. The root "/"
// itself is refused: no lock or chroot is the root (an empty chroot is).
inline std::optional<std::string> zk_path_problem(std::string_view path) {
  if (path.empty()) return "is empty";
  if (path.front() != '/') return "does not start with '/'";
  if (path == "/") return "is the root '/', not a node below it";
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return "contains a NUL or control character";
  }
  if (path.back() == '/') return "ends with '/'";
  // Every segment lies between a '/' and the next '/' or the end.
  for (std::size_t start = 1; start <= path.size();) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    const std::string_view segment = path.substr(start, end - start);
    if (segment.empty()) return "has an empty segment ('//')";
    if (segment == "." || segment == "..") return "has a '.' or '..' segment";
    start = end + 1;
  }
  constexpr std::string_view kReserved = "/zookeeper";
  if (path.starts_with(kReserved) &&
      (path.size() == kReserved.size() || path[kReserved.size()] == '/')) {
    return "is /zookeeper or under it, which ZooKeeper reserves for itself";
  }
  return std::nullopt;
}

}  // namespace distlock::net
