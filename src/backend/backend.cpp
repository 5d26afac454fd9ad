#include "backend/backend.hpp"

#include "backend/sql_lock.hpp"
#include "backend/zk_lock.hpp"
#include "distlock/error.hpp"

namespace distlock::backend {

std::unique_ptr<Backend> make_backend(const ClientOptions& options,
                                      runtime::Executor& executor,
                                      const std::string& client_id) {
  if (options.backend == ClientOptions::Backend::zookeeper) {
    return zk::make_zookeeper(options, executor, client_id);
  }
  if (options.backend == ClientOptions::Backend::mysql ||
      options.backend == ClientOptions::Backend::postgresql) {
    return sql::make_sql(options, executor, client_id);
  }
  throw Error(errc::invalid_argument, "ClientOptions: unknown backend " +
                                          std::to_string(static_cast<int>(options.backend)));
}

}  // namespace distlock::backend
