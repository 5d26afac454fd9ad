#include "runtime/executor.hpp"

#include "distlock/error.hpp"

namespace distlock::runtime {

bool Executor::may_block(std::error_code& ec) const {
  if (closed()) {
    ec = errc::closed;
    return false;
  }
  if (on_io_thread()) {
    ec = errc::invalid_argument;  // a blocking call here would wait for itself
    return false;
  }
  return true;
}

}  // namespace distlock::runtime
