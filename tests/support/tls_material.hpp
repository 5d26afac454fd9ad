// Certificates and keys for TLS tests, made once per test process.
#pragma once

#include <string>

namespace distlock::test {

// Absolute paths of PEM files in dir. All keys are EC P-256 and all
// certificates are valid for one day from generation.
struct TlsMaterial {
  std::string dir;
  // Self-signed CA ("distlock test CA").
  std::string ca_cert;
  std::string ca_key;
  // Signed by the CA; CN=localhost, subjectAltName DNS:localhost and
  // IP:127.0.0.1, extendedKeyUsage serverAuth.
  std::string server_cert;
  std::string server_key;
  // Signed by the CA; CN=distlock-test-client, extendedKeyUsage clientAuth.
  std::string client_cert;
  std::string client_key;
};

// Generates the material on the first call (with the openssl command-line
// tool, into a fresh /tmp/distlock-tls-XXXXXX directory) and returns the same
// object on every later call. Thread-safe. The directory is removed when the
// process exits normally. Throws std::runtime_error with openssl's output if
// generation fails; a later call then tries again.
const TlsMaterial& tls_material();

}  // namespace distlock::test
