#include <charconv>

#include "backend/sql_connection.hpp"

namespace distlock::backend::sql {

std::optional<std::int64_t> Result::integer() const {
  if (!value) return std::nullopt;
  if (*value == "t") return 1;  // PostgreSQL's booleans, in text form
  if (*value == "f") return 0;
  std::int64_t n = 0;
  const char* end = value->data() + value->size();
  auto [at, err] = std::from_chars(value->data(), end, n);
  if (err != std::errc() || at != end) return std::nullopt;
  return n;
}

}  // namespace distlock::backend::sql
