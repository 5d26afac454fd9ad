#include "sync/release_call.hpp"

#include "distlock/error.hpp"

namespace distlock::sync {

ReleaseCall::ReleaseCall(const Holding& state, std::uint32_t expected, net::Completion* next)
    : state_(state), expected_(std::to_string(expected)), next_(next) {
  state.primitive->release_args(state, expected_, args_);
}

std::error_code ReleaseCall::start(topology::Topology& topology) {
  const Primitive& p = *state_.primitive;
  return topology.call(call_, p.route_key(), p.release_script(), args_.key_span(), args_.arg_span(),
                       this);
}

void ReleaseCall::complete(std::error_code ec, Value reply) {
  // Every caller reads the reply as release.lua's (the primitive maps its own).
  next_->complete(ec, state_.primitive->release_reply(std::move(reply)));
}

ReleaseResult release_result(const Value& reply, std::error_code& ec) {
  if (reply.is_error()) {
    ec = errc::server_error;
    return ReleaseResult::not_held;
  }
  if (!reply.is_integer()) {
    ec = errc::protocol_error;
    return ReleaseResult::not_held;
  }
  switch (reply.as_integer()) {
    case 0:
      return ReleaseResult::decremented;
    case 1:
      return ReleaseResult::released;
    case 2:
      return ReleaseResult::mismatch;
    default:
      return ReleaseResult::not_held;
  }
}

}  // namespace distlock::sync
