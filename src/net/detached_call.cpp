#include "net/detached_call.hpp"

namespace distlock::net {

DetachedCall::DetachedCall(Done done, std::vector<std::string> strings)
    : done_(std::move(done)), strings_(std::move(strings)) {
  views_.reserve(strings_.size());
  for (const auto& s : strings_) views_.emplace_back(s);
}

void DetachedCall::complete(std::error_code ec, Value reply) {
  Done done = std::move(done_);
  delete this;
  if (done) done(ec, std::move(reply));
}

}  // namespace distlock::net
