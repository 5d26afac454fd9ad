#include "script/script.hpp"

#include <openssl/sha.h>

#include <array>
#include <vector>

#include "distlock/error.hpp"

#include "net/connection.hpp"
#include "resp/encoder.hpp"

namespace distlock::script {
namespace {

void encode_call(std::string& out,
                 std::string_view verb,
                 std::string_view body,
                 std::span<const std::string_view> keys,
                 std::span<const std::string_view> args) {
  const std::string numkeys = std::to_string(keys.size());
  std::vector<std::string_view> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.push_back(verb);
  argv.push_back(body);
  argv.push_back(numkeys);
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  resp::encode_command(out, argv);
}

}  // namespace

Script make_script(std::string_view name, std::string_view source) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(source.data()), source.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * SHA_DIGEST_LENGTH);
  for (unsigned char b : digest) {
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 0xf]);
  }
  return Script{name, source, std::move(hex)};
}

void encode_evalsha(std::string& out,
                    const Script& s,
                    std::span<const std::string_view> keys,
                    std::span<const std::string_view> args) {
  encode_call(out, "EVALSHA", s.sha1, keys, args);
}

void encode_eval(std::string& out,
                 const Script& s,
                 std::span<const std::string_view> keys,
                 std::span<const std::string_view> args) {
  encode_call(out, "EVAL", s.source, keys, args);
}

bool is_noscript(const Value& reply) {
  return reply.is_error() && reply.as_string().rfind("NOSCRIPT", 0) == 0;
}

std::error_code ScriptCall::start() {
  std::string payload;
  encode_evalsha(payload, script_, keys_, args_);
  if (since_) return connection_->submit(std::move(payload), 1, this, *since_);
  return connection_->submit(std::move(payload), 1, this);
}

void ScriptCall::send(bool eval) {
  eval_ = eval;
  std::string payload;
  if (asking_) resp::encode_command(payload, std::array<std::string_view, 1>{"ASKING"});
  if (eval) {
    encode_eval(payload, script_, keys_, args_);
  } else {
    encode_evalsha(payload, script_, keys_, args_);
  }
  if (auto e = connection_->submit(std::move(payload), asking_ ? 2 : 1, this)) finish(e, {});
}

bool ScriptCall::redirected(const Value& reply) {
  if (!router_ || !reply.is_error()) return false;
  auto to = router_->resend(reply, route_key_, redirects_, waited_);
  if (!to) return false;
  if (to->redirection) ++redirects_;
  resent_ = true;
  connection_ = to->connection;
  asking_ = to->asking;
  const bool eval = eval_;
  if (to->delay.count() <= 0) {
    send(eval);
  } else {
    waited_ += to->delay;
    router_->after(to->delay, [this, eval](bool ok) {
      if (ok) return send(eval);
      finish(errc::closed, {});
    });
  }
  return true;
}

void ScriptCall::complete(std::error_code ec, Value reply) {
  if (asking_ && !ec && reply.is_array()) {
    // ASKING's OK, then the call's own reply.
    auto parts = std::move(reply.as_array());
    reply = parts.size() == 2 ? std::move(parts[1]) : Value::error("ERR no reply after ASKING");
  }
  if (ec) return finish(ec, std::move(reply));
  if (redirected(reply)) return;
  if (!retried_ && is_noscript(reply)) {
    retried_ = true;
    return send(true);
  }
  finish(ec, std::move(reply));
}

void ScriptCall::finish(std::error_code ec, Value reply) {
  if (watcher_) watcher_->call_finished();
  next_->complete(ec, std::move(reply));
}

}  // namespace distlock::script
