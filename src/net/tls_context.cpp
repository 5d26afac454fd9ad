#include "net/tls_context.hpp"

#include <asio/ssl/context.hpp>
#include <string>
#include <system_error>

#include "distlock/error.hpp"

namespace distlock::net {

std::unique_ptr<asio::ssl::context> make_tls_context(const TlsOptions& t) {
  if (!t.enabled) return nullptr;
  auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  auto load = [](const char* what, const std::string& path, auto&& f) {
    std::error_code ec;
    f(ec);
    if (ec) {
      throw Error(errc::invalid_argument,
                  std::string("cannot load TLS ") + what + " '" + path + "': " + ec.message());
    }
  };
  if (!t.ca_file.empty())
    load("CA file", t.ca_file, [&](auto& ec) { ctx->load_verify_file(t.ca_file, ec); });
  if (!t.ca_dir.empty())
    load("CA dir", t.ca_dir, [&](auto& ec) { ctx->add_verify_path(t.ca_dir, ec); });
  if (t.ca_file.empty() && t.ca_dir.empty()) {
    std::error_code ignored;
    ctx->set_default_verify_paths(ignored);
  }
  if (!t.cert_file.empty()) {
    load("certificate", t.cert_file,
         [&](auto& ec) { ctx->use_certificate_chain_file(t.cert_file, ec); });
  }
  if (!t.key_file.empty()) {
    load("key", t.key_file,
         [&](auto& ec) { ctx->use_private_key_file(t.key_file, asio::ssl::context::pem, ec); });
  }
  return ctx;
}

}  // namespace distlock::net
