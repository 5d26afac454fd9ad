#include "support/tls_material.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "support/process.hpp"

namespace distlock::test {
namespace {

constexpr std::chrono::seconds kOpensslBound{30};

void openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  run_capture(argv, kOpensslBound);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

void make_key(const std::string& path) {
  openssl({"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path});
}

// Writes <dir>/<name>.{key,csr,ext,crt}; the certificate is signed by the CA,
// or self-signed when ca_name is empty.
void make_cert(const std::string& dir,
               const std::string& name,
               const std::string& subject,
               const std::string& extensions,
               const std::string& ca_name,
               int serial) {
  const std::string base = dir + "/" + name;
  make_key(base + ".key");
  openssl({"req", "-new", "-key", base + ".key", "-subj", subject, "-out", base + ".csr"});
  write_file(base + ".ext", extensions);
  std::vector<std::string> args{
      "x509",        "-req",    "-in",         base + ".csr",          "-days",
      "1",           "-sha256", "-set_serial", std::to_string(serial), "-extfile",
      base + ".ext", "-out",    base + ".crt"};
  if (ca_name.empty()) {
    args.insert(args.end(), {"-signkey", base + ".key"});
  } else {
    const std::string ca = dir + "/" + ca_name;
    args.insert(args.end(), {"-CA", ca + ".crt", "-CAkey", ca + ".key"});
  }
  openssl(args);
}

TlsMaterial generate(const std::string& dir) {
  make_cert(dir, "ca", "/CN=distlock test CA",
            "basicConstraints=critical,CA:TRUE\n"
            "keyUsage=critical,keyCertSign,cRLSign\n"
            "subjectKeyIdentifier=hash\n",
            "", 1);
  make_cert(dir, "server", "/CN=localhost",
            "basicConstraints=CA:FALSE\n"
            "keyUsage=critical,digitalSignature,keyEncipherment\n"
            "extendedKeyUsage=serverAuth\n"
            "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
            "authorityKeyIdentifier=keyid\n",
            "ca", 2);
  make_cert(dir, "client", "/CN=distlock-test-client",
            "basicConstraints=CA:FALSE\n"
            "keyUsage=critical,digitalSignature,keyEncipherment\n"
            "extendedKeyUsage=clientAuth\n"
            "authorityKeyIdentifier=keyid\n",
            "ca", 3);
  TlsMaterial m;
  m.dir = dir;
  m.ca_cert = dir + "/ca.crt";
  m.ca_key = dir + "/ca.key";
  m.server_cert = dir + "/server.crt";
  m.server_key = dir + "/server.key";
  m.client_cert = dir + "/client.crt";
  m.client_key = dir + "/client.key";
  return m;
}

// Owns the directory: removes it when the process exits, or when generation
// fails part-way.
class TlsMaterialOwner {
 public:
  TlsMaterialOwner() {
    const std::string dir = make_temp_dir("distlock-tls-");
    try {
      material_ = generate(dir);
    } catch (...) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
      throw;
    }
  }
  ~TlsMaterialOwner() {
    std::error_code ignored;
    std::filesystem::remove_all(material_.dir, ignored);
  }
  TlsMaterialOwner(const TlsMaterialOwner&) = delete;
  TlsMaterialOwner& operator=(const TlsMaterialOwner&) = delete;

  const TlsMaterial& material() const { return material_; }

 private:
  TlsMaterial material_;
};

}  // namespace

const TlsMaterial& tls_material() {
  static const TlsMaterialOwner owner;
  return owner.material();
}

}  // namespace distlock::test
