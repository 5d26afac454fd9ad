// The batch scripts of coalescing (script/batch.hpp): which scripts batch in
// which class, and how their sources are wrapped. The batch's behaviour on a
// server is proven in tests/integration/coalescing_test.cpp.
#include "script/batch.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "script/scripts.hpp"

namespace distlock::script {
namespace {

TEST(BatchScript, ReleasesBatchAsAllowOomAndAcquiresAsPlainAndRenewNever) {
  EXPECT_EQ(batch_info(scripts().release).cls, BatchClass::allow_oom);
  EXPECT_EQ(batch_info(scripts().simple_release).cls, BatchClass::allow_oom);
  EXPECT_EQ(batch_info(scripts().acquire).cls, BatchClass::plain);
  EXPECT_EQ(batch_info(scripts().rate_limiter_acquire).cls, BatchClass::plain);
  EXPECT_EQ(batch_info(scripts().renew).cls, BatchClass::none) << "renew.lua is a batch already";
  const Script other = make_script("other", "return 1");
  EXPECT_EQ(batch_info(other).cls, BatchClass::none) << "only the library's own scripts";
}

TEST(BatchScript, EachClassNumbersItsMembersFromOneWithoutGaps) {
  std::vector<int> seen(3, 0);
  for (const Script* s : all_scripts()) {
    const BatchInfo info = batch_info(*s);
    if (info.cls == BatchClass::none) continue;
    const auto c = static_cast<std::size_t>(info.cls);
    EXPECT_EQ(info.index, seen[c] + 1) << s->name;
    seen[c] = info.index;
    EXPECT_NE(batch_script(info.cls).source.find("f[" + std::to_string(info.index) + "] = "),
              std::string_view::npos)
        << s->name;
  }
  EXPECT_GT(seen[1], 0);
  EXPECT_GT(seen[2], 0);
}

TEST(BatchScript, AllowOomBatchKeepsTheFlagsLineFirstAndNoOtherShebang) {
  const std::string_view oom = batch_script(BatchClass::allow_oom).source;
  EXPECT_TRUE(oom.starts_with("#!lua flags=allow-oom\n"));
  EXPECT_EQ(oom.find("#!", 1), std::string_view::npos) << "members' shebangs are removed";
  const std::string_view plain = batch_script(BatchClass::plain).source;
  EXPECT_EQ(plain.find("#!"), std::string_view::npos);
  EXPECT_NE(batch_script(BatchClass::plain).sha1, batch_script(BatchClass::allow_oom).sha1);
}

TEST(BatchScript, WrapsEachMemberAsAFunctionOfItsOwnKeysAndArgv) {
  const std::vector<std::string_view> members{"return KEYS[1]", "return ARGV[1]"};
  const std::string s = batch_source(BatchClass::plain, members);
  EXPECT_NE(s.find("f[1] = function(KEYS, ARGV)\nreturn KEYS[1]\nend\n"), std::string::npos) << s;
  EXPECT_NE(s.find("f[2] = function(KEYS, ARGV)\nreturn ARGV[1]\nend\n"), std::string::npos) << s;
  EXPECT_NE(s.find("pcall("), std::string::npos) << "each operation under its own pcall";
}

}  // namespace
}  // namespace distlock::script
