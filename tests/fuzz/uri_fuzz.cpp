// libFuzzer target for ClientOptions::from_uri.
//
// For every input, from_uri must either return or throw distlock::Error with
// errc::invalid_argument and a message; anything else aborts. When the input
// has a password we can identify without parsing like the parser does (see
// known_credentials), an error message must not contain it, and a successful
// parse must return exactly that user and password. "Contain" means: more
// often than the message for the same URI with another password of the same
// length and character classes, so a password that happens to be a piece of
// the message's fixed text ("rgumen" in "invalid argument") is no finding.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include "distlock/client_options.hpp"
#include "distlock/error.hpp"

namespace {

struct Credentials {
  std::string_view user;
  std::string_view password;
  std::size_t password_at = 0;  // offset of the password in the URI
};

bool is_alnum(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

// Recognises only `redis://USER:PW@...`, `rediss://USER:PW@...`,
// `zookeeper://USER:PW@...`, and the same after mysql://, mariadb://,
// postgresql:// and postgres://, where USER is alnum (possibly empty, which a
// zookeeper:// URI refuses: digest authentication needs a user), PW is alnum
// of at least 6 characters, and that '@' is the last one of the authority
// (RFC 3986: the authority ends at the first '/' or '?', its userinfo at its
// last '@'). Nothing in USER or PW needs percent-decoding, so the password is
// exactly PW. Returns nullopt otherwise.
std::optional<Credentials> known_credentials(std::string_view uri) {
  std::string_view rest;
  for (const std::string_view scheme : {"redis://", "rediss://", "zookeeper://", "mysql://",
                                        "mariadb://", "postgresql://", "postgres://"}) {
    if (uri.starts_with(scheme)) rest = uri.substr(scheme.size());
  }
  const std::size_t authority_end = std::min(rest.find_first_of("/?"), rest.size());
  const std::string_view authority = rest.substr(0, authority_end);
  const std::size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view userinfo = authority.substr(0, at);
  const std::size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const Credentials found{userinfo.substr(0, colon), userinfo.substr(colon + 1),
                          static_cast<std::size_t>(userinfo.data() - uri.data()) + colon + 1};
  if (!is_alnum(found.user) || found.password.size() < 6 || !is_alnum(found.password)) {
    return std::nullopt;
  }
  return found;
}

std::size_t occurrences(std::string_view text, std::string_view part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string_view::npos;
       at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

// The same URI with every character of the password replaced by another of
// its class (digit by digit, letter by letter), so it parses the same way.
std::string with_other_password(std::string_view uri, const Credentials& credentials) {
  std::string other(uri);
  for (std::size_t i = 0; i < credentials.password.size(); ++i) {
    char& c = other[credentials.password_at + i];
    const bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    c = digit ? (c == '7' ? '3' : '7') : (c == 'q' ? 'z' : 'q');
  }
  return other;
}

std::string message_of(std::string_view uri) {
  try {
    (void)distlock::ClientOptions::from_uri(uri);
  } catch (const distlock::Error& e) {
    return e.what();
  }
  return {};
}

[[noreturn]] void die(std::string_view uri, const char* what, const std::string& detail) {
  std::fprintf(stderr, "uri_fuzz: %s\n  uri: '%.*s'\n  %s\n", what, static_cast<int>(uri.size()),
               uri.data(), detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view uri(reinterpret_cast<const char*>(data), size);
  const std::optional<Credentials> credentials = known_credentials(uri);
  try {
    const distlock::ClientOptions options = distlock::ClientOptions::from_uri(uri);
    if (credentials &&
        (options.username != credentials->user || options.password != credentials->password)) {
      die(uri, "parsed credentials differ from the URI's",
          "user '" + options.username + "', password '" + options.password + "'");
    }
  } catch (const distlock::Error& e) {
    const std::string message = e.what();
    if (e.code() != distlock::make_error_code(distlock::errc::invalid_argument)) {
      die(uri, "from_uri threw an Error other than invalid_argument", message);
    }
    if (message.empty()) die(uri, "from_uri threw an Error without a message", message);
    if (credentials && occurrences(message, credentials->password) >
                           occurrences(message_of(with_other_password(uri, *credentials)),
                                       credentials->password)) {
      die(uri, "the error message contains the password", message);
    }
  } catch (const std::exception& e) {
    die(uri, "from_uri threw something other than distlock::Error", e.what());
  } catch (...) {
    die(uri, "from_uri threw something other than std::exception", "");
  }
  return 0;
}
