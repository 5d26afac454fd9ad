// The TLS client context a Client's connections share, built from its
// TlsOptions.
#pragma once

#include <memory>

#include "distlock/client_options.hpp"

namespace asio::ssl {
class context;
}  // namespace asio::ssl

namespace distlock::net {

// Null when TLS is off. Otherwise a TLS client context that trusts ca_file
// and ca_dir (or the system's default store when both are empty) and presents
// cert_file / key_file when set. Throws Error with errc::invalid_argument
// naming the file that cannot be loaded. Peer verification and SNI are set
// per connection, not here.
std::unique_ptr<asio::ssl::context> make_tls_context(const TlsOptions& tls);

}  // namespace distlock::net
