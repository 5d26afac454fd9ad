// DetachedCall: the Completion that owns itself (net/detached_call.hpp).
#include "net/detached_call.hpp"

#include <gtest/gtest.h>

#include "distlock/error.hpp"

namespace distlock::net {
namespace {

// Counts its destructions, and records whether its function had run by then.
class Counted final : public DetachedCall {
 public:
  Counted(int& destroyed, const bool& ran, Done done, std::vector<std::string> strings = {})
      : DetachedCall(std::move(done), std::move(strings)), destroyed_(destroyed), ran_(ran) {}
  ~Counted() override {
    ++destroyed_;
    ran_before_delete = ran_;
  }
  static inline bool ran_before_delete = false;

 private:
  int& destroyed_;
  const bool& ran_;
};

TEST(DetachedCall, AQueuedCallLivesUntilItsCompletionThenIsDeletedOnceBeforeItsFunctionRuns) {
  int destroyed = 0;
  bool ran = false;
  std::error_code got_ec;
  Value got;
  Completion* queued = nullptr;
  const auto ec =
      DetachedCall::start(std::make_unique<Counted>(destroyed, ran,
                                                    [&](std::error_code e, Value reply) {
                                                      ran = true;
                                                      got_ec = e;
                                                      got = std::move(reply);
                                                    }),
                          [&](DetachedCall& call) {
                            queued = &call;
                            return std::error_code();
                          });
  EXPECT_FALSE(ec);
  EXPECT_EQ(destroyed, 0) << "queued: it owns itself until the reply";
  queued->complete(errc::timeout, Value());
  EXPECT_EQ(destroyed, 1);
  EXPECT_FALSE(Counted::ran_before_delete) << "deleted before its function runs";
  EXPECT_TRUE(ran);
  EXPECT_EQ(got_ec, errc::timeout);
}

TEST(DetachedCall, ACallThatCouldNotBeQueuedIsDeletedAtOnceAndItsFunctionNeverRuns) {
  int destroyed = 0;
  bool ran = false;
  const auto ec = DetachedCall::start(
      std::make_unique<Counted>(destroyed, ran, [&](std::error_code, Value) { ran = true; }),
      [](DetachedCall&) { return make_error_code(errc::queue_full); });
  EXPECT_EQ(ec, errc::queue_full);
  EXPECT_EQ(destroyed, 1);
  EXPECT_FALSE(ran);
}

TEST(DetachedCall, ACallWithoutAFunctionCompletesAndIsDeleted) {
  int destroyed = 0;
  bool ran = false;
  Completion* queued = nullptr;
  DetachedCall::start(std::make_unique<Counted>(destroyed, ran, DetachedCall::Done()),
                      [&](DetachedCall& call) {
                        queued = &call;
                        return std::error_code();
                      });
  queued->complete({}, Value());
  EXPECT_EQ(destroyed, 1);
}

TEST(DetachedCall, ItsViewsViewTheStringsItOwnsInOrder) {
  int destroyed = 0;
  bool ran = false;
  std::vector<std::string> seen;
  DetachedCall::start(std::make_unique<Counted>(destroyed, ran, DetachedCall::Done(),
                                                std::vector<std::string>{"SET", "k", "v"}),
                      [&](DetachedCall& call) {
                        for (auto v : call.views()) seen.emplace_back(v);
                        return make_error_code(errc::closed);
                      });
  EXPECT_EQ(seen, (std::vector<std::string>{"SET", "k", "v"}));
}

}  // namespace
}  // namespace distlock::net
