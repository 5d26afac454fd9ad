#include "topology/routed_command.hpp"

#include <array>
#include <memory>

#include "distlock/error.hpp"
#include "resp/encoder.hpp"

namespace distlock::topology {

RoutedCommand::RoutedCommand(net::Router& router,
                             std::string route_key,
                             std::span<const std::string_view> args,
                             net::Completion* next)
    : router_(router),
      route_key_(std::move(route_key)),
      args_(args.begin(), args.end()),
      next_(next) {}

std::error_code RoutedCommand::send(net::Connection& connection) {
  std::string payload;
  if (asking_) resp::encode_command(payload, std::array<std::string_view, 1>{"ASKING"});
  std::vector<std::string_view> views(args_.begin(), args_.end());
  resp::encode_command(payload, views);
  return connection.submit(std::move(payload), asking_ ? 2 : 1, this);
}

void RoutedCommand::complete(std::error_code ec, Value reply) {
  if (asking_ && !ec && reply.is_array()) {
    auto parts = std::move(reply.as_array());
    reply = parts.size() == 2 ? std::move(parts[1]) : Value::error("ERR no reply after ASKING");
  }
  if (!ec && reply.is_error()) {
    if (auto to = router_.resend(reply, route_key_, redirects_, waited_)) {
      if (to->redirection) ++redirects_;
      asking_ = to->asking;
      if (to->delay.count() <= 0) return resend(*to->connection);
      waited_ += to->delay;
      auto* c = to->connection;
      return router_.after(to->delay, [this, c](bool ok) {
        if (!ok) return finish(errc::closed, {});
        resend(*c);
      });
    }
  }
  finish(ec, std::move(reply));
}

void RoutedCommand::resend(net::Connection& c) {
  if (auto e = send(c)) finish(e, {});
}

void RoutedCommand::finish(std::error_code ec, Value reply) {
  std::unique_ptr<RoutedCommand> self(this);
  next_->complete(ec, std::move(reply));
}

}  // namespace distlock::topology
