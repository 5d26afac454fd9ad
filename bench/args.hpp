// Command-line arguments of the benchmark programs in bench/.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace distlock_bench {

// "--name value" pairs after an optional subcommand. Unknown names are kept;
// each program checks what it needs.
class Args {
 public:
  Args(int argc, char** argv, int first);
  bool has(std::string_view name) const;
  std::string str(std::string_view name, std::string fallback) const;
  std::int64_t num(std::string_view name, std::int64_t fallback) const;
  double real(std::string_view name, double fallback) const;
  // A comma-separated list of integers, e.g. "1,16,64".
  std::vector<int> ints(std::string_view name, std::vector<int> fallback) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

}  // namespace distlock_bench
