// Keeps docs/architecture.md a true map of the code: every repository path
// it names in backticks exists, and the layers below src/'s top level never
// include the Client's implementation header (they see the Client only
// through sync::Services).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = DISTLOCK_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Backticked tokens that name a file of the repository: they start with one
// of its top-level folders and end in a file name with an extension.
std::vector<std::string> named_paths(const std::string& doc) {
  static const std::regex path(
      R"(`((?:src|include|tests|docs|tools|bench|cmake|examples|scripts)/[A-Za-z0-9_./-]+\.[a-z]+)`)");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), path); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

TEST(ArchitectureDoc, EveryPathItNamesExists) {
  const std::string doc = read(kRoot / "docs" / "architecture.md");
  ASSERT_FALSE(doc.empty()) << "docs/architecture.md is missing";
  const auto paths = named_paths(doc);
  EXPECT_GE(paths.size(), 20u) << "the map names too few files to be read by this test";
  for (const auto& p : paths) EXPECT_TRUE(fs::exists(kRoot / p)) << p << " is named but missing";
}

TEST(ArchitectureDoc, NoLayerBelowTheTopOfSrcIncludesTheClientImplementation) {
  for (const char* layer : {"net", "resp", "runtime", "script", "sync", "topology"}) {
    for (const auto& e : fs::recursive_directory_iterator(kRoot / "src" / layer)) {
      if (!e.is_regular_file()) continue;
      const std::string text = read(e.path());
      EXPECT_EQ(text.find("client_impl.hpp"), std::string::npos)
          << e.path().lexically_relative(kRoot) << " includes client_impl.hpp";
    }
  }
}

}  // namespace
