// The script list is generated from src/script/lua/*.lua at build time
// (cmake/embed_lua.cmake): every Lua file is a Scripts member named after it,
// embedded byte for byte and preloaded on every data connection.
#include "script/scripts.hpp"

#include "script/batch.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace distlock::script {
namespace {

// This source file's directory. __FILE__ is relative to the build directory
// when the compiler was given a relative path; the test binary sits in its
// tests/ folder.
std::filesystem::path source_dir() {
  std::filesystem::path file(__FILE__);
  if (file.is_relative()) {
    file = std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / file;
  }
  return file.parent_path();
}

// Each Lua file's name (without .lua) -> its text, read from the source tree.
std::map<std::string, std::string> lua_files() {
  const auto dir = source_dir() / ".." / ".." / "src" / "script" / "lua";
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".lua") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    files[entry.path().stem().string()] = text.str();
  }
  return files;
}

TEST(Scripts, EveryLuaFileIsOneScriptNamedAfterItWithItsExactText) {
  const auto files = lua_files();
  ASSERT_FALSE(files.empty()) << "src/script/lua not found from " << __FILE__;
  std::map<std::string, std::string> listed;
  for (const Script* s : all_scripts()) {
    EXPECT_TRUE(listed.emplace(std::string(s->name), std::string(s->source)).second)
        << "listed twice: " << s->name;
    EXPECT_EQ(s->sha1.size(), 40u) << s->name;
  }
  EXPECT_EQ(listed, files);
}

TEST(Scripts, EachMemberIsTheScriptOfItsName) {
  EXPECT_EQ(scripts().acquire.name, "acquire");
  EXPECT_EQ(scripts().renew.name, "renew");
  EXPECT_EQ(scripts().fair_release.name, "fair_release");
  EXPECT_EQ(scripts().semaphore_admin.name, "semaphore_admin");
}

TEST(Scripts, EveryScriptIsPreloadedBySourceWithScriptLoad) {
  const auto commands = preload_commands();
  const auto all = all_scripts();
  ASSERT_EQ(commands.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(commands[i].size(), 3u);
    EXPECT_EQ(commands[i][0], "SCRIPT");
    EXPECT_EQ(commands[i][1], "LOAD");
    EXPECT_EQ(commands[i][2], all[i]->source) << all[i]->name;
  }
}

// Sharded pub/sub swaps a script for its twin and changes nothing else, so
// the twin must be the script with every publish made spublish: the same
// text otherwise, under its own SHA1, and batched as a member of its own.
TEST(Scripts, EachPublishingScriptHasATwinThatSpublishesAndDiffersInNothingElse) {
  std::size_t publishing = 0;
  for (const Script* s : all_scripts()) {
    SCOPED_TRACE(std::string(s->name));
    const Script& twin = sharded_twin(*s);
    if (s->source.find("redis.call('publish',") == std::string_view::npos) {
      EXPECT_EQ(&twin, s) << "a script that publishes nothing is its own twin";
      continue;
    }
    ++publishing;
    EXPECT_NE(twin.sha1, s->sha1);
    EXPECT_EQ(twin.name, std::string(s->name) + "_sharded");
    EXPECT_EQ(twin.source.find("redis.call('publish',"), std::string_view::npos);
    std::string back(twin.source);
    for (auto at = back.find("'spublish'"); at != std::string::npos; at = back.find("'spublish'")) {
      back.replace(at, 10, "'publish'");
    }
    EXPECT_EQ(back, s->source);
    EXPECT_NE(batch_info(twin).cls, BatchClass::none);
    EXPECT_EQ(batch_info(twin).cls, batch_info(*s).cls);
    EXPECT_NE(batch_info(twin).index, batch_info(*s).index);
  }
  EXPECT_EQ(sharded_twins().size(), publishing);
  EXPECT_GE(publishing, 10u) << "every release publishes";
}

}  // namespace
}  // namespace distlock::script
