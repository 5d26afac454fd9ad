#include "resp/encoder.hpp"

#include <charconv>
#include <cstring>

namespace distlock::resp {
namespace {

std::size_t decimal_digits(std::size_t n) noexcept {
  std::size_t digits = 1;
  for (; n >= 10; n /= 10) ++digits;
  return digits;
}

// The size of `<prefix><n>\r\n`.
std::size_t header_size(std::size_t n) noexcept {
  return 1 + decimal_digits(n) + 2;
}

char* write_header(char* p, char prefix, std::size_t n) noexcept {
  *p++ = prefix;
  // 20 digits hold any size_t; the caller sized the buffer for exactly these.
  p = std::to_chars(p, p + 20, n).ptr;
  *p++ = '\r';
  *p++ = '\n';
  return p;
}

}  // namespace

std::size_t encoded_size(std::span<const std::string_view> args) noexcept {
  std::size_t size = header_size(args.size());
  for (const std::string_view arg : args) size += header_size(arg.size()) + arg.size() + 2;
  return size;
}

void encode_command(std::string& out, std::span<const std::string_view> args) {
  const std::size_t old_size = out.size();
  // One resize, then plain stores: no per-argument capacity checks or
  // reallocations on this path, which every command takes.
  out.resize(old_size + encoded_size(args));
  char* p = out.data() + old_size;
  p = write_header(p, '*', args.size());
  for (const std::string_view arg : args) {
    p = write_header(p, '$', arg.size());
    if (!arg.empty()) std::memcpy(p, arg.data(), arg.size());
    p += arg.size();
    *p++ = '\r';
    *p++ = '\n';
  }
}

void encode_command(std::string& out, std::initializer_list<std::string_view> args) {
  encode_command(out, std::span<const std::string_view>(args.begin(), args.size()));
}

}  // namespace distlock::resp
