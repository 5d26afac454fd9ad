// RESP2 command encoding.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace distlock::resp {

// Appends one command to out as a RESP2 array of bulk strings:
// `*<N>\r\n` then `$<len>\r\n<arg>\r\n` for every argument. Arguments are
// binary-safe (they may be empty or contain NUL, CR and LF). The bytes are
// identical to what hiredis' redisFormatCommandArgv produces. out is grown at
// most once; its existing contents are kept. An empty args gives `*0\r\n`,
// which a Redis server ignores (the caller should not send it).
// Throws std::length_error / std::bad_alloc only if out cannot grow.
void encode_command(std::string& out, std::span<const std::string_view> args);
void encode_command(std::string& out, std::initializer_list<std::string_view> args);

// The number of bytes encode_command appends for args.
std::size_t encoded_size(std::span<const std::string_view> args) noexcept;

}  // namespace distlock::resp
