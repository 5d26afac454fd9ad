#include "distlock/error.hpp"

namespace distlock {
namespace {

class Category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "distlock"; }

  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::invalid_argument:
        return "invalid argument";
      case errc::connection_failed:
        return "connection failed";
      case errc::connection_lost:
        return "connection lost";
      case errc::timeout:
        return "timed out";
      case errc::auth_failed:
        return "authentication failed";
      case errc::server_error:
        return "server error";
      case errc::protocol_error:
        return "protocol error";
      case errc::not_owner:
        return "not the owner of the lock";
      case errc::lease_lost:
        return "lease lost";
      case errc::closed:
        return "client closed";
      case errc::queue_full:
        return "command queue full";
      case errc::cancelled:
        return "operation cancelled";
      case errc::replication_failed:
        return "too few replicas acknowledged";
      case errc::not_supported:
        return "not supported by this backend";
    }
    return "unknown distlock error";
  }
};

}  // namespace

const std::error_category& error_category() noexcept {
  static const Category category;
  return category;
}

std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), error_category()};
}

Error::Error(errc code) : std::system_error(make_error_code(code)) {}
Error::Error(errc code, const std::string& what) : std::system_error(make_error_code(code), what) {}
Error::Error(std::error_code code, const std::string& what) : std::system_error(code, what) {}

}  // namespace distlock
